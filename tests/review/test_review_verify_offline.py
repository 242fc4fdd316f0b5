"""What the published version's page tells a verifier works as printed: download the bundle
and the key set through the page's own links, run the printed command verbatim in a folder
holding both, and the compiler accepts the bundle. On the vendor onboarding type (not the demo)."""

from __future__ import annotations

import html
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from django.urls import reverse
from vendor_onboarding import create

from publishing import review

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def published(owner, reviewer, catalogue_manager, keys, devices):
    decision_type = create(owner=owner, reviewer=reviewer, catalogue_manager=catalogue_manager)
    version = decision_type.versions.get(number=1)
    version = review.version_submit(
        actor=owner, version=version, expected_lock_version=version.lock_version
    )
    report = review.report_ensure(version)
    devices.approve(actor=reviewer, version=version, report_sha256=report.sha256)
    version.refresh_from_db()
    devices.publish(actor=owner, version=version)
    version.refresh_from_db()
    return version


def href(page: str, element_id: str) -> str:
    tag = re.search(rf'<a [^>]*id="{element_id}"[^>]*>', page).group(0)
    return html.unescape(re.search(r'href="([^"]+)"', tag).group(1))


def test_the_printed_verify_command_works_verbatim(client, reviewer, published, tmp_path):
    folder = tmp_path / "verifier"
    folder.mkdir()
    client.force_login(reviewer)
    args = [published.decision_type.key, published.number]
    page = client.get(reverse("version_review", args=args)).content.decode()
    section = page[page.index('id="verify-bundle"') :]
    command = html.unescape(re.search(r"<pre><code>(.*?)</code></pre>", section).group(1))
    assert "…" not in command
    for link_id in ("download-bundle", "download-key-set"):
        response = client.get(href(page, link_id))
        assert response.status_code == 200
        name = re.search(r'filename="([^"]+)"', response["Content-Disposition"]).group(1)
        (folder / name).write_bytes(response.content)
    assert sorted(p.name for p in folder.iterdir()) == sorted(
        [published.bundle.filename, "keys.json"]
    )
    argv = shlex.split(command)
    assert argv[:3] == ["python", "-m", "compiler_tools"]
    done = subprocess.run(
        [sys.executable, *argv[1:]],
        cwd=folder,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    # The same bundle with a key set that lacks its signers is refused: the check is real.
    (folder / "keys.json").write_text('{"keys": []}')
    refused = subprocess.run(
        [sys.executable, *argv[1:]], cwd=folder, env={"PYTHONPATH": str(ROOT)},
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert refused.returncode != 0


def test_the_key_set_is_for_people_who_may_view_the_type(client, make_user, published):
    args = [published.decision_type.key, published.number]
    anonymous = client.get(reverse("version_key_set", args=args))
    assert anonymous.status_code in (302, 403, 404)
    client.force_login(make_user("stranger"))
    assert client.get(reverse("version_key_set", args=args)).status_code == 404


COPY_BLOCK = re.compile(r'<div class="command" data-copy><pre><code>(.*?)</code></pre></div>', re.S)


def test_commands_to_copy_are_shown_whole(client, owner, reviewer, catalogue_manager, keys):
    """The sign-approval line under the approve form and the corpus import format are whole
    (no ellipsis), each in a block workbench.js gives a copy button; no inline script."""
    decision_type = create(owner=owner, reviewer=reviewer, catalogue_manager=catalogue_manager)
    version = decision_type.versions.get(number=1)
    version = review.version_submit(
        actor=owner, version=version, expected_lock_version=version.lock_version
    )
    review.report_ensure(version)
    client.force_login(reviewer)
    page = client.get(reverse("version_review", args=[decision_type.key, 1])).content.decode()
    commands = [html.unescape(c) for c in COPY_BLOCK.findall(page)]
    assert commands == [
        f"evidence-compiler sign-approval statement.json --key {reviewer.get_username()}.key"
    ]
    assert re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page) == []

    client.force_login(owner)
    page = client.get(
        reverse("scenarios:corpus_import", kwargs={"key": decision_type.key})
    ).content.decode()
    (hint,) = [html.unescape(c) for c in COPY_BLOCK.findall(page)]
    assert "…" not in hint
    assert set(json.loads(hint)) == {"directory", "candidates"}


def test_the_copy_button_script_is_a_static_file():
    script = (ROOT / "static" / "workbench" / "workbench.js").read_text()
    assert "[data-copy]" in script and "navigator.clipboard.writeText" in script
