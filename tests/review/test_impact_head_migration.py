"""Contracts migrations 0016 and 0017: each stored report's head moves from the report's row
to a row of its own (`ImpactReportHead`), unchanged, and back again."""

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
