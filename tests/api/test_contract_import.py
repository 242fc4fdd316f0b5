"""Importing a contract test directory whose contract differs from the draft: the preview
lists the differences and changes nothing; confirming makes the draft say what the file says
(through the editor's services, audited, in one transaction with the suite); a preview made
stale by an edit is refused (409 on the page); a class the catalogue lacks, a type with no
editable draft and a viewer are refused, and nothing changes."""

from __future__ import annotations

import io
import zipfile

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command

from tests.api.conftest import ATLAS

URL = f"/types/{ATLAS}/contract-tests/import/"


def export(directory):
    call_command("export_contract_tests", ATLAS, str(directory), stdout=io.StringIO())
    return directory


def rewrite_contract(directory, change) -> str:
    """Apply `change` to contract.yaml's document; write it the way the export writes it
    (its comment line, then the YAML) and return the new text."""
    path = directory / "contract.yaml"
    comment, _ = path.read_text().split("\n", 1)
    document = yaml.safe_load(path.read_text())
    change(document)
    text = comment + "\n" + yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    path.write_text(text)
    return text


def drop_review_open(directory) -> None:
    """The scenarios of a file that removes `review_open` no longer expect its slot."""
    for path in (directory / "scenarios").iterdir():
        document = yaml.safe_load(path.read_text())
        document["expected"]["slots"].pop("review_open", None)
        path.write_text(yaml.safe_dump(document, sort_keys=False))


def the_file_contract(document):
    """Every kind of change the editor can make: settings, a proposition's fields, its
    classes' order, one proposition removed and one added, the propositions' order."""
    contract = document["contract"]
    contract["purposes"] = ["annual_credit_review", "quarterly_credit_review"]
    contract["policy"].update(version=2, min_relevance=0.25)
    contract["policy"]["role_order"] = ["task", "instruction", "state", "evidence", "support",
                                        "tool"]  # fmt: skip
    by_key = {p["key"]: p for p in contract["propositions"]}
    by_key["facility_limit"]["description"] = "The approved limit, from the facility system."
    by_key["waiver_valid"]["accepted_classes"] = ["case_note", "approved_waiver"]
    added = {"key": "review_progress", "accepted_classes": ["workflow_event"],
             "required": False, "max_items": 2, "description": "Where it stands."}  # fmt: skip
    contract["propositions"] = [by_key["continuation_rule"], by_key["facility_limit"],
                                by_key["waiver_valid"], added]  # fmt: skip


def draft(demo):
    from contracts.documents import contract_document
    from contracts.models import ContractVersion

    version = ContractVersion.objects.get(decision_type=demo[ATLAS], number=2)
    return version, contract_document(version)


def preview(directory) -> str:
    out = io.StringIO()
    call_command("import_contract_tests", ATLAS, str(directory), stdout=out)
    return out.getvalue()


def confirm(directory, sha, username="olivia"):
    call_command("import_contract_tests", ATLAS, str(directory), "--confirm", sha,
                 "--as", username, stdout=io.StringIO())  # fmt: skip


def test_a_differing_contract_is_listed_and_applied_only_once_confirmed(demo, tmp_path):
    from contracts.models import AuditEvent

    directory = export(tmp_path / "suite")
    edited = rewrite_contract(directory, the_file_contract)
    drop_review_open(directory)
    version, before = draft(demo)
    audits = AuditEvent.objects.count()

    text = preview(directory)
    assert "Contract: Adds the fact 'review_progress'" in text
    assert "Contract: Removes the fact 'review_open'" in text
    assert "Confirming makes draft version 2 say what the file says" in text
    assert draft(demo)[1] == before and AuditEvent.objects.count() == audits  # nothing yet

    confirm(directory, text.split("--confirm ")[1].split()[0])
    version, after = draft(demo)
    file_contract = yaml.safe_load(edited)["contract"]
    assert after == file_contract
    new_events = list(AuditEvent.objects.order_by("pk")[audits:])
    assert {e.actor.username for e in new_events} == {"olivia"}
    assert {e.action for e in new_events if e.version_id == version.pk} == {
        "version.settings_updated", "proposition.updated", "proposition.deleted",
        "proposition.added", "proposition.moved", "accepted_class.moved",
    }  # fmt: skip
    again = export(tmp_path / "again")
    assert (again / "contract.yaml").read_text() == edited
    assert "Contract: the same as the current draft." in preview(directory)


