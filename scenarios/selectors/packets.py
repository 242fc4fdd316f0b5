"""One compile's packet, and a variant's diff against its base."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from scenarios import replay
from scenarios.models import ScenarioResult, SuiteRun


@dataclass(frozen=True)
class PacketView:
    """One compile's output arranged for the packet view. `unavailable` says why a variant's
    output cannot be shown (`scenarios.replay`); `output` then holds only its stored result."""

    output: dict[str, Any]
    unavailable: str = ""

    @property
    def compiled(self) -> bool:
        return self.output.get("result") == "compiled" and not self.unavailable

    @property
    def budget_percent(self) -> int:
        budget = self.output.get("token_budget") or 0
        used = self.output.get("tokens_used") or 0
        return min(100, round(100 * used / budget)) if budget else 0

    @property
    def slots(self) -> list[dict[str, Any]]:
        return list(self.output.get("slots", []))

    @property
    def packet(self) -> list[dict[str, Any]]:
        return list(self.output.get("packet", []))

    @property
    def rejected(self) -> list[dict[str, Any]]:
        return list(self.output.get("rejected", []))

    @property
    def trace(self) -> list[dict[str, Any]]:
        return list(self.output.get("trace", []))

    @property
    def errors(self) -> list[dict[str, Any]]:
        return list(self.output.get("errors", []))


def packet_view(result: ScenarioResult, base: ScenarioResult | None = None) -> PacketView:
    """The stored output of a base (or of a variant stored whole, as older runs did); a
    variant's compiled again from its base's stored input (`base`, looked up if not given)."""
    if result.output_json:
        return PacketView(json.loads(result.output_json))
    base = base or base_of(result)
    try:
        output = replay.replay_variant(
            base_input_json=base.input_json or "",
            base_sha256=base.input_sha256,
            perturbation=result.perturbation_args,
            result=result.result,
            plan_id=result.plan_id,
            states=result.slot_states,
        )
    except replay.NotReplayable as exc:
        return PacketView({"result": result.result}, unavailable=str(exc))
    return PacketView(output.to_json())


@dataclass(frozen=True)
class SlotPair:
    proposition: str
    base: dict[str, Any] | None
    variant: dict[str, Any] | None
    flipped: bool


@dataclass(frozen=True)
class Diff:
    base: ScenarioResult
    variant: ScenarioResult
    base_view: PacketView
    variant_view: PacketView
    slots: list[SlotPair]
    flips: dict[str, Any]
    rejected_added: list[dict[str, Any]]
    rejected_removed: list[dict[str, Any]]
    focus: str | None

    @property
    def verdicts(self) -> list[dict[str, Any]]:
        """The variant's violations and findings, violations first: the matrix's rows show
        only their worst verdict, and leave the messages to the diff."""
        return self.variant.violations_and_findings


def base_of(result: ScenarioResult) -> ScenarioResult:
    """The base compile of the scenario this result belongs to."""
    return (
        ScenarioResult.objects.filter(
            run_id=result.run_id, position__lte=result.position, perturbation=""
        )
        .order_by("-position")
        .first()
    ) or result


def result_diff(*, result: ScenarioResult, focus: str | None = None) -> Diff:
    """The variant against its base: slots side by side, admitted/rejected changes, tokens."""
    base = base_of(result)
    base_view, variant_view = packet_view(base), packet_view(result, base)
    base_slots = {s["proposition"]: s for s in base_view.slots}
    variant_slots = {s["proposition"]: s for s in variant_view.slots}
    if variant_view.unavailable:  # the states the run stored, without their reasons
        variant_slots = {k: {"state": state} for k, state in result.slot_states.items()}
    flipped = result.flipped_propositions
    keys = list(dict.fromkeys([*base.slot_states, *result.slot_states]))
    slots = [SlotPair(k, base_slots.get(k), variant_slots.get(k), k in flipped) for k in keys]
    before = {(r["id"], r["reason"], r.get("detail")) for r in base_view.rejected}
    after = {(r["id"], r["reason"], r.get("detail")) for r in variant_view.rejected}
    as_dicts = lambda rows: [  # noqa: E731
        {"id": i, "reason": r, "detail": d} for i, r, d in sorted(rows)
    ]
    return Diff(
        base=base,
        variant=result,
        base_view=base_view,
        variant_view=variant_view,
        slots=slots,
        flips=result.flips or {},
        rejected_added=as_dicts(after - before),
        rejected_removed=as_dicts(before - after),
        focus=focus,
    )


def first_flipped(*, run: SuiteRun) -> ScenarioResult | None:
    variants = run.results.defer("output_json", "input_json").exclude(perturbation="")
    for result in variants.order_by("position"):
        if result.flipped_propositions:
            return result
    return None
