"""Contract tests as files: the workbench exports a type's suite in the format
`evidence-compiler test` runs, and an import shows its plan and changes nothing until
confirmed."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
import yaml
from django.core.management import CommandError, call_command

from tests.api.conftest import ATLAS


def export(tmp_path):
    out = io.StringIO()
    call_command("export_contract_tests", ATLAS, str(tmp_path / "suite"), stdout=out)
    return tmp_path / "suite"


def test_the_export_is_a_directory_evidence_compiler_test_runs(demo, tmp_path):
    from compiler_tools import load_tests
    from scenarios.models import Scenario

    directory = export(tmp_path)
    tests = load_tests(directory)
    assert tests.contract.decision_type == ATLAS and tests.contract.version == "2"
    assert {c.name for c in tests.cases} == set(
        Scenario.objects.filter(decision_type=demo[ATLAS]).values_list("name", flat=True)
    )
    assert "case_note" in tests.weak_classes


def test_importing_the_export_back_changes_nothing(demo, tmp_path):
    directory = export(tmp_path)
    out = io.StringIO()
    call_command("import_contract_tests", ATLAS, str(directory), stdout=out)
    text = out.getvalue()
    assert "Contract: the same as the current draft." in text
    assert "Adds" not in text and "Replaces" not in text
    assert "Nothing was changed." in text


def test_an_import_shows_its_plan_and_writes_only_once_confirmed(demo, tmp_path):
    from scenarios.models import Scenario

    directory = export(tmp_path)
    path = next((directory / "scenarios").iterdir())
    document = yaml.safe_load(path.read_text())
    document["description"] = "edited in a pull request"
    path.write_text(yaml.safe_dump(document))
    new = dict(document, name="a new scenario", description="")
    (directory / "scenarios" / "new.yaml").write_text(yaml.safe_dump(new))
    out = io.StringIO()
    call_command("import_contract_tests", ATLAS, str(directory), stdout=out)
    text = out.getvalue()
    assert f"Replaces scenario '{document['name']}'." in text
    assert "Adds scenario 'a new scenario'." in text
    assert not Scenario.objects.filter(name="a new scenario").exists()
    sha = text.split("--confirm ")[1].split()[0]
    with pytest.raises(CommandError, match="changed since this plan"):
        call_command("import_contract_tests", ATLAS, str(directory), "--confirm", "0" * 64,
                     "--as", "olivia", stdout=io.StringIO())  # fmt: skip
    assert not Scenario.objects.filter(name="a new scenario").exists()
    call_command("import_contract_tests", ATLAS, str(directory), "--confirm", sha,
                 "--as", "olivia", stdout=io.StringIO())  # fmt: skip
    assert Scenario.objects.get(name=document["name"]).description == "edited in a pull request"
    assert Scenario.objects.filter(name="a new scenario").exists()


def test_invalid_files_are_listed_with_their_file_and_nothing_is_written(demo, tmp_path):
    from scenarios.models import Scenario

    directory = export(tmp_path)
    before = Scenario.objects.count()
    path = next((directory / "scenarios").iterdir())
    document = yaml.safe_load(path.read_text())
    document["request"]["token_budget"] = -1
    path.write_text(yaml.safe_dump(document))
    with pytest.raises(CommandError, match=f"{path.name}.*token_budget"):
        call_command("import_contract_tests", ATLAS, str(directory), stdout=io.StringIO())
    assert Scenario.objects.count() == before


def test_the_zip_download_holds_the_same_files(client, olivia, demo, tmp_path):
    directory = export(tmp_path)
    client.force_login(olivia)
    response = client.get(f"/types/{ATLAS}/contract-tests.zip")
    assert response.status_code == 200
    with zipfile.ZipFile(io.BytesIO(response.content)) as archive:
        names = {n.split("/", 1)[1]: archive.read(n).decode() for n in archive.namelist()}
    on_disk = {p.relative_to(directory).as_posix(): p.read_text()
               for p in directory.rglob("*.yaml")}  # fmt: skip
    assert names == on_disk
    assert json.dumps(names)  # text only


def test_the_zip_download_needs_access_to_the_type(client, make_user, demo):
    client.force_login(make_user("nobody"))
    assert client.get(f"/types/{ATLAS}/contract-tests.zip").status_code == 404


def test_the_upload_page_shows_the_plan_and_writes_only_on_confirm(client, olivia, demo):
    from django.core.files.uploadedfile import SimpleUploadedFile

    from scenarios.models import Scenario

    client.force_login(olivia)
    archive = client.get(f"/types/{ATLAS}/contract-tests.zip").content
    with zipfile.ZipFile(io.BytesIO(archive)) as source:
        files = {n: source.read(n) for n in source.namelist()}
    name = next(n for n in files if "/scenarios/" in n)
    document = yaml.safe_load(files[name])
    files[name.replace(name.rsplit("/", 1)[1], "copy.yaml")] = yaml.safe_dump(
        dict(document, name="copied <b>scenario</b>")).encode()  # fmt: skip
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        for member, data in files.items():
            target.writestr(member, data)
    url = f"/types/{ATLAS}/contract-tests/import/"
    shown = client.post(url, {"file": SimpleUploadedFile("t.zip", buffer.getvalue())})
    page = shown.content.decode()
    assert shown.status_code == 200
    assert "Adds scenario &#x27;copied &lt;b&gt;scenario&lt;/b&gt;&#x27;." in page
    assert not Scenario.objects.filter(name="copied <b>scenario</b>").exists()
    archive_field = page.split('name="archive" value="')[1].split('"')[0]
    sha = page.split('name="confirm" value="')[1].split('"')[0]
    done = client.post(url, {"archive": archive_field, "confirm": sha})
    assert done.status_code == 302
    assert Scenario.objects.filter(name="copied <b>scenario</b>").exists()


def test_the_upload_page_refuses_a_zip_with_an_unsafe_path(client, olivia, demo):
    from django.core.files.uploadedfile import SimpleUploadedFile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as target:
        target.writestr("../contract.yaml", "format: x")
    client.force_login(olivia)
    response = client.post(f"/types/{ATLAS}/contract-tests/import/",
                           {"file": SimpleUploadedFile("t.zip", buffer.getvalue())})  # fmt: skip
    assert response.status_code == 422
    assert "not a plain relative path" in response.content.decode()


def test_only_an_owner_may_import(client, demo):
    from django.contrib.auth import get_user_model

    client.force_login(get_user_model().objects.get(username="rafael"))
    assert client.get(f"/types/{ATLAS}/contract-tests/import/").status_code == 403