def upload_zip(directory) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(directory.rglob("*.yaml")):
            archive.writestr(f"{ATLAS}/{path.relative_to(directory).as_posix()}", path.read_text())
    return buffer.getvalue()


def page_preview(client, directory):
    shown = client.post(URL, {"file": SimpleUploadedFile("t.zip", upload_zip(directory))})
    page = shown.content.decode()
    fields = {name: page.split(f'name="{name}" value="')[1].split('"')[0]
              for name in ("archive", "confirm") if f'name="{name}"' in page}  # fmt: skip
    return shown, page, fields


def test_the_page_previews_the_contract_then_applies_it_on_confirm(client, olivia, demo,
                                                                    tmp_path):  # fmt: skip
    directory = export(tmp_path / "suite")
    edited = rewrite_contract(directory, the_file_contract)
    drop_review_open(directory)
    _, before = draft(demo)
    client.force_login(olivia)
    shown, page, fields = page_preview(client, directory)
    assert shown.status_code == 200
    assert "Adds the fact &#x27;review_progress&#x27;" in page
    assert "Apply the contract to draft version 2 and import" in page
    assert draft(demo)[1] == before
    done = client.post(URL, fields)
    assert done.status_code == 302
    assert draft(demo)[1] == yaml.safe_load(edited)["contract"]


def test_a_preview_made_stale_by_an_edit_of_the_draft_is_refused(client, olivia, demo,
                                                                 tmp_path):  # fmt: skip
    from contracts import services

    directory = export(tmp_path / "suite")
    rewrite_contract(directory, the_file_contract)
    drop_review_open(directory)
    sha = preview(directory).split("--confirm ")[1].split()[0]
    client.force_login(olivia)
    _, _, fields = page_preview(client, directory)
    version, _ = draft(demo)
    proposition = version.propositions.get(key="facility_limit")
    services.proposition_update(
        actor=olivia,
        proposition=proposition,
        expected_lock_version=version.lock_version,
        key="facility_limit",
        description="edited meanwhile",
        required=True,
        max_items=1,
    )
    _, meanwhile = draft(demo)

    with pytest.raises(CommandError, match="changed since this plan was shown"):
        confirm(directory, sha)
    refused = client.post(URL, fields)
    assert refused.status_code == 409
    assert "changed since this plan was shown" in refused.content.decode()
    assert draft(demo)[1] == meanwhile  # neither confirmation changed anything


def test_a_class_the_catalogue_lacks_is_refused_with_its_field(client, olivia, demo, tmp_path):
    directory = export(tmp_path / "suite")

    def unknown(document):
        document["contract"]["propositions"][2]["accepted_classes"].append("board_minute")

    rewrite_contract(directory, unknown)
    expected = ("contract.yaml: contract.propositions.2.accepted_classes: 'board_minute' is not "
                "in the source-class catalogue.")  # fmt: skip
    with pytest.raises(CommandError) as raised:
        preview(directory)
    assert str(raised.value) == expected
    client.force_login(olivia)
    shown, page, _ = page_preview(client, directory)
    assert shown.status_code == 422
    assert expected.replace("'", "&#x27;") in page and 'name="confirm"' not in page


