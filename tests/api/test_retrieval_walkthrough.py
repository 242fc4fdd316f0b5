"""The integration walkthrough, end to end against a live workbench: a policy team publishes
an export-compliance contract (the workbench's own services, as its people would through the
pages), and `examples/retrieval_service.py`, written from the docs alone, pins the key set,
pulls the bundle over HTTP with its `BundleStore`, searches 2,000 generated documents in
SQLite FTS5, decides the top 50 of each query against the bundle, and posts the compact
receipts back; the owner then replays them on the draft's impact report."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from compiler_tools import ContractFile

ROOT = Path(__file__).resolve().parents[2]
EXPORT = ROOT / "bench" / "domains" / "export_licence"
EXPORT_TYPE = "export.dual_use.general_licence"
QUERIES = 20
DOCUMENTS = 500


def publish_export_desk(tmp_path: Path):
    """The export desk's contract published as version 1 by olivia, approved by rafael, and a
    version 2 draft that no longer accepts the site survey. Returns (type, draft, owner)."""
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from contracts import services
    from contracts.models import SourceClass
    from publishing import contract_import, review
    from publishing.demo import KeyFiles

    domain = EXPORT
    contract_yaml = domain / "contract.yaml"
    call_command("load_demo", stdout=io.StringIO())
    people = get_user_model().objects
    olivia, rafael = people.get(username="olivia"), people.get(username="rafael")
    curator = people.create_superuser("curator", "curator@example.com", "x")
    contract_file = ContractFile.model_validate(yaml.safe_load(contract_yaml.read_text()))
    for source in contract_file.source_classes:  # the catalogue's managers add the classes
        if not SourceClass.objects.filter(key=source.key).exists():
            services.source_class_create(
                actor=curator, key=source.key, label=source.label, authority_tier=source.tier,
                weak=source.weak,
            )  # fmt: skip
    export = services.decision_type_create(
        actor=olivia, key=EXPORT_TYPE, title="Release under the general export licence"
    )
    services.access_grant(actor=olivia, decision_type=export, user=rafael, role="reviewer")
    plan = contract_import.import_plan(export, domain)
    contract_import.import_apply(
        actor=olivia, decision_type=export, directory=domain, confirmed_sha256=plan.sha256
    )
    keys = KeyFiles(tmp_path / "people")
    keys.ensure(olivia), keys.ensure(rafael)
    first = export.versions.get(number=1)
    submitted = review.version_submit(
        actor=olivia, version=first, expected_lock_version=first.lock_version
    )
    report = review.report_ensure(submitted)
    keys.approve(actor=rafael, version=submitted, report_sha256=report.sha256)
    keys.publish(actor=olivia, version=submitted)
    draft = services.version_start_draft(actor=olivia, decision_type=export)
    services.accepted_class_remove(
        actor=olivia, proposition=draft.propositions.get(key="installation_site_verified"),
        expected_lock_version=draft.lock_version, class_key="site_survey_report",
    )  # fmt: skip
    return export, draft, olivia


@pytest.mark.django_db(transaction=True)
def test_a_retrieval_service_built_from_the_docs_decides_posts_and_is_replayed(
    live_server, tmp_path, client
):
    from publishing import tokens
    from publishing.models import DecisionReceipt

    export, draft, olivia = publish_export_desk(tmp_path)
    _token, secret = tokens.token_create(
        actor=olivia, name="export search", decision_types=[export]
    )
    token_file = tmp_path / "token"
    token_file.write_text(secret + "\n")
    work = tmp_path / "service"

    def run_service() -> dict:
        ran = subprocess.run(
            [sys.executable, str(ROOT / "examples" / "retrieval_service.py"), live_server.url,
             str(token_file), str(work), "--queries", str(QUERIES),
             "--documents", str(DOCUMENTS)],
            capture_output=True, text=True, timeout=600,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )  # fmt: skip
        assert ran.returncode == 0, ran.stderr
        return json.loads(ran.stdout)

    summary = run_service()
    print(json.dumps(summary, indent=1))  # shown when an assertion fails
    assert summary["bundle"]["decision_type"] == EXPORT_TYPE
    assert summary["bundle"]["version"] == "1"
    assert summary["documents"] == DOCUMENTS
    assert summary["decisions"] == QUERIES
    assert summary["results"] == {"compiled": QUERIES}
    assert summary["receipts"] == {"accepted": QUERIES, "duplicate": 0, "refused": 0}
    # Retrieval pools as they come: dependencies and successors that were never indexed.
    assert summary["rejections"]["dependency_absent"] > 0
    assert summary["rejections"]["not_applicable"] > 0
    assert summary["slots"]["installation_site_verified: supported"] == QUERIES
    assert (work / "bundle" / "bundle.json").exists() and (work / "keys.json").exists()
    assert DecisionReceipt.objects.filter(decision_type=export).count() == QUERIES

    # Posting the same receipts again is safe: each is a duplicate.
    assert run_service()["receipts"] == {"accepted": 0, "duplicate": QUERIES, "refused": 0}

    # The owner replays them on the draft's impact report (its button; tasks run at once).
    client.force_login(olivia)
    replay = f"/types/{EXPORT_TYPE}/v{draft.number}/recorded-decisions/replay/"
    assert client.post(replay).status_code in (200, 302)
    page = client.get(f"/types/{EXPORT_TYPE}/v{draft.number}/impact/").content.decode()
    assert f"{QUERIES} decision(s) replayed" in page
    assert "installation_site_verified" in page
