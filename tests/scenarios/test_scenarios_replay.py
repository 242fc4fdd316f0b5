"""A run stores the whole output of each scenario's base only; a variant's is compiled again
from the base's stored input when opened (scenarios.replay), and shown only if it is the
compile the run recorded."""

from __future__ import annotations

import json

import pytest
from django.urls import reverse

from compiler import Perturbation
from scenarios import compiling, replay, selectors, services
from scenarios.models import ScenarioResult
from scenarios.result_rows import _corpus_models

pytestmark = pytest.mark.django_db

KEY = "credit.review.continuation"


def packet_url(run, result):
    return reverse(
        "scenarios:result_packet", kwargs={"key": KEY, "run_pk": run.pk, "pk": result.pk}
    )


def diff_url(run, result):
    return reverse("scenarios:result_diff", kwargs={"key": KEY, "run_pk": run.pk, "pk": result.pk})


@pytest.fixture
def run(owner, draft, scenario, scenario_fields):
    services.scenario_create(
        actor=owner,
        decision_type=scenario.decision_type,
        corpus=scenario.corpus,
        name="Rafael asks, a week later",
        **scenario_fields(principal="rafael", decision_date=scenario.decision_date.replace(day=6)),
    )
    return services.run_start(actor=owner, version=draft)


def full_sweep(run, result):
    """The scenario swept again keeping every model: what each variant's output is."""
    from contracts.documents import compiled_contract

    scenario = result.scenario
    corpus = _corpus_models({scenario.corpus_id})[scenario.corpus_id]
    document = compiling.scenario_input(
        scenario.request_document(), compiled_contract(run.version), corpus
    )
    return compiling.sweep_scenario(document, run.weak_classes, catalogue=run.catalogue)


def test_bases_keep_their_input_and_variants_store_no_output(run):
    bases = run.results.filter(perturbation="")
    variants = run.results.exclude(perturbation="")
    assert bases.count() == 2 and variants.count() > 20
    for base in bases:
        assert compiling.text_sha256(base.input_json) == base.input_sha256
        assert json.loads(base.output_json)["result"] == base.result
    assert not variants.exclude(output_json="").exists()
    assert not variants.filter(input_json__isnull=False).exists()


def test_every_variant_compiled_again_is_the_output_the_sweep_gave(run):
    for base in run.results.filter(perturbation=""):
        swept = full_sweep(run, base)
        variants = run.results.filter(
            position__gt=base.position, position__lt=base.position + 1000
        ).order_by("position")
        assert [v.perturbation for v in variants] == [v.name for v in swept.variants]
        for stored, fresh in zip(variants, swept.variants, strict=True):
            view = selectors.packet_view(stored)
            assert view.unavailable == ""
            assert view.output == fresh.output.to_json()
            assert (view.output["plan_id"] or "") == stored.plan_id


def test_a_variant_opens_as_recorded_after_its_scenario_changes(as_owner, run, scenario):
    variant = run.results.get(scenario=scenario, perturbation="hide(facility-F102)")
    before = selectors.packet_view(variant).output
    scenario.principal, scenario.token_budget = "someone_else", 90
    scenario.save()
    page = as_owner.get(packet_url(run, variant)).content.decode()
    assert "Trace (" in page and "cannot be compiled again" not in page
    assert selectors.packet_view(ScenarioResult.objects.get(pk=variant.pk)).output == before


def test_a_variant_the_compiler_now_plans_differently_shows_the_stored_states(as_owner, run):
    variant = run.results.filter(result="compiled").exclude(perturbation="").first()
    ScenarioResult.objects.filter(pk=variant.pk).update(plan_id="0" * 64)
    page = as_owner.get(packet_url(run, variant))
    text = page.content.decode()
    assert page.status_code == 200
    assert "gives a different plan than the run recorded" in text
    assert "Slots (as the run stored them)" in text and "Trace (" not in text
    for proposition, state in variant.slot_states.items():
        assert f'<code>{proposition}</code> <span class="state state-{state}">' in text
    diff = as_owner.get(diff_url(run, variant)).content.decode()
    assert "gives a different plan than the run recorded" in diff


def test_a_changed_base_input_is_not_compiled(run):
    base = run.results.get(position=0)
    ScenarioResult.objects.filter(pk=base.pk).update(
        input_json=base.input_json.replace("maya", "mallory")
    )
    view = selectors.packet_view(run.results.get(position=1))
    assert view.unavailable == replay.INPUT_CHANGED and not view.compiled


def test_rows_stored_whole_are_read_as_stored(run):
    """Runs stored before bases kept their input kept every variant's output on its row."""
    variant = run.results.get(position=1)
    stored = {**selectors.packet_view(variant).output, "tokens_used": 7}
    ScenarioResult.objects.filter(pk=variant.pk).update(output_json=json.dumps(stored))
    ScenarioResult.objects.filter(position=0, run=run).update(input_json=None)
    assert selectors.packet_view(run.results.get(position=1)).output == stored
    # Without a stored output or a stored base input, the page says so.
    other = run.results.get(position=2)
    alone = selectors.packet_view(other)
    assert alone.unavailable == replay.NO_INPUT and alone.output == {"result": other.result}


def test_a_perturbation_this_compiler_cannot_replay_is_explained(run):
    base = run.results.get(position=0)
    variant = run.results.get(position=1)
    with pytest.raises(replay.NotReplayable, match="different input"):
        replay.replay_variant(
            base_input_json=base.input_json,
            base_sha256=base.input_sha256,
            perturbation={"operator": "no_such_operator", "args": {}},
            result=variant.result,
            plan_id=variant.plan_id,
            states=variant.slot_states,
        )
    assert Perturbation.from_json(variant.perturbation_args).name == variant.perturbation
