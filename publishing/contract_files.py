"""A decision type's contract tests as files (`compiler_tools._contract_tests`' directory format).

Export: the type's current version (the open one, else the latest), or the version asked for,
as `contract.yaml`, with
the catalogue entries of the classes it accepts, each corpus as `corpora/NAME.yaml` and each
scenario as `scenarios/NAME.yaml`: exactly what `evidence-compiler test DIR` runs, so a
retrieval service's CI can run the workbench's suite without the workbench.

Import (a plan first, applied only when confirmed) is `publishing.contract_import`; this
module also unpacks an uploaded zip for it, safely.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

import yaml
from django.core.exceptions import ValidationError
from django.db.models import Prefetch

from compiler_tools import FORMAT as TESTS_FORMAT
from contracts import selectors
from contracts.documents import contract_document
from contracts.models import ContractVersion, DecisionType, SourceClass
from scenarios import expectations
from scenarios.models import Corpus, CorpusCandidate, Scenario

SAFE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")

# Messages tests assert on.
NO_VERSION = "Decision type '{key}' has no version to export."
NO_SUCH_VERSION = "Decision type '{key}' has no version {number} (its versions: {numbers})."


def file_stem(name: str) -> str:
    """A corpus or scenario name as a file name (kept as it is when it already is one)."""
    if SAFE_NAME.match(name):
        return name
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._") or "unnamed"


def _yaml(comment: str, document: Any) -> str:
    body = yaml.safe_dump(document, sort_keys=False, allow_unicode=True)
    return f"# {comment}\n{body}"


# --------------------------------------------------------------------------- export


def export_version(decision_type: DecisionType, number: int | None) -> ContractVersion:
    """Version `number` of the type, or its current version when None; ValidationError
    naming the versions there are."""
    if number is None:
        version = selectors.current_version(decision_type=decision_type)
        if version is None:
            raise ValidationError(NO_VERSION.format(key=decision_type.key))
        return version
    version = decision_type.versions.filter(number=number).first()
    if version is None:
        numbers = list(decision_type.versions.order_by("number").values_list("number", flat=True))
        raise ValidationError(
            NO_SUCH_VERSION.format(
                key=decision_type.key, number=number,
                numbers=", ".join(map(str, numbers)) or "none",
            )
        )  # fmt: skip
    return version


def export_files(
    decision_type: DecisionType, version: ContractVersion | None = None
) -> dict[str, str]:
    """The test directory of `version` (the type's current version when None): relative
    path -> text. A published version's directory runs the expectations its bundle's test
    suite holds."""
    if version is None:
        version = export_version(decision_type, None)
    contract = contract_document(version)
    accepted = {c for p in contract["propositions"] for c in p["accepted_classes"]}
    classes = [
        {"key": c.key, "label": c.label, "description": c.description,
         "authority_tier": c.authority_tier, "weak": c.weak}
        for c in SourceClass.objects.filter(key__in=accepted).order_by("key")
    ]  # fmt: skip
    files = {
        "contract.yaml": _yaml(
            f"{decision_type.key} version {version.number} ({version.status}), exported from "
            "the workbench",
            {"format": TESTS_FORMAT, "contract": contract, "source_classes": classes},
        )
    }
    live_candidates = Prefetch("candidates", queryset=CorpusCandidate.objects.live())
    for corpus in (
        Corpus.objects.live().filter(decision_type=decision_type).prefetch_related(live_candidates)
    ):
        files[f"corpora/{file_stem(corpus.name)}.yaml"] = _yaml(
            f"Fixture corpus '{corpus.name}'",
            {"description": corpus.description, "directory": corpus.directory,
             "candidates": [c.data for c in corpus.candidates.all()]},
        )  # fmt: skip
    for scenario in (
        Scenario.objects.live()
        .filter(decision_type=decision_type)
        .select_related("decision_type", "corpus")
    ):
        files[f"scenarios/{file_stem(scenario.name)}.yaml"] = _yaml(
            f"Scenario '{scenario.name}'", {"name": scenario.name, **_scenario_state(scenario)}
        )
    return files


def write_directory(files: dict[str, str], directory: Path) -> list[Path]:
    written = []
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


def zip_bytes(files: dict[str, str], *, root: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for relative, text in sorted(files.items()):
            info = zipfile.ZipInfo(f"{root}/{relative}", date_time=(2000, 1, 1, 0, 0, 0))
            archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()


def _scenario_state(scenario: Scenario) -> dict[str, Any]:
    # Only what the scenario checks: the `expected:` mapping the compiler's tests read.
    expected = expectations.expected_document(scenario)
    request = {k: v for k, v in scenario.request_document().items() if v is not None}
    return {"description": scenario.description, "request": request,
            "corpus": file_stem(scenario.corpus.name), "expected": expected}  # fmt: skip


# --------------------------------------------------------------------------- uploads

UPLOAD_MAX_BYTES = 5 * 1024 * 1024
# A contract test directory holds one file per corpus and per scenario, and the contract.
UPLOAD_MAX_MEMBERS = 2000
NOT_A_ZIP = "Upload a .zip of a contract test directory (as the export gives)."
UNSAFE_MEMBER = "'{name}' in the zip is not a plain relative path; nothing was read."
TOO_LARGE = "The zip unpacks to more than {limit} bytes; nothing was read."
TOO_MANY = "The zip holds {count} files and folders, more than {limit}; nothing was read."
TWICE = "'{name}' is in the zip twice; nothing was read."
ENCRYPTED = "'{name}' in the zip is encrypted: upload it without a password. Nothing was read."
DAMAGED = "'{name}' in the zip cannot be unpacked ({why}); nothing was read."
NOT_WRITABLE = "'{name}' in the zip cannot be unpacked as a file ({why}); nothing was read."
NO_CONTRACT = "The zip holds no contract.yaml (at its top or in one folder)."

# What reading a damaged member raises, and how the refusal says it: a bad CRC or header
# (zipfile's own words), compressed data cut short or garbled, a compression method this
# Python lacks; the rest (a member that names data past the archive's end) as they come.
_DAMAGED = (zipfile.BadZipFile, EOFError, zlib.error, NotImplementedError, RuntimeError,
            ValueError, OSError)  # fmt: skip
_WHY = {EOFError: "its data is cut short", zlib.error: "its compressed data is damaged",
        NotImplementedError: "it is compressed with a method this server cannot read"}  # fmt: skip


def unpack_zip(data: bytes, into: Path) -> Path:
    """Unpack an uploaded zip into `into` and return the directory holding `contract.yaml`.

    Safely: only plain relative paths, each once; at most `UPLOAD_MAX_MEMBERS` entries and
    `UPLOAD_MAX_BYTES` unpacked; no encrypted member. A damaged member (bad CRC, cut short, an
    unknown compression) is a `ValidationError` naming it, like every other refusal, and the
    caller's scratch directory is all that was written."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except _DAMAGED:
        raise ValidationError(NOT_A_ZIP) from None
    with archive:
        for member in _checked_members(archive.infolist()):
            content = _read_member(archive, member)
            target = into / member.filename
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
            except OSError as exc:
                why = exc.strerror or type(exc).__name__
                raise ValidationError(NOT_WRITABLE.format(name=member.filename, why=why)) from None
    for candidate in (into, *sorted(p for p in into.iterdir() if p.is_dir())):
        if any((candidate / n).is_file() for n in ("contract.yaml", "contract.yml",
                                                    "contract.json")):  # fmt: skip
            return candidate
    raise ValidationError(NO_CONTRACT)


def _checked_members(entries: list[zipfile.ZipInfo]) -> list[zipfile.ZipInfo]:
    """The zip's files (not its folders), once what its directory says about them is
    checked: before any member is read."""
    if len(entries) > UPLOAD_MAX_MEMBERS:
        raise ValidationError(TOO_MANY.format(count=len(entries), limit=UPLOAD_MAX_MEMBERS))
    members = [m for m in entries if not m.is_dir()]
    if sum(m.file_size for m in members) > UPLOAD_MAX_BYTES:
        raise ValidationError(TOO_LARGE.format(limit=UPLOAD_MAX_BYTES))
    seen: set[tuple[str, ...]] = set()
    for member in members:
        parts = Path(member.filename).parts
        if member.filename.startswith(("/", "\\")) or ".." in parts or not parts:
            raise ValidationError(UNSAFE_MEMBER.format(name=member.filename))
        if parts in seen:  # a/b and a//b or a/./b are one file: the second would overwrite
            raise ValidationError(TWICE.format(name=member.filename))
        seen.add(parts)
        if member.flag_bits & 0x1:
            raise ValidationError(ENCRYPTED.format(name=member.filename))
    return members


def _read_member(archive: zipfile.ZipFile, member: zipfile.ZipInfo) -> bytes:
    """The member's bytes. zipfile gives at most the size the zip's directory declares (which
    `_checked_members` bounded) and checks the CRC of what it gives, so a member whose data
    is longer than declared is refused as damaged."""
    try:
        return archive.read(member)
    except _DAMAGED as exc:
        why = _WHY.get(type(exc)) or str(exc) or type(exc).__name__
        raise ValidationError(DAMAGED.format(name=member.filename, why=why)) from None