@pytest.mark.parametrize(
    ("field", "change"),
    [
        ("contract.policy.name", lambda c: c["policy"].update(name="release-packet")),
        ("contract.purposes.0", lambda c: c.update(purposes=["Annual review"])),
        (
            "contract.propositions.4.key",
            lambda c: c["propositions"].append(
                {
                    "key": "hard-stop",
                    "accepted_classes": ["case_note"],
                    "required": False,
                    "max_items": 1,
                    "description": "",
                }  # fmt: skip
            ),
        ),
    ],
)
def test_a_key_the_editor_would_refuse_is_refused_at_the_preview(demo, tmp_path, field, change):
    """The compiler reads any string as a policy name, a purpose or a proposition key; the
    workbench stores lower-case words joined by underscores. The preview says so, with the
    field, before anything is applied (not part way through the confirm)."""
    directory = export(tmp_path / "suite")
    rewrite_contract(directory, lambda document: change(document["contract"]))
    before = draft(demo)[1]
    with pytest.raises(CommandError) as raised:
        preview(directory)
    assert str(raised.value).startswith(f"contract.yaml: {field}: ")
    assert "Lower-case letters, digits and underscores" in str(raised.value)
    assert draft(demo)[1] == before


def test_a_retired_class_is_refused_unless_the_draft_already_accepts_it(demo, tmp_path):
    from django.contrib.auth import get_user_model

    from contracts import services
    from contracts.models import SourceClass

    cora = get_user_model().objects.get(username="cora")
    for key in ("committee_record", "case_note"):  # case_note: waiver_valid accepts it
        retiring = SourceClass.objects.get(key=key)
        services.source_class_update(
            actor=cora, source_class=retiring, expected_lock_version=retiring.lock_version,
            label=retiring.label, description=retiring.description,
            authority_tier=retiring.authority_tier, weak=retiring.weak, retired=True,
        )  # fmt: skip
    directory = export(tmp_path / "suite")

    def reorder(document):
        document["contract"]["propositions"][2]["accepted_classes"].reverse()

    rewrite_contract(directory, reorder)
    assert "Confirming makes draft version 2" in preview(directory)  # case_note is kept

    def add_retired(document):
        document["contract"]["propositions"][2]["accepted_classes"].append("committee_record")

    rewrite_contract(directory, add_retired)
    with pytest.raises(CommandError) as raised:
        preview(directory)
    assert str(raised.value) == (
        "contract.yaml: contract.propositions.2.accepted_classes: 'committee_record' is "
        "retired; no candidate can carry it."
    )


def test_without_an_editable_draft_the_contract_is_not_applied(olivia, demo, tmp_path):
    from publishing.review.transitions import version_retire
    from scenarios.models import Scenario

    directory = export(tmp_path / "suite")
    rewrite_contract(directory, the_file_contract)
    drop_review_open(directory)
    version, _ = draft(demo)
    version_retire(actor=olivia, version=version, reason="abandoned")
    slots = {s.name: s.expected_slots for s in Scenario.objects.filter(decision_type=demo[ATLAS])}
    text = preview(directory)
    assert "there is no editable draft to apply it to" in text
    assert "(version 2 is retired)" in text
    with pytest.raises(CommandError, match="start a new draft in the editor"):
        confirm(directory, text.split("--confirm ")[1].split()[0])
    assert {s.name: s.expected_slots for s in Scenario.objects.filter(
        decision_type=demo[ATLAS])} == slots  # fmt: skip


def test_a_viewer_can_neither_preview_nor_confirm(client, olivia, demo, tmp_path):
    from django.contrib.auth import get_user_model

    directory = export(tmp_path / "suite")
    rewrite_contract(directory, the_file_contract)
    drop_review_open(directory)
    _, before = draft(demo)
    client.force_login(olivia)
    _, _, fields = page_preview(client, directory)  # a plan an owner may confirm
    sha = preview(directory).split("--confirm ")[1].split()[0]

    client.force_login(get_user_model().objects.get(username="vera"))
    assert client.get(URL).status_code == 403
    upload = SimpleUploadedFile("t.zip", upload_zip(directory))
    assert client.post(URL, {"file": upload}).status_code == 403
    assert client.post(URL, fields).status_code == 403
    with pytest.raises(CommandError, match="vera may not edit"):
        confirm(directory, sha, username="vera")
    assert draft(demo)[1] == before
