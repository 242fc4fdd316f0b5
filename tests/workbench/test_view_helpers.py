"""`found`: a selector says "not there" with DoesNotExist or None; the view answers 404."""

from __future__ import annotations

import pytest
from django.http import Http404

from contracts import selectors
from workbench.views.helpers import found

pytestmark = pytest.mark.django_db


def test_a_lookup_that_finds_returns_what_it_found(atlas, owner):
    assert found(selectors.decision_type_for_user, user=owner, key=atlas.key) == atlas


def test_a_type_the_person_may_not_see_is_a_404_with_the_selectors_message(atlas, other_owner):
    with pytest.raises(Http404, match="No such decision type."):
        found(selectors.decision_type_for_user, user=other_owner, key=atlas.key)


def test_a_lookup_that_answers_none_is_a_404():
    def nothing(*, key: str) -> str | None:
        return None

    with pytest.raises(Http404):
        found(nothing, key="anything")
