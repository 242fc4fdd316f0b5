"""Hostile contract-test uploads: a zip with a damaged, encrypted, escaping, repeated or
oversized member, too many members, or a YAML alias bomb in one of its files is refused on
the page with the member or file named (422, never a 500), at the preview and at the
confirmation alike, and nothing is saved; `import_contract_tests` refuses the bomb too, and a
file whose aliases are ordinary still imports.

On a decision type of its own (tests/port_clearance.py): a vessel cleared to berth."""

from __future__ import annotations

import base64
import io
import struct
import tempfile
import zipfile

import pytest
import yaml
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import CommandError, call_command
from django.utils.html import escape

from publishing.contract_files import UPLOAD_MAX_BYTES, UPLOAD_MAX_MEMBERS
from scenarios import services
from scenarios.models import Corpus, Scenario
from tests import port_clearance as port

pytestmark = pytest.mark.django_db

URL = f"/types/{port.KEY}/contract-tests/import/"
ROOT = port.KEY  # the export's folder inside the zip
EXTRA = f"{ROOT}/scenarios/extra.yaml"  # a scenario the workbench lacks: confirming adds it


def laughs(levels: int = 9) -> str:
    """A "billion laughs": ten aliases per level, 10**9 strings once expanded."""
    lines = ['l0: &l0 ["lol"]']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * 10) + "]"
              for i in range(1, levels + 1)]  # fmt: skip
    return "\n".join(lines) + "\n"


@pytest.fixture
def berth(owner, catalogue_manager):
    decision_type = port.make_type(owner=owner, catalogue_manager=catalogue_manager)
    corpus = port.make_corpus(owner=owner, decision_type=decision_type)
    services.scenario_create(actor=owner, decision_type=decision_type, corpus=corpus,
                             name="berth", **port.request_fields())  # fmt: skip
    return decision_type


@pytest.fixture
def files(client, owner, berth) -> dict[str, bytes]:
    """The type's exported files, and one scenario more (so a confirmation would write)."""
    client.force_login(owner)
    archive = client.get(f"/types/{port.KEY}/contract-tests.zip").content
    with zipfile.ZipFile(io.BytesIO(archive)) as source:
        exported = {n: source.read(n) for n in source.namelist()}
    document = yaml.safe_load(exported[f"{ROOT}/scenarios/berth.yaml"])
    exported[EXTRA] = yaml.safe_dump(dict(document, name="extra")).encode()
    return exported


