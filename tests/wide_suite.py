"""Scenarios made in bulk for the scale tests of a wide type (ten `fact_NN` propositions,
candidates for entity E1, analysts checking): one per number, in suite order, each decided on
one of 30 days, written with one `bulk_create` and no compile."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable
from typing import Any


def wide_scenarios(
    decision_type: Any,
    corpus: Any,
    owner: Any,
    numbers: Iterable[int],
    *,
    expected_slots: Callable[[int], dict[str, str]],
    token_budget: Callable[[int], int] = lambda i: 500,
) -> None:
    from scenarios.models import Scenario

    Scenario.objects.bulk_create(
        Scenario(
            decision_type=decision_type,
            corpus=corpus,
            name=f"scenario {i:03d}",
            position=i,
            principal="ana",
            roles=["analyst"],
            purpose="check",
            entity="E1",
            decision_date=dt.date(2026, 6, 1) + dt.timedelta(days=i % 30),
            token_budget=token_budget(i),
            expected_slots=expected_slots(i),
            created_by=owner,
        )
        for i in numbers
    )
