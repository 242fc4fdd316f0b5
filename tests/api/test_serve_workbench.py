"""End to end with the workbench: `serve` answers from the bundle pulled from a live
workbench, the owner publishes version 2 (approved and signed as in the demo), a second pull
replaces the file, and the same server process answers with version 2's contract."""

from __future__ import annotations

import io
import json
import sys
import time
import urllib.request
from pathlib import Path

from compiler_tools import main

# The compiler tests' helpers: the Atlas request and a decision server in a thread.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "compiler"))
from atlas_bundle import atlas_request  # noqa: E402
from serving import DecisionServer  # noqa: E402

ATLAS = "credit.review.continuation"


def test_publish_then_pull_and_the_server_answers_with_the_new_version(live_server, tmp_path):
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from contracts import services
    from contracts.demo import ATLAS_V2_CHANGE
    from contracts.models import DecisionType
    from publishing import review, tokens
    from publishing.demo import demo_key_files

    call_command("load_demo", stdout=io.StringIO())  # Atlas v1 published, v2 drafted
    people = get_user_model().objects
    olivia, rafael = people.get(username="olivia"), people.get(username="rafael")
    atlas = DecisionType.objects.get(key=ATLAS)
    _token, secret = tokens.token_create(actor=olivia, name="decisions", decision_types=[atlas])
    api = f"{live_server.url}/api/v1/types/{ATLAS}"
    token_file, keys, out = tmp_path / "token", tmp_path / "keys.json", tmp_path / "bundles"
    token_file.write_text(secret + "\n")
    fetch = urllib.request.Request(f"{api}/keys", headers={"Authorization": f"Bearer {secret}"})
    with urllib.request.urlopen(fetch) as answer:  # noqa: S310
        keys.write_bytes(answer.read())

    def pull() -> str:
        stdout, stderr = io.StringIO(), io.StringIO()
        argv = ["pull", f"{api}/bundle", "--token-file", str(token_file),
                "--public-key", str(keys), "--out", str(out)]  # fmt: skip
        assert main(argv, stdout, stderr) == 0, stderr.getvalue()
        return stdout.getvalue()

    assert pull().startswith(f"updated: {ATLAS} version 1")
    document = atlas_request()
    server = DecisionServer(out, keys)
    try:
        status, body = server.decide(document)
        assert (status, body["bundle"]["version"]) == (200, "1"), body
        first_plan = body["output"]["plan_id"]

        # The demo's draft swaps an accepted class, which breaks its scenarios; undone, version
        # 2 differs from version 1 in its number only, which is enough for a new plan.
        draft = atlas.versions.get(number=2)
        key, old, new = ATLAS_V2_CHANGE
        proposition = draft.propositions.get(key=key)
        for change, class_key in ((services.accepted_class_remove, new),
                                  (services.accepted_class_add, old)):  # fmt: skip
            draft.refresh_from_db()
            change(actor=olivia, proposition=proposition,
                   expected_lock_version=draft.lock_version, class_key=class_key)  # fmt: skip
        draft.refresh_from_db()
        version = review.version_submit(
            actor=olivia, version=draft, expected_lock_version=draft.lock_version
        )
        report = review.report_ensure(version)
        demo_key_files().approve(actor=rafael, version=version, report_sha256=report.sha256,
                                 acknowledged_widenings=report.widening_ids)  # fmt: skip
        published = demo_key_files().publish(actor=olivia, version=version)
        assert pull().startswith(f"updated: {ATLAS} version 2")

        deadline = time.monotonic() + 10
        while body["bundle"]["version"] != "2" and time.monotonic() < deadline:
            time.sleep(0.05)
            status, body = server.decide(document)
        assert body["bundle"] == {"decision_type": ATLAS, "version": "2",
                                  "sha256": published.sha256}  # fmt: skip
        assert body["output"]["plan_id"] != first_plan
        assert body["output"]["contract"]["version"] == "2"
        assert json.loads((out / "bundle.json").read_bytes())["sha256"] == published.sha256
    finally:
        server.stop()
