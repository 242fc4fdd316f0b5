"""Reads already filtered by permission: a type you may not see does not exist for you."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from contracts import selectors, services
from contracts.models import ContractVersion, DecisionType

pytestmark = pytest.mark.django_db


@pytest.mark.parametrize(
    ("person", "visible"),
    [
        ("owner", ["credit.review.continuation"]),
        ("reviewer", ["credit.review.continuation"]),
        ("viewer", ["credit.review.continuation"]),
        ("other_owner", ["refund.eligibility"]),
        ("stranger", []),
        ("superuser", ["credit.review.continuation", "refund.eligibility"]),
    ],
)
def test_visible_decision_types(person, visible, request, atlas, refund):
    user = request.getfixturevalue(person)
    found = selectors.decision_types_for_user(user=user).order_by("key")
    assert [t.key for t in found] == visible
    assert [row.decision_type.key for row in selectors.dashboard_rows(user=user)] == visible


def test_anonymous_sees_nothing(atlas):
    from django.contrib.auth.models import AnonymousUser

    assert not selectors.decision_types_for_user(user=AnonymousUser()).exists()


def test_a_type_without_permission_is_not_found(atlas, other_owner):
    with pytest.raises(DecisionType.DoesNotExist):
        selectors.decision_type_for_user(user=other_owner, key=atlas.key)
    with pytest.raises(DecisionType.DoesNotExist):
        selectors.version_for_user(user=other_owner, key=atlas.key, number=1)


def test_roles(atlas, owner, reviewer, viewer):
    assert selectors.can_edit(user=owner, decision_type=atlas)
    assert not selectors.can_edit(user=reviewer, decision_type=atlas)
    assert selectors.can_review(user=reviewer, decision_type=atlas)
    assert not selectors.can_edit(user=viewer, decision_type=atlas)
    assert not selectors.can_review(user=viewer, decision_type=atlas)


def test_dashboard_shows_each_state_and_the_last_change(atlas, draft, owner):
    ContractVersion.objects.filter(pk=draft.pk).update(status="published")
    services.version_start_draft(actor=owner, decision_type=atlas)
    (row,) = selectors.dashboard_rows(user=owner)
    assert (row.draft.number, row.published.number, row.in_review) == (2, 1, None)
    assert row.last_change.summary == "Started draft version 2 from version 1"


def test_dashboard_queries_do_not_grow_with_the_number_of_types(catalogue, owner):
    def count() -> int:
        with CaptureQueriesContext(connection) as queries:
            selectors.dashboard_rows(user=owner)
        return len(queries)

    services.decision_type_create(actor=owner, key="a.one", title="One", purposes=["p"])
    few = count()
    for key in ("a.two", "a.three", "a.four"):
        services.decision_type_create(actor=owner, key=key, title=key, purposes=["p"])
    assert count() == few


def test_preview_and_lint_of_an_invalid_draft(draft):
    draft.propositions.filter(key="review_open").update(accepted_classes=["x", "x"])
    preview = selectors.version_preview(version=draft)
    assert not preview.valid
    assert preview.problems[0].loc[:2] == ("propositions", 1)
    codes = {finding.code for finding in selectors.version_lint(version=draft)}
    assert codes == {"class_not_carriable"}


def test_history_is_newest_first(draft):
    events = list(selectors.history(decision_type=draft.decision_type))
    assert events[0].summary == "Made vera viewer of 'credit.review.continuation'"
    assert events[-1].summary == "Created decision type 'credit.review.continuation'"
