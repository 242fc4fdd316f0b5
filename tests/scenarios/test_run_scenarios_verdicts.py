"""`run_scenarios` prints the verdicts of every perturbation and exits 1 on a violation: on the
demo, version 1 passes and version 2 (whose waiver may rest on a case note) fails, naming the
weak promotion on `waiver_valid`."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import call_command

from scenarios import demo

pytestmark = pytest.mark.django_db


def test_demo_version_1_has_no_violation(demo_versions):
    out = io.StringIO()
    call_command("run_scenarios", demo.ATLAS_KEY, "--version", "1", "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["violations"] == 0
    assert report["verdicts"] and {v["kind"] for v in report["verdicts"]} == {"finding"}


def test_demo_version_2_fails_naming_the_weak_promotion(demo_versions):
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("run_scenarios", demo.ATLAS_KEY, "--version", "2", "--json", stdout=out)
    assert exited.value.code == 1
    report = json.loads(out.getvalue())
    violations = {
        (v["perturbation"].split("(")[0], v["proposition"])
        for v in report["verdicts"]
        if v["kind"] == "violation"
    }
    assert violations == {("promote_weak", "waiver_valid")}
    assert report["verdicts"][0]["kind"] == "violation"
    text = io.StringIO()
    with pytest.raises(SystemExit):
        call_command("run_scenarios", demo.ATLAS_KEY, "--version", "2", stdout=text)
    assert "VIOLATION" in text.getvalue() and "waiver_valid accepts a weak class" in text.getvalue()
