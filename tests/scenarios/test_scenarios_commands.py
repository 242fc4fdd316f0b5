"""import_fixtures and run_scenarios: output, JSON and exit codes."""

from __future__ import annotations

import io
import json

import pytest
from django.core.management import CommandError, call_command

from scenarios import services
from scenarios.models import Corpus

pytestmark = pytest.mark.django_db
KEY = "credit.review.continuation"


def test_import_fixtures(atlas, atlas_document, tmp_path):
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(atlas_document))
    out = io.StringIO()
    call_command("import_fixtures", KEY, str(path), stdout=out)
    assert "Imported 6 candidates into corpus 'seed'" in out.getvalue()
    assert Corpus.objects.get(name="seed").candidates.count() == 6


def test_import_fixtures_lists_every_problem(atlas, atlas_document, tmp_path):
    atlas_document["candidates"][0]["relevance"] = -1
    atlas_document["candidates"][5]["supports"] = "waiver_valid"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(atlas_document))
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("import_fixtures", KEY, str(path), stderr=err)
    lines = err.getvalue().splitlines()
    assert lines[0].startswith("item 0 (id 'facility-F102'), field relevance:")
    assert lines[1].startswith("item 5 (id 'investigation-X9'), field supports:")
    assert not Corpus.objects.exists()


def test_run_scenarios_passes_and_prints_flips(scenario):
    out = io.StringIO()
    call_command("run_scenarios", KEY, stdout=out)
    text = out.getvalue()
    assert "1 scenarios" in text and "0 expectation failure(s)" in text
    assert "hide(facility-F102): facility_limit supported -> unknown" in text


def test_run_scenarios_fails_with_exit_1_and_json(owner, atlas, corpus, scenario_fields):
    services.scenario_create(
        actor=owner,
        decision_type=atlas,
        corpus=corpus,
        name="wrong",
        **scenario_fields(expected_slots={"waiver_valid": "supported"}),
    )
    out = io.StringIO()
    with pytest.raises(SystemExit) as exited:
        call_command("run_scenarios", KEY, "--version", "1", "--json", stdout=out)
    assert exited.value.code == 1
    report = json.loads(out.getvalue())
    assert report["failures"] == [
        {
            "scenario": "wrong",
            "what": "slot",
            "key": "waiver_valid",
            "expected": "supported",
            "actual": "unknown",
        }
    ]
    assert report["flips"] and report["summary"]["failures"] == 1


def test_run_scenarios_unknown_version(scenario):
    with pytest.raises(CommandError, match="no version 9"):
        call_command("run_scenarios", KEY, "--version", "9")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (
            b'{"candidates": [\n  "caf\xe9"]}',
            "item -, field (document): not UTF-8 text: byte 23 cannot be decoded (line 2 column 7)",
        ),
        (b"[" * 50_000 + b"]" * 50_000, "nested more than 64 levels deep at line 1 column 65"),
        (b'{"candidates": [' + b"7" * 5_000 + b"]}", "more than 100 digits at line 1 column 17"),
        (b'{"candidates": [{"id": "\\ud800"}]}', "item 0, field id: a \\u escape names half"),
    ],
)
def test_import_fixtures_refuses_an_unreadable_file_with_its_location(
    atlas, tmp_path, content, message
):
    path = tmp_path / "hostile.json"
    path.write_bytes(content)
    err = io.StringIO()
    with pytest.raises(CommandError, match="cannot be read as JSON; nothing was saved"):
        call_command("import_fixtures", KEY, str(path), stderr=err)
    assert message in err.getvalue()
    assert not Corpus.objects.exists()


def test_import_fixtures_refuses_a_missing_file_without_a_traceback(atlas, tmp_path):
    with pytest.raises(CommandError, match="Cannot read .*missing.json: No such file"):
        call_command("import_fixtures", KEY, str(tmp_path / "missing.json"))
