"""Walk every scenarios URL as every kind of person, with GET and with POST.

Atlas belongs to `owner`, is shared with `reviewer` and `viewer`; for `other_owner` it does
not exist (404). Reads need view permission; corpora, scenarios and expectations need the
owner's change permission (403 otherwise); a run needs change or review permission.
"""

from __future__ import annotations

import pytest
from django.urls import URLPattern, reverse

from workbench.scenario_urls import urlpatterns

pytestmark = pytest.mark.django_db

PEOPLE = ["anonymous", "viewer", "reviewer", "owner", "other_owner", "superuser"]
EDITORS = {"owner", "superuser"}
RUNNERS = {"owner", "reviewer", "superuser"}
CAN_SEE = {"viewer", "reviewer", "owner", "superuser"}

# name -> (kind, methods, status of an empty POST by someone allowed)
ROUTES: dict[str, tuple[str, set[str], int]] = {
    "index": ("site", {"GET"}, 200),
    "suite": ("read", {"GET"}, 200),
    "corpus_import": ("write", {"GET", "POST"}, 422),
    "corpus_detail": ("read", {"GET"}, 200),
    "corpus_export": ("read", {"GET"}, 200),
    "candidate_add": ("write", {"GET", "POST"}, 422),
    "candidate_edit": ("write", {"GET", "POST"}, 422),
    "scenario_create": ("write", {"GET", "POST"}, 422),
    "scenario_detail": ("read", {"GET"}, 200),
    "scenario_edit": ("write", {"GET", "POST"}, 422),
    "scenario_take_expected": ("write", {"POST"}, 409),
    "scenario_compare": ("read", {"GET"}, 200),
    "run_start": ("run", {"POST"}, 302),
    "run_detail": ("read", {"GET"}, 200),
    "run_coverage": ("read", {"GET"}, 200),
    "run_report": ("read", {"GET"}, 200),
    "result_packet": ("read", {"GET"}, 200),
    "result_diff": ("read", {"GET"}, 200),
    # Archive, restore, clone: owners only, POST only; each answers with a redirect (done or
    # refused with a message).
    "scenario_archive": ("write", {"POST"}, 302),
    "scenario_restore": ("write", {"POST"}, 302),
    "scenario_clone": ("write", {"POST"}, 302),
    "corpus_archive": ("write", {"POST"}, 302),
    "corpus_restore": ("write", {"POST"}, 302),
    "candidate_archive": ("write", {"POST"}, 302),
    "candidate_restore": ("write", {"POST"}, 302),
}


def test_every_route_is_walked():
    assert {p.name for p in urlpatterns if isinstance(p, URLPattern)} == set(ROUTES)


def expected(name: str, person: str, method: str) -> int:
    kind, methods, posted = ROUTES[name]
    if person == "anonymous":
        return 302
    if method not in methods:
        return 405
    if kind == "site":
        return 200
    if person not in CAN_SEE:
        return 404
    allowed = {"read": CAN_SEE, "write": EDITORS, "run": RUNNERS}[kind]
    if person not in allowed:
        return 403
    return 200 if method == "GET" else posted


@pytest.fixture
def everyone(viewer, reviewer, owner, other_owner, superuser):
    return {
        "viewer": viewer,
        "reviewer": reviewer,
        "owner": owner,
        "other_owner": other_owner,
        "superuser": superuser,
    }


@pytest.mark.parametrize("method", ["GET", "POST"])
@pytest.mark.parametrize("person", PEOPLE)
def test_walk(client, everyone, finished_run, corpus, scenario, person, method):
    result = finished_run.results.exclude(perturbation="").first()
    kwargs = {
        "index": {},
        "suite": {},
        "corpus_import": {},
        "corpus_detail": {"pk": corpus.pk},
        "corpus_export": {"pk": corpus.pk},
        "candidate_add": {"pk": corpus.pk},
        "candidate_edit": {"pk": corpus.pk, "candidate_id": "facility-F102"},
        "scenario_create": {},
        "scenario_detail": {"pk": scenario.pk},
        "scenario_edit": {"pk": scenario.pk},
        "scenario_take_expected": {"pk": scenario.pk},
        "scenario_compare": {"pk": scenario.pk},
        "run_start": {},
        "run_detail": {"pk": finished_run.pk},
        "run_coverage": {"pk": finished_run.pk},
        "run_report": {"pk": finished_run.pk},
        "result_packet": {"run_pk": finished_run.pk, "pk": result.pk},
        "result_diff": {"run_pk": finished_run.pk, "pk": result.pk},
        "scenario_archive": {"pk": scenario.pk},
        "scenario_restore": {"pk": scenario.pk},
        "scenario_clone": {"pk": scenario.pk},
        "corpus_archive": {"pk": corpus.pk},
        "corpus_restore": {"pk": corpus.pk},
        "candidate_archive": {"pk": corpus.pk, "candidate_id": "facility-F102"},
        "candidate_restore": {"pk": corpus.pk, "candidate_id": "facility-F102"},
    }
    if person != "anonymous":
        client.force_login(everyone[person])
    wrong = []
    for name, extra in kwargs.items():
        if name != "index":
            extra = {"key": scenario.decision_type.key, **extra}
        url = reverse(f"scenarios:{name}", kwargs=extra)
        response = client.get(url) if method == "GET" else client.post(url, {})
        if response.status_code != expected(name, person, method):
            wrong.append((name, response.status_code, expected(name, person, method)))
    assert wrong == []
