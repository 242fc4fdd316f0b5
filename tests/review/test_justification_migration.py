"""Contracts migration 0010: justifications written per (scenario, perturbation, proposition)
become one per cause, none lost: the cause read from the violation's message in the stored
report, else from the perturbation's name; texts of one cause merged; and back again."""

from __future__ import annotations

import pytest
from migrating import migrate_to
from vendor_onboarding import create

BEFORE = ("contracts", "0009_stored_impact_report_heartbeat")
AFTER = ("contracts", "0010_justification_per_cause")


def promote(scenario: str, classes: str) -> dict:
    return {
        "key": [scenario, "promote_weak(web_page+forum_post)", "sanctions_clear"],
        "message": f"sanctions_clear accepts a weak class as proof: weak-promotion:WEB-1:"
        f"sanctions_clear ({classes}) claiming approval was admitted and establishes it",
    }


@pytest.mark.django_db(transaction=True)
def test_each_old_justification_maps_to_its_cause(owner, reviewer, catalogue_manager):
    decision_type = create(owner=owner, reviewer=reviewer, catalogue_manager=catalogue_manager)
    version_id = decision_type.versions.get(number=1).pk
    try:
        apps = migrate_to(BEFORE)
        Old = apps.get_model("contracts", "ViolationJustification")
        Stored = apps.get_model("contracts", "StoredImpactReport")
        # The stored report (written before the migration) says which weak class was admitted.
        Stored.objects.create(
            version_id=version_id, inputs_sha256="0" * 64, status="ready",
            document={"verdicts": {"violations": [promote("Kestrel", "web_page"),
                                                  promote("Larkspur", "web_page")]}},
        )  # fmt: skip
        rows = [
            # Two scenarios, one cause: merged, both texts kept, the first's date.
            ("Kestrel", "promote_weak(web_page+forum_post)", "sanctions_clear", "Screened."),
            ("Larkspur", "promote_weak(web_page+forum_post)", "sanctions_clear", "Rescreened."),
            # No stored message: each class named, and both together.
            ("Kestrel", "promote_weak(web_page+forum_post)", "insurance_in_force", "Cover."),
            # A contradiction's class is implied: the first accepted one, or none.
            ("Kestrel", "contradict_first", "tax_registration_valid", "Registry lags."),
            # The cause is the operator and the proposition.
            ("Larkspur", "swap_principal(outsider, outsider_role)", "", "Shared inbox."),
        ]
        for scenario, perturbation, proposition, text in rows:
            Old.objects.create(
                version_id=version_id, scenario=scenario, perturbation=perturbation,
                proposition=proposition, text=text, author_id=owner.pk,
            )  # fmt: skip
        first_date = Old.objects.get(scenario="Kestrel", proposition="sanctions_clear").created_at

        apps = migrate_to(AFTER)
        New = apps.get_model("contracts", "ViolationJustification")
        found = {
            (j.operator, j.proposition, j.cause): j.text
            for j in New.objects.filter(version_id=version_id)
        }
        assert found == {
            ("promote_weak", "sanctions_clear", "web_page"): "Screened.\n\nRescreened.",
            ("promote_weak", "insurance_in_force", "forum_post"): "Cover.",
            ("promote_weak", "insurance_in_force", "web_page"): "Cover.",
            ("promote_weak", "insurance_in_force", "forum_post+web_page"): "Cover.",
            ("contradict_first", "tax_registration_valid", "tax_authority_record"): (
                "Registry lags."
            ),
            ("contradict_first", "tax_registration_valid", ""): "Registry lags.",
            ("swap_principal", "", ""): "Shared inbox.",
        }
        merged = New.objects.get(proposition="sanctions_clear")
        assert merged.created_at == first_date and merged.author_id == owner.pk

        apps = migrate_to(BEFORE)
        Back = apps.get_model("contracts", "ViolationJustification")
        back = {(j.perturbation, j.proposition): j.text for j in Back.objects.all()}
        assert back[("promote_weak(web_page)", "sanctions_clear")] == "Screened.\n\nRescreened."
        assert back[("swap_principal", "")] == "Shared inbox."
        assert len(back) == len(found)
    finally:
        migrate_to()  # whatever failed, the next test gets the schema it expects
