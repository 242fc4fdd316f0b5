"""The contract editor reads the catalogue once, however many propositions the contract has,
and an edit computes and answers with only the fragment it changed."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from contracts import selectors, services

pytestmark = pytest.mark.django_db

HTMX = {"HX-Request": "true"}


def with_propositions(owner, version, count: int):
    """Add propositions (each accepting a class) until the version has `count` of them."""
    while version.propositions.count() < count:
        version.refresh_from_db()
        services.proposition_add(
            actor=owner,
            version=version,
            expected_lock_version=version.lock_version,
            key=f"fact_{version.propositions.count()}",
            accepted_classes=["approved_waiver", "case_note"],
        )
    version.refresh_from_db()
    assert version.propositions.count() == count
    return version


def queries_to_render(client, version, **headers) -> int:
    url = reverse(
        "version_detail", kwargs={"key": version.decision_type.key, "number": version.number}
    )
    with CaptureQueriesContext(connection) as queries:
        response = client.get(url, headers=headers)
    assert response.status_code == 200
    return len(queries)


@pytest.mark.parametrize("headers", [{}, HTMX], ids=["page", "editor partial"])
def test_the_editor_query_count_does_not_grow_with_the_propositions(
    as_owner, owner, draft, headers
):
    with_propositions(owner, draft, 4)
    # The first request of a process fills Django's content-type cache (one query, once).
    queries_to_render(as_owner, draft, **headers)
    with_four = queries_to_render(as_owner, draft, **headers)
    with_propositions(owner, draft, 14)
    with_fourteen = queries_to_render(as_owner, draft, **headers)
    assert with_fourteen == with_four


def edit_proposition_description(client, version) -> tuple[int, object]:
    """Edit one proposition's description through htmx; its query count and the response."""
    version.refresh_from_db()
    proposition = version.propositions.first()
    url = reverse(
        "proposition_edit",
        kwargs={"key": version.decision_type.key, "number": version.number, "pk": proposition.pk},
    )
    data = {
        "lock_version": version.lock_version,
        "key": proposition.key,
        "description": f"edited at lock {version.lock_version}",
        "max_items": proposition.max_items,
    }
    with CaptureQueriesContext(connection) as queries:
        response = client.post(url, data, headers=HTMX)
    assert response.status_code == 200, response.content.decode()
    return len(queries), response


# One edit's queries: the session, the permission checks (the view's and the service's), the
# lock and the change with its snapshot and audit event, then the row (the version with its
# type, the propositions' order, the row itself, the permission that shows the forms, the
# catalogue). The lint, preview and history panels are not among them: they refresh themselves
# on the contractChanged event the edit sends.
EDIT_QUERIES = 26


@pytest.mark.parametrize("size", [4, 14])
def test_an_edit_answers_with_the_row_it_changed_only(as_owner, owner, draft, monkeypatch, size):
    with_propositions(owner, draft, size)
    edit_proposition_description(as_owner, draft)  # fills the content-type cache

    def not_on_an_edit(**kwargs):
        raise AssertionError("an edit must not compute the lint, preview or history panels")

    for panel in ("version_lint", "version_preview", "history"):
        monkeypatch.setattr(selectors, panel, not_on_an_edit)
    count, response = edit_proposition_description(as_owner, draft)
    fragment = response.content.decode().strip()
    edited = draft.propositions.first()
    assert fragment.startswith(f'<tr id="p-{edited.pk}"')
    assert fragment.count("<tr") == 1, "one row, whatever the number of propositions"
    assert f"edited at lock {draft.lock_version}" in fragment
    assert 'id="lint"' not in fragment and 'id="history"' not in fragment
    assert "contractChanged" in response["HX-Trigger"]
    assert count <= EDIT_QUERIES
