"""Walk every URL as every kind of person, with GET and with POST, and check the status.

The Atlas type belongs to `owner` and is shared with `reviewer` and `viewer`; `other_owner`
owns another type and has no permission on Atlas, so for them Atlas does not exist (404).
`catalogue_manager` manages the shared source-class catalogue and holds no decision type;
`owner` has proposed a catalogue change, which only they and catalogue managers can see.
"""

from __future__ import annotations

import pytest
from django.urls import URLPattern, reverse

from contracts import services
from contracts.models import SourceClass, SourceClassProposal
from tests.scenarios.test_scenarios_permissions import ROUTES as SCENARIO_ROUTES
from workbench.production_urls import urlpatterns as production_urlpatterns
from workbench.urls import urlpatterns

pytestmark = pytest.mark.django_db


@pytest.fixture
def proposal(catalogue, owner):
    note = catalogue["case_note"]
    return services.source_class_propose(
        actor=owner,
        source_class=note,
        **(note.field_values() | {"weak": False}),
        reason="Case notes are reviewed now",
    )


PEOPLE = [
    "anonymous",
    "viewer",
    "reviewer",
    "owner",
    "other_owner",
    "catalogue_manager",
    "superuser",
]
EDITORS = {"owner", "superuser"}
CAN_SEE_ATLAS = {"viewer", "reviewer", "owner", "superuser"}
POLICY_OWNERS = {"owner", "other_owner", "superuser"}
REVIEWERS = {"reviewer", "superuser"}
CATALOGUE_MANAGERS = {"catalogue_manager", "superuser"}
# Who may sign (`signing.key_roles`): owners of a type or policy owners, reviewers of a type
# or risk reviewers, superusers.
SIGNERS = {"owner", "other_owner", "reviewer", "superuser"}
SEE_PROPOSAL = {"owner", "catalogue_manager", "superuser"}

# name -> (kind, methods the view answers)
ROUTES: dict[str, tuple[str, set[str]]] = {
    "dashboard": ("site", {"GET"}),
    "source_class_list": ("site", {"GET"}),
    "source_class_create": ("catalogue", {"GET", "POST"}),
    "source_class_edit": ("catalogue", {"GET", "POST"}),
    "source_class_propose_new": ("policy_owner", {"GET", "POST"}),
    "source_class_propose": ("policy_owner", {"GET", "POST"}),
    "source_class_proposal": ("proposal", {"GET"}),
    "source_class_proposal_accept": ("catalogue", {"POST"}),
    "source_class_proposal_reject": ("catalogue", {"POST"}),
    "decision_type_create": ("policy_owner", {"GET", "POST"}),
    "decision_type_detail": ("read", {"GET"}),
    "decision_type_access": ("write", {"POST"}),
    "decision_type_access_revoke": ("write", {"POST"}),
    "version_detail": ("read", {"GET"}),
    "version_lint": ("read", {"GET"}),
    "version_preview": ("read", {"GET"}),
    "version_history": ("read", {"GET"}),
    "version_contract_json": ("read", {"GET"}),
    "version_settings": ("write", {"POST"}),
    "proposition_add": ("write", {"POST"}),
    "proposition_row": ("read", {"GET"}),
    "proposition_edit": ("write", {"GET", "POST"}),
    "proposition_delete": ("write", {"POST"}),
    "proposition_move": ("write", {"POST"}),
    "accepted_class_add": ("write", {"POST"}),
    "accepted_class_move": ("write", {"POST"}),
    "accepted_class_remove": ("write", {"POST"}),
    # Review and publishing (the walk's version is a draft: it has no bundle yet).
    "signing_keys": ("site", {"GET"}),
    # Only who publishes or approves signs, so only they register a key (a viewer: 403).
    "signing_key_create": ("signer", {"POST"}),
    "signing_key_revoke": ("own_key", {"POST"}),
    "decision_type_versions": ("read", {"GET"}),
    "version_diff": ("read", {"GET"}),
    "version_start_draft": ("new_draft", {"POST"}),
    "version_review": ("read", {"GET"}),
    "version_impact": ("read", {"GET"}),
    # Owners and reviewers may ask for a failed report again; the walk's has not failed.
    "version_impact_retry": ("write_or_review", {"POST"}),
    "version_bundle": ("bundle", {"GET"}),
    "version_key_set": ("bundle", {"GET"}),
    # Suite strength: read by anyone who sees the type; started and added to by owners (an
    # empty start is refused for the walk's suite has no scenario, an empty add for its form).
    "version_strength": ("read", {"GET"}),
    "version_strength_start": ("write", {"POST"}),
    "version_strength_add": ("write", {"POST"}),
    "version_submit": ("write", {"POST"}),
    "version_withdraw": ("write", {"POST"}),
    "version_approve": ("review", {"POST"}),
    "version_justify": ("write", {"POST"}),
    "version_request_changes": ("review", {"POST"}),
    "version_publish": ("write", {"POST"}),
    "version_retire": ("write", {"POST"}),
    # Production (workbench.production_urls, included without a prefix): service tokens are
    # made by owners only; a replay is queued by owners and reviewers (a viewer reads it).
    "token_list": ("tokens", {"GET", "POST"}),
    "token_revoke": ("own_token", {"POST"}),
    "recorded_decisions_replay": ("replay", {"POST"}),
    "contract_tests_zip": ("read", {"GET"}),
    "contract_tests_import": ("write", {"GET", "POST"}),
}
# Signing in and out are walked by their own tests (single sign-on's: test_sso_callback.py
# and tests/browser/test_sso_browser.py).
NOT_WALKED = {"login", "logout", "sso_start", "sso_callback"}


