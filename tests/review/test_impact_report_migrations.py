"""Contracts migrations 0016 and 0017: each stored report's head moves from the report's row
to a row of its own (`ImpactReportHead`), unchanged, and back again; 0018: each scenario
entry stored before gets what a page's list reads of it."""

from __future__ import annotations

import pytest
from django.db import connection
from migrating import migrate_to

BEFORE = ("contracts", "0015_impact_report_inputs_fingerprint")
AFTER = ("contracts", "0017_remove_storedimpactreport_head")
HEAD = {"verdicts": {"violations": [], "widenings": []}, "summary": {"scenarios": 2}}


def report_columns() -> list[str]:
    with connection.cursor() as cursor:
        table = "contracts_storedimpactreport"
        return [c.name for c in connection.introspection.get_table_description(cursor, table)]


@pytest.mark.django_db(transaction=True)
def test_each_head_moves_to_its_own_row_and_back(draft):
    try:
        apps = migrate_to(BEFORE)
        Stored = apps.get_model("contracts", "StoredImpactReport")
        ready = Stored.objects.create(
            version_id=draft.pk, inputs_sha256="1" * 64, status="ready", head=HEAD, shown=HEAD
        )
        pending = Stored.objects.create(version_id=draft.pk, inputs_sha256="2" * 64)

        apps = migrate_to(AFTER)
        assert "head" not in report_columns()
        heads = apps.get_model("contracts", "ImpactReportHead").objects
        assert dict(heads.values_list("report_id", "head")) == {ready.pk: HEAD}

        apps = migrate_to(BEFORE)
        Stored = apps.get_model("contracts", "StoredImpactReport")
        assert dict(Stored.objects.values_list("pk", "head")) == {ready.pk: HEAD, pending.pk: None}
    finally:
        migrate_to()  # whatever failed, the next test gets the schema it expects


@pytest.mark.django_db(transaction=True)
def test_entries_stored_before_get_what_the_list_reads(draft):
    from contracts.models import ImpactScenarioEntry
    from publishing.impact import entries

    flip = {"perturbation": "hide(e1)", "proposition": "a", "before": "supported"}
    entry = {
        "name": "s1", "changed": True, "compiles": 2, "summary": ["'a' goes …"],
        "flips": [{**flip, "after": "unknown", "text": "'s1': 'a' goes …"}],
        "admitted_changes": [{"perturbation": "hide(e1)", "added": [], "removed": ["e1"],
                              "operator": "hide", "text": "no longer admits 'e1'"}],
        "verdicts": {"violations": [], "findings": []}, "input_sha256": "4" * 64,
        "problems": [], "newly_failing": [], "now_passing": [], "still_failing": [],
    }  # fmt: skip
    try:
        apps = migrate_to(AFTER)
        report = apps.get_model("contracts", "StoredImpactReport").objects.create(
            version_id=draft.pk, inputs_sha256="3" * 64, status="ready"
        )
        apps.get_model("contracts", "ImpactScenarioEntry").objects.create(
            report_id=report.pk, position=0, name="s1", changed=True, flips=1,
            admitted_changes=1, newly_failing=0, now_passing=0, problems=0,
            propositions="|a|", entry=entry,
        )  # fmt: skip
        migrate_to(("contracts", "0018_impact_entry_listed"))
        listed = ImpactScenarioEntry.objects.get(report_id=report.pk).listed
        assert listed == entries.listed(entry)
        assert "verdicts" not in listed and "text" not in listed["flips"][0]
    finally:
        migrate_to()
