"""The flip matrix opens with its verdicts: a summary of propositions × perturbation kinds
(counts of violations / findings / expected), a legend in icons and words, the corpora's
findings, then the detail rows filtered to violations and findings unless `?show=all`."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from contracts.models import ContractVersion
from scenarios import demo, selectors, services

pytestmark = pytest.mark.django_db


def _run(number, **kwargs):
    from django.contrib.auth import get_user_model

    version = ContractVersion.objects.get(decision_type__key=demo.ATLAS_KEY, number=number)
    olivia = get_user_model().objects.get(username="olivia")
    return services.run_start(actor=olivia, version=version, **kwargs)


def test_summary_counts_the_weak_promotion_violation_of_version_2(demo_versions):
    run = _run(2)
    summary = selectors.verdict_summary(run=run)
    cells = {
        (proposition, cell.operator): cell.counts for proposition, row in summary.rows
        for cell in row
    }  # fmt: skip
    violations = {key for key, counts in cells.items() if counts["violation"]}
    assert violations == {("waiver_valid", "promote_weak")}
    assert summary.totals["violation"] == cells[("waiver_valid", "promote_weak")]["violation"]
    # Every stored verdict is counted once: the totals are the run's verdicts.
    stored = sum(len(r.verdicts) for r in run.results.exclude(perturbation=""))
    assert sum(summary.totals.values()) == stored


def test_summary_of_version_1_has_no_violation(demo_versions):
    summary = selectors.verdict_summary(run=_run(1))
    assert summary.totals["violation"] == 0 and summary.totals["finding"] > 0


def test_summary_takes_the_same_number_of_queries_for_one_scenario_and_for_all(demo_versions):
    version = ContractVersion.objects.get(decision_type__key=demo.ATLAS_KEY, number=2)
    one = _run(2, scenario=version.decision_type.scenarios.first())
    every = _run(2)
    assert every.results.count() > one.results.count()
    counts = []
    for run in (one, every):
        with CaptureQueriesContext(connection) as queries:
            selectors.verdict_summary(run=run)
        counts.append(len(queries))
    assert counts[0] == counts[1]


def test_run_page_leads_with_the_summary_and_legend_and_filters_rows(client, demo_versions):
    from django.contrib.auth import get_user_model

    run = _run(2)
    client.force_login(get_user_model().objects.get(username="olivia"))
    url = reverse("scenarios:run_detail", args=[demo.ATLAS_KEY, run.pk])
    page = client.get(url).content.decode()
    assert page.index('id="verdict-summary"') < page.index('id="matrix"')
    for word in ("✖", "violation", "▲", "finding", "✓", "expected"):
        assert word in page.split('id="verdict-legend"')[1].split("</dl>")[0]
    variants = list(run.results.exclude(perturbation=""))
    # A perturbation whose every variant is only expected is not a detail row by default.
    noisy = {r.perturbation for r in variants if r.flips["verdict"] != "expected"}
    quiet = sorted({r.perturbation for r in variants} - noisy)
    loud = [r for r in variants if r.flips["verdict"] == "violation"]
    assert quiet and loud
    # The detail rows: plain labels, the technical name on hover.
    assert f'title="{loud[0].perturbation}"><bdi>{loud[0].flips["label"]}</bdi></span>' in page
    assert f'title="{quiet[0]}"' not in page
    everything = client.get(url, {"show": "all"}).content.decode()
    assert f'title="{quiet[0]}"' in everything
    assert "Only violations and findings" in everything


def test_a_row_shows_its_worst_verdict_and_its_diff_the_messages(client, demo_versions):
    """Detail on demand: a row carries its verdict badge; its messages are in the diff its
    name opens (in the side panel, or as a page of its own)."""
    from django.contrib.auth import get_user_model
    from django.utils.html import escape

    run = _run(2)
    client.force_login(get_user_model().objects.get(username="olivia"))
    variants = run.results.exclude(perturbation="").order_by("position")
    loud = next(r for r in variants if r.flips["verdict"] == "violation")
    (message, *_) = [v["message"] for v in loud.violations_and_findings]
    url = reverse("scenarios:run_detail", args=[demo.ATLAS_KEY, run.pk])
    page = client.get(url, {"after": loud.position - 1}).content.decode()
    row = page.split('<table class="matrix"')[1].split("<tbody>")[1].split("</tr>")[0]
    diff_url = reverse("scenarios:result_diff", args=[demo.ATLAS_KEY, run.pk, loud.pk])
    assert f'<a href="{diff_url}" hx-get="{diff_url}">' in row
    assert "verdict-violation" in row and escape(message) not in page
    diff = client.get(diff_url, headers={"HX-Request": "true"}).content.decode()
    assert "<html" not in diff and escape(message) in diff
    assert diff.index("violation") < diff.index(escape(message))


def test_corpus_findings_on_the_coverage_page(client, demo_versions):
    from django.contrib.auth import get_user_model

    run = _run(2)
    client.force_login(get_user_model().objects.get(username="olivia"))
    page = client.get(reverse("scenarios:run_coverage", args=[demo.ATLAS_KEY, run.pk]))
    findings = selectors.run_corpus_findings(run=run)
    assert any("does not accept committee_record" in f["message"] for f in findings)
    assert "does not accept committee_record: intended?" in page.content.decode()


def test_an_expectation_on_one_perturbation_that_fails_is_reported(client, owner, draft, scenario):
    """An owner's expectation on one perturbation ("one day later, continuation_rule is
    contradicted") that does not hold is a failure reported with the base's, naming the
    perturbation; one that holds is not."""
    wrong = {"operator": "shift_days", "args": {"days": 1}, "proposition": "continuation_rule",
             "state": "contradicted"}  # fmt: skip
    right = {"operator": "shift_days", "args": {"days": 1}, "proposition": "facility_limit",
             "state": "supported"}  # fmt: skip
    scenario = services.scenario_update(
        actor=owner, scenario=scenario, corpus=scenario.corpus,
        expected_lock_version=scenario.lock_version, variant_expectations=[wrong, right],
    )  # fmt: skip
    run = services.run_start(actor=owner, version=draft)
    base = run.results.get(perturbation="")
    (failure,) = [f for f in base.expectation_failures if "perturbation" in f]
    assert failure == {"what": "slot", "key": "continuation_rule", "expected": "contradicted",
                       "actual": "supported", "perturbation": "shift_days(+1)"}  # fmt: skip
    assert run.summary["failures"] >= 1
    client.force_login(owner)
    page = client.get(reverse("scenarios:run_detail", args=[draft.decision_type.key, run.pk]))
    assert (
        "Under <bdi>shift_days(+1)</bdi>: <bdi>continuation_rule</bdi> should be contradicted "
        "(its sources disagree); it is supported."
    ) in page.content.decode()


def test_an_expectation_naming_an_unknown_operator_is_refused(owner, scenario):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        services.scenario_update(
            actor=owner, scenario=scenario, corpus=scenario.corpus,
            expected_lock_version=scenario.lock_version,
            variant_expectations=[{"operator": "teleport", "proposition": "x",
                                   "state": "unknown"}],
        )  # fmt: skip
    assert "Expectation 1" in refused.value.message_dict["variant_expectations"][0]
    scenario.refresh_from_db()
    assert scenario.variant_expectations == []


def test_rows_stored_with_their_verdicts_inside_the_flips_read_the_same(demo_versions):
    """Runs stored before verdicts had a column of their own kept them in `flips`."""
    from scenarios.management.commands.run_scenarios import _verdicts
    from scenarios.models import ScenarioResult

    run = _run(2)

    def shown():
        rows = selectors.flip_matrix(run=run, paged=False).rows
        return [(r.result.pk, r.verdict, r.verdicts, [c.verdict for c in r.cells]) for r in rows]

    before, listed = shown(), _verdicts(run)
    assert any(verdicts for _, _, verdicts, _ in before)
    for result in run.results.exclude(perturbation=""):
        ScenarioResult.objects.filter(pk=result.pk).update(
            flips={**result.flips, "verdicts": result.verdicts}, verdicts=None
        )
    assert not run.results.filter(verdicts__isnull=False).exists()
    assert shown() == before and _verdicts(run) == listed


def test_a_purpose_no_scenario_asks_for_is_a_finding_and_the_run_probes_it(
    client, owner, draft, scenario
):
    """An owner who adds an adjacent analytics purpose to the contract sees, on the run's
    coverage page, that no scenario asks for it, and in the run what the contract admits for
    it (the `swap_purpose` probe): the run's catalogue is the site's, with its tiers."""
    from contracts.services import version_update_settings

    draft = version_update_settings(
        actor=owner, version=draft, expected_lock_version=draft.lock_version,
        purposes=[*draft.purposes, "portfolio_analytics"], policy_name=draft.policy_name,
        policy_version=draft.policy_version, min_relevance=draft.min_relevance,
        role_order=draft.role_order,
    )  # fmt: skip
    run = services.run_start(actor=owner, version=draft)
    assert run.catalogue["case_note"] == 4 and run.catalogue["facility_record"] == 1
    probe = run.results.get(perturbation="swap_purpose(portfolio_analytics)")
    (finding,) = [v for v in probe.judged if v["proposition"] is None]
    assert finding["kind"] == "finding" and finding["cause"] == "portfolio_analytics"
    findings = selectors.run_corpus_findings(run=run)
    assert [f["message"] for f in findings if f["corpus"] == ""] == [
        "the contract permits portfolio_analytics, which no scenario asks for: nothing shows "
        "what it admits for it"
    ]
    client.force_login(owner)
    page = client.get(reverse("scenarios:run_coverage", args=[draft.decision_type.key, run.pk]))
    assert "permits portfolio_analytics, which no scenario asks for" in page.content.decode()