def test_every_route_is_walked():
    # Apps included under a prefix (scenarios, …) walk their own routes.
    patterns = [*urlpatterns, *production_urlpatterns]
    names = {pattern.name for pattern in patterns if isinstance(pattern, URLPattern)}
    assert names - NOT_WALKED == set(ROUTES)


def expected(name: str, person: str, method: str) -> int:
    kind, methods = ROUTES[name]
    if person == "anonymous":
        return 302
    if method not in methods:
        return 405
    if kind == "site":
        return 200
    if kind == "signer":
        # A signer may create their own signing key (an empty form: the page follows).
        return 302 if person in SIGNERS else 403
    if kind in ("own_key", "own_token"):
        # One revokes only a key or a token of one's own: the walk names none.
        return 404
    if kind == "tokens":
        # The page for everyone; its form for owners (an empty one is invalid).
        if method == "GET":
            return 200
        return 422 if person in POLICY_OWNERS else 403
    if kind == "bundle":
        # A draft has no bundle, and a type one cannot see has no versions at all.
        return 404
    # An empty POST is invalid input: the form comes back with its errors.
    allowed = 200 if method == "GET" else 422
    if kind == "catalogue":
        return allowed if person in CATALOGUE_MANAGERS else 403
    if kind == "policy_owner":
        return allowed if person in POLICY_OWNERS else 403
    if kind == "proposal":
        return 200 if person in SEE_PROPOSAL else 404
    if person not in CAN_SEE_ATLAS:
        return 404
    if kind == "new_draft":
        # The walk's version is an open draft: an editor is sent back with the reason.
        return 302 if person in EDITORS else 403
    if kind == "read":
        return 200
    if kind == "review":
        return allowed if person in REVIEWERS else 403
    if kind == "replay":
        # Queued at once, needing no form: back to the impact report.
        return 302 if person in EDITORS or person in REVIEWERS else 403
    if kind == "write_or_review":
        return allowed if person in EDITORS or person in REVIEWERS else 403
    return allowed if person in EDITORS else 403


