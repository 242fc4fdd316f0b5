"""Review fixtures: signing keys for the owner and the reviewer, the demo scenarios of the
Atlas type, and versions in each state of the review flow."""

from __future__ import annotations

import shutil

import pytest
from shared_world import add_part


@pytest.fixture
def devices(tmp_path):
    """People's own key files (as `evidence-compiler keygen` writes them): approving and
    publishing sign with them, on "their" side, never with a key the workbench holds."""
    from publishing.demo import KeyFiles

    return KeyFiles(tmp_path / "keys")


@pytest.fixture
def key_from_before(devices):
    """key_from_before(person) -> a key registered while `person` still signed (a risk
    reviewer then), kept after they lost that role: only a signer registers a key, but a
    demotion does not take one's keys away (what they signed must still verify)."""
    from django.contrib.auth.models import Group

    from contracts import roles

    def register(person):
        group = Group.objects.get(name=roles.RISK_REVIEWERS)
        person.groups.add(group)
        key = devices.ensure(type(person).objects.get(pk=person.pk))
        person.groups.remove(group)
        return key

    return register


@pytest.fixture
def keys(owner, reviewer, devices):
    """The owner's and the reviewer's key files in `devices`, their public halves registered."""
    from shared_world import WORLD

    from publishing import signing

    WORLD.insert("keys")
    shutil.copytree(_world_keys().directory, devices.directory, dirs_exist_ok=True)
    return {"owner": signing.signing_key(owner), "reviewer": signing.signing_key(reviewer)}


@pytest.fixture
def suite(atlas, owner):
    """The demo's corpora and scenarios (the refund desk too: the demo loads both types)."""
    from shared_world import WORLD

    WORLD.insert("suite")
    return atlas


@pytest.fixture
def submitted(suite, draft, owner, keys):
    """Atlas's draft (version 1), submitted for review."""
    return _in_state("submitted", draft)


@pytest.fixture
def approved(submitted, reviewer, devices):
    """`submitted`, approved by the reviewer with a statement signed by their key file."""
    return _in_state("approved", submitted)


@pytest.fixture
def published(approved, owner, devices):
    """`approved`, published by the owner: its bundle."""
    from contracts.models import Bundle

    _in_state("published", approved)
    return Bundle.objects.get(version=approved)


def _in_state(part, version):
    from shared_world import WORLD

    WORLD.insert(part)
    version.refresh_from_db()
    return version


# The parts of the shared world (tests/shared_world.py) the fixtures above take their rows
# from; the key files their people sign with are the world's, which `keys` copies.


def _world_keys():
    from shared_world import WORLD

    from publishing.demo import KeyFiles

    return KeyFiles(WORLD.folder / "keys")


def _atlas_draft():
    from shared_world import _person

    from contracts import demo, selectors
    from contracts.models import DecisionType

    atlas = DecisionType.objects.get(key=demo.ATLAS.key)
    return _person("olivia"), _person("rafael"), selectors.current_version(decision_type=atlas)


def _register_keys() -> None:
    from shared_world import _person

    for username in ("olivia", "rafael"):
        _world_keys().ensure(_person(username))


def _submit() -> None:
    from publishing import review

    owner, _, draft = _atlas_draft()
    review.version_submit(actor=owner, version=draft, expected_lock_version=draft.lock_version)


def _approve() -> None:
    from publishing import review

    _, reviewer, version = _atlas_draft()
    report = review.report_for(version)
    _world_keys().approve(actor=reviewer, version=version, report_sha256=report.sha256)


def _publish() -> None:
    owner, _, version = _atlas_draft()
    _world_keys().publish(actor=owner, version=version)


add_part("keys", _register_keys, after=("owner", "reviewer"))
add_part("submitted", _submit, after=("suite", "keys"))
add_part("approved", _approve, after=("submitted",))
add_part("published", _publish, after=("approved",))


# The wide type's ten propositions: the first three stood for by facility records, the next
# three by case notes (which the contract does not accept at first), the last four by none.
WIDE_PROPOSITIONS = [f"fact_{i:02d}" for i in range(10)]


@pytest.fixture
def wide_type(owner, reviewer, catalogue, devices):
    """wide_type(count) -> (decision type, its draft): ten propositions and `count`
    scenarios, each a distinct compile input, each expecting fact_00 supported and fact_04
    unknown; shared with `reviewer`."""
    from contracts import roles, selectors, services
    from scenarios import services as scenario_services
    from tests.wide_suite import wide_scenarios

    def make(count, key="wide.check"):
        decision_type = services.decision_type_create(
            actor=owner, key=key, title="Ten facts", purposes=["check"]
        )
        services.access_grant(
            actor=owner, decision_type=decision_type, user=reviewer, role=roles.Role.REVIEWER
        )
        version = selectors.current_version(decision_type=decision_type)
        for proposition in WIDE_PROPOSITIONS:
            services.proposition_add(
                actor=owner,
                version=version,
                expected_lock_version=version.lock_version,
                key=proposition,
                accepted_classes=["facility_record"],
            )
            version.refresh_from_db()
        kinds = (
            ("facility_record", WIDE_PROPOSITIONS[:3]),
            ("case_note", WIDE_PROPOSITIONS[3:6]),
        )
        candidates = [
            {
                "id": f"{kind}-{proposition}",
                "entity": "E1",
                "allowed_roles": ["analyst"],
                "allowed_purposes": ["check"],
                "evidence_class": kind,
                "supports": [proposition],
                "valid_from": "2026-01-01",
                "tokens": 10,
                "relevance": 0.5 if kind == "facility_record" else 0.9,
                "content": f"{kind} for {proposition}.",
            }
            for kind, propositions in kinds
            for proposition in propositions
        ]
        corpus = scenario_services.corpus_import(
            actor=owner,
            decision_type=decision_type,
            name="wide",
            document={"candidates": candidates},
        )
        wide_scenarios(
            decision_type,
            corpus,
            owner,
            range(count),
            expected_slots=lambda i: {"fact_00": "supported", "fact_04": "unknown"},
            token_budget=lambda i: 500 + i,  # every scenario a distinct compile input
        )
        for person in (owner, reviewer):
            devices.ensure(person)
        return decision_type, version

    return make