def make_zip(files: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", method) as target:
        for name, data in files.items():
            target.writestr(name, data)
    return buffer.getvalue()


# Offsets of fields in a member's local header and in its central directory entry.
LOCAL = {"flags": 6, "method": 8, "crc": 14, "size": 22}
CENTRAL = {"flags": 8, "method": 10, "crc": 16, "size": 24}


def patched(data: bytes, name: str, field: str, change) -> bytes:
    """`data` with `field` of member `name` changed (`change(old) -> new`) in both of the
    places a zip records it."""
    out = bytearray(data)
    fmt = "<H" if field in ("flags", "method") else "<I"
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info, at = archive.getinfo(name), archive.start_dir
    places = [info.header_offset + LOCAL[field]]
    while out[at : at + 4] == b"PK\x01\x02":
        length, extra, comment = struct.unpack_from("<HHH", out, at + 28)
        if out[at + 46 : at + 46 + length].decode() == name:
            places.append(at + CENTRAL[field])
        at += 46 + length + extra + comment
    for place in places:
        (old,) = struct.unpack_from(fmt, out, place)
        struct.pack_into(fmt, out, place, change(old))
    return bytes(out)


def garbled(data: bytes, name: str) -> bytes:
    """The first bytes of the member's compressed data flipped."""
    out = bytearray(data)
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        info = archive.getinfo(name)
    start = info.header_offset + 30 + len(info.filename.encode())
    out[start] ^= 0xFF
    out[start + 1] ^= 0xFF
    return bytes(out)


def snapshot(decision_type) -> tuple:
    from contracts import selectors
    from contracts.documents import contract_document

    version = selectors.current_version(decision_type=decision_type)
    return (
        sorted(Scenario.objects.filter(decision_type=decision_type).values_list("name", "pk")),
        sorted(Corpus.objects.filter(decision_type=decision_type).values_list("name", "pk")),
        contract_document(version),
    )


def post(client, archive: bytes, mode: str):
    if mode == "preview":
        return client.post(URL, {"file": SimpleUploadedFile("suite.zip", archive)})
    # The confirmation carries the zip back; whatever the plan's digest, a bad zip is refused
    # before it is compared.
    fields = {"archive": base64.b64encode(archive).decode("ascii"), "confirm": "0" * 64}
    return client.post(URL, fields)


def bad_crc(files):
    return patched(make_zip(files, zipfile.ZIP_STORED), EXTRA, "crc", lambda crc: crc ^ 1)


def longer_than_declared(files):
    return patched(make_zip(files), EXTRA, "size", lambda size: size // 2)


def garbled_data(files):
    return garbled(make_zip(files), EXTRA)


def unknown_method(files):
    return patched(make_zip(files), EXTRA, "method", lambda _: 99)


def encrypted(files):
    return patched(make_zip(files), EXTRA, "flags", lambda flags: flags | 0x1)


def escaping(files):
    return make_zip({**files, f"{ROOT}/../../etc/berth.yaml": b"name: x\n"})


def twice(files):
    # One file under two spellings: the second would overwrite the first.
    return make_zip({**files, f"{ROOT}/scenarios//extra.yaml": b"name: other\n"})


def file_and_folder(files):
    return make_zip({**files, f"{ROOT}/contract.yaml/notes.txt": b"a folder of a file\n"})


def too_many(files):
    padding = {f"{ROOT}/notes/{i}.txt": b"" for i in range(UPLOAD_MAX_MEMBERS)}
    return make_zip({**files, **padding})


def unpacks_too_large(files):
    # 6 MB of zeros deflates to a few kilobytes.
    return make_zip({**files, f"{ROOT}/notes/zeros.txt": bytes(UPLOAD_MAX_BYTES + 10**6)})


def truncated(files):
    archive = make_zip(files)
    return archive[: len(archive) // 2]


def alias_bomb(files):
    contract = f"{ROOT}/contract.yaml"
    return make_zip({**files, contract: files[contract] + laughs().encode()})


DAMAGED = f"'{EXTRA}' in the zip cannot be unpacked"
REFUSALS = [
    (bad_crc, f"{DAMAGED} (Bad CRC-32 for file '{EXTRA}'); nothing was read."),
    (longer_than_declared, f"{DAMAGED} (Bad CRC-32 for file '{EXTRA}'); nothing was read."),
    (garbled_data, f"{DAMAGED} (its compressed data is damaged); nothing was read."),
    (unknown_method, f"{DAMAGED} (it is compressed with a method this server cannot read)"),
    (encrypted, f"'{EXTRA}' in the zip is encrypted: upload it without a password."),
    (escaping, f"'{ROOT}/../../etc/berth.yaml' in the zip is not a plain relative path"),
    (twice, f"'{ROOT}/scenarios//extra.yaml' is in the zip twice; nothing was read."),
    (file_and_folder, f"'{ROOT}/contract.yaml/notes.txt' in the zip cannot be unpacked as a"),
    (too_many, f"more than {UPLOAD_MAX_MEMBERS}; nothing was read."),
    (unpacks_too_large, f"The zip unpacks to more than {UPLOAD_MAX_BYTES} bytes"),
    (truncated, "Upload a .zip of a contract test directory (as the export gives)."),
    (alias_bomb, f"{ROOT}/contract.yaml: (file): YAML aliases expand the document's "),
]


@pytest.mark.parametrize("mode", ["preview", "confirm"])
@pytest.mark.parametrize(("spoil", "message"), REFUSALS, ids=[r[0].__name__ for r in REFUSALS])
def test_a_hostile_zip_is_refused_naming_what_is_wrong_and_nothing_is_saved(
    client, berth, files, spoil, message, mode
):
    before = snapshot(berth)
    response = post(client, spoil(files), mode)
    assert response.status_code == 422
    page = response.content.decode()
    assert escape(message) in page
    assert tempfile.gettempdir() not in page  # a file as the zip names it, not where unpacked
    assert 'id="import-errors"' in page
    assert snapshot(berth) == before


def test_the_unspoilt_zip_would_add_the_extra_scenario(client, berth, files):
    """The refusals above are of the spoilt member, not of the zip they were made from."""
    response = post(client, make_zip(files), "preview")
    assert response.status_code == 200
    assert "Adds scenario &#x27;extra&#x27;." in response.content.decode()


def export(directory):
    call_command("export_contract_tests", port.KEY, str(directory), stdout=io.StringIO())
    return directory


def test_import_contract_tests_refuses_an_alias_bomb_naming_its_file(berth, tmp_path):
    directory = export(tmp_path / "suite")
    contract = directory / "contract.yaml"
    contract.write_text(contract.read_text() + laughs())
    before = snapshot(berth)
    with pytest.raises(CommandError) as refused:
        call_command("import_contract_tests", port.KEY, str(directory), stdout=io.StringIO())
    assert f"{contract}: (file): YAML aliases expand the document's " in str(refused.value)
    assert "(an alias bomb?)" in str(refused.value)
    assert snapshot(berth) == before


def test_files_with_ordinary_aliases_import_as_written_out(client, owner, berth, tmp_path):
    """A corpus whose candidates share one list of roles through an anchor reads as the same
    corpus: the plan has nothing to change, on the command and on the page."""
    directory = export(tmp_path / "suite")
    corpus = next((directory / "corpora").iterdir())
    document = yaml.safe_load(corpus.read_text())
    roles = document["candidates"][0]["allowed_roles"]
    for candidate in document["candidates"]:
        assert candidate["allowed_roles"] == roles
        candidate["allowed_roles"] = roles
    text = yaml.safe_dump(document, sort_keys=False)
    assert "&id001" in text and "*id001" in text
    corpus.write_text(text)
    out = io.StringIO()
    call_command("import_contract_tests", port.KEY, str(directory), stdout=out)
    assert f"Unchanged corpus file(s): {corpus.stem}." in out.getvalue()
    archive = make_zip({f"{ROOT}/{p.relative_to(directory)}": p.read_bytes()
                        for p in directory.rglob("*") if p.is_file()})  # fmt: skip
    client.force_login(owner)
    response = post(client, archive, "preview")
    assert response.status_code == 200
    assert f"Unchanged corpus file(s): {corpus.stem}." in response.content.decode()