def url_for(name: str, draft) -> str:
    proposition = draft.propositions.get(key="waiver_valid")
    proposal = SourceClassProposal.objects.get()
    arguments = {
        "source_class_edit": {"key": "case_note"},
        "source_class_propose": {"key": "case_note"},
        "source_class_proposal": {"pk": proposal.pk},
        "source_class_proposal_accept": {"pk": proposal.pk},
        "source_class_proposal_reject": {"pk": proposal.pk},
        "decision_type_detail": {"key": draft.decision_type.key},
        "decision_type_access": {"key": draft.decision_type.key},
        "decision_type_access_revoke": {"key": draft.decision_type.key},
        "decision_type_versions": {"key": draft.decision_type.key},
        "version_diff": {"key": draft.decision_type.key},
        "version_start_draft": {"key": draft.decision_type.key},
        "token_revoke": {"pk": 0},
        "contract_tests_zip": {"key": draft.decision_type.key},
        "contract_tests_import": {"key": draft.decision_type.key},
    }.get(name)
    if arguments is None and name.startswith(
        ("version_", "proposition_", "accepted_", "recorded_")
    ):
        arguments = {"key": draft.decision_type.key, "number": draft.number}
        if name.startswith("accepted_") or name in {
            "proposition_row",
            "proposition_edit",
            "proposition_delete",
            "proposition_move",
        }:
            arguments["pk"] = proposition.pk
    return reverse(name, kwargs=arguments or {})


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("person", PEOPLE)
def test_walk(person, method, request, client, draft, refund, proposal):
    if person != "anonymous":
        client.force_login(request.getfixturevalue(person))
    failures = []
    for name in ROUTES:
        url = url_for(name, draft)
        response = client.get(url) if method == "GET" else client.post(url, {})
        want = expected(name, person, method)
        if response.status_code != want:
            failures.append(f"{method} {name} {url}: {response.status_code}, expected {want}")
        if person == "anonymous":
            assert response["Location"].startswith(reverse("login") + "?next=")
    assert not failures, "\n".join(failures)


def test_the_walk_changed_nothing_for_people_who_may_not_edit(
    client, draft, refund, viewer, proposal
):
    before = (draft.lock_version, list(draft.propositions.values_list("key", flat=True)))
    client.force_login(viewer)
    for name, (kind, _methods) in ROUTES.items():
        if kind == "write":
            client.post(url_for(name, draft), {"lock_version": draft.lock_version, "key": "x"})
    draft.refresh_from_db()
    assert (draft.lock_version, list(draft.propositions.values_list("key", flat=True))) == before


@pytest.mark.parametrize("person", ["owner", "other_owner", "reviewer", "viewer"])
def test_confirmed_catalogue_posts_change_nothing_for_people_who_may_not_manage_it(
    person, request, client, draft, refund, proposal
):
    """Even a complete, confirmed form is refused to anyone but a catalogue manager."""
    client.force_login(request.getfixturevalue(person))
    before = list(SourceClass.objects.values_list("key", "weak", "retired", "lock_version"))
    note = {"label": "Case note", "authority_tier": 4, "lock_version": 0, "confirm": "1"}
    posts = {
        "source_class_create": {**note, "key": "fax"},
        "source_class_edit": note,
        "source_class_proposal_accept": {"lock_version": 0, "confirm": "1"},
        "source_class_proposal_reject": {"note": "no"},
    }
    for name, data in posts.items():
        assert client.post(url_for(name, draft), data).status_code == 403, name
    assert list(SourceClass.objects.values_list("key", "weak", "retired", "lock_version")) == before
    proposal.refresh_from_db()
    assert proposal.status == "open"


# --------------------------------------------------------------------------- vera changes nothing

# The scenarios app's POST routes (walked for their status in tests/scenarios, whose table
# says which routes answer POST).
SCENARIO_POSTS = {name for name, (_kind, methods, _posted) in SCENARIO_ROUTES.items()
                  if "POST" in methods}  # fmt: skip


@pytest.fixture
def demo_as_olivia_left_it(db):
    """`load_demo` (Atlas v1 published, v2 drafted), a catalogue proposal and a service
    token of olivia's: something behind every POST route for vera to try."""
    import io

    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from contracts.models import DecisionType
    from publishing import tokens

    call_command("load_demo", stdout=io.StringIO())
    olivia = get_user_model().objects.get(username="olivia")
    atlas = DecisionType.objects.get(key="credit.review.continuation")
    note = SourceClass.objects.get(key="case_note")
    services.source_class_propose(
        actor=olivia, source_class=note, **(note.field_values() | {"weak": False}),
        reason="Case notes are reviewed now",
    )  # fmt: skip
    token, _secret = tokens.token_create(actor=olivia, name="retrieval", decision_types=[atlas])
    return atlas, token


