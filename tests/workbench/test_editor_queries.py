"""The contract editor reads the catalogue once, however many propositions the contract has."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from contracts import services

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