def _snapshot() -> dict[str, list]:
    """Every row of every table but the sessions (signing in writes one)."""
    from django.apps import apps

    return {
        model._meta.label: sorted(map(repr, model.objects.values_list()))
        for model in apps.get_models()
        if model._meta.label != "sessions.Session"
    }


def _vera_posts(atlas, token) -> list[tuple[str, str, dict]]:
    """(name, url, data) for every POST route: data an owner's complete form would hold."""
    from django.contrib.auth import get_user_model

    from contracts import selectors
    from scenarios.models import Corpus

    draft = selectors.current_version(decision_type=atlas)
    corpus = Corpus.objects.filter(decision_type=atlas).first()
    scenario = atlas.scenarios.first()
    key = atlas.key
    public_key = (
        "-----BEGIN PUBLIC KEY-----\nMCowBQYDK2VwAyEAGb9ECWmEzf6FQbrBZ9w7lshQhqowtrbLDFw4rXAxZuE="
        "\n-----END PUBLIC KEY-----\n"
    )
    data: dict[str, dict] = {
        "signing_key_create": {"public_key": public_key, "origin": "cli"},
        "token_list": {"name": "vera's own", "decision_types": [atlas.pk]},
        "decision_type_access": {"username": "vera", "role": "owner"},
        "decision_type_access_revoke": {"username": "rafael"},
        "decision_type_create": {"key": "vera.type", "title": "Vera's"},
        "version_settings": {"lock_version": draft.lock_version, "policy_name": "Vera's"},
        "proposition_add": {"lock_version": draft.lock_version, "key": "vera_says"},
    }
    posts = []
    for name, (_kind, methods) in ROUTES.items():
        if "POST" in methods:
            url = url_for(name, draft)
            if name == "token_revoke":
                url = reverse(name, kwargs={"pk": token.pk})
            posts.append((name, url, data.get(name, {"lock_version": draft.lock_version})))
    for name in sorted(SCENARIO_POSTS):
        kwargs = {"key": key}
        if name.startswith(("candidate_", "corpus_")) and name != "corpus_import":
            kwargs["pk"] = corpus.pk
        if name in ("candidate_edit", "candidate_archive", "candidate_restore"):
            kwargs["candidate_id"] = corpus.candidates.first().candidate_id
        if name.startswith("scenario_") and name != "scenario_create":
            kwargs["pk"] = scenario.pk
        posts.append((name, reverse(f"scenarios:{name}", kwargs=kwargs), {"name": "vera's"}))
    assert get_user_model().objects.get(username="vera").groups.get().name == "Viewers"
    return posts


@pytest.mark.parametrize("username", ["vera", "sam"])
def test_vera_can_read_everything_and_change_nothing(
    username, client, demo_as_olivia_left_it, monkeypatch, make_user
):
    """The README's promise, on every POST route as the demo's viewer with the form an owner
    would send: refused (403 on a type she sees, 404 on what she may not see), and not one
    row written, task queued or audit event recorded. The same for sam, who holds no role
    and no group: Atlas does not exist for him (404), the site's forms answer 403."""
    from django.contrib.auth import get_user_model
    from django.tasks.base import Task

    atlas, token = demo_as_olivia_left_it
    if username == "sam":
        make_user("sam")
    queued = []
    enqueue = Task.enqueue
    monkeypatch.setattr(
        Task, "enqueue", lambda self, *a, **k: queued.append(self.name) or enqueue(self, *a, **k)
    )
    client.force_login(get_user_model().objects.get(username=username))
    posts = _vera_posts(atlas, token)
    assert {name for name, _url, _data in posts} >= {
        "recorded_decisions_replay", "signing_key_create", "token_list", "run_start"}  # fmt: skip
    before = _snapshot()
    answered = {name: client.post(url, data).status_code for name, url, data in posts}
    assert {name: code for name, code in answered.items() if code not in (403, 404)} == {}
    assert queued == []
    after = _snapshot()
    assert [label for label in before if before[label] != after[label]] == []
