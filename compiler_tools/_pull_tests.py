"""`pull --with-tests`: the test suite of the bundle in place, fetched only when asked.

A format-3 bundle names its test suite by sha256 in its signed manifest; the suite itself
(the scenarios, often megabytes) stays on the workbench unless a pipeline asks for it to run
`evidence-compiler test DIR/bundle.json --tests DIR/tests.json`. The suite is fetched from
the pulled version's `…/versions/{n}/tests`, so it is that version's even when a newer one
was published meanwhile, verified against the bundle's digest, and written atomically beside
the bundle. A `tests.json` that is already the bundle's suite is not fetched again. A pull
without `--with-tests` that replaces the bundle removes a `tests.json` of an older bundle,
so the directory never pairs a bundle with another's tests.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Protocol, TextIO

from compiler_tools._pull_io import PullFailed, Response, read_or_none, replace_file
from compiler_trust._bundle.document import VerifiedBundle
from compiler_trust._bundle.reasons import FORMAT, SuiteInvalid
from compiler_trust._bundle.suite import verify_suite

TESTS_FILE = "tests.json"

EXIT_OK, EXIT_FAILED = 0, 1


class Source(Protocol):
    """What the suite is fetched from (`compiler_tools._pull.Source`)."""

    @property
    def url(self) -> str: ...

    def get(self, url: str, etag: str | None = None) -> Response: ...

    def version_url(self, version: int | str, what: str = "bundle") -> str | None: ...


def tests_step(
    source: Source,
    outcome: str,
    bundle: VerifiedBundle,
    directory: Path,
    mode: int,
    with_tests: bool,
    stdout: TextIO,
    stderr: TextIO,
) -> int:
    """After a pull: fetch the suite (`with_tests`), or drop one that is not the bundle's
    (without it). Returns the pull's exit code: 1 when the suite was asked for and could not
    be had, the bundle staying in place."""
    if not with_tests:
        if outcome != "unchanged" and not _is_its_suite(directory / TESTS_FILE, bundle):
            (directory / TESTS_FILE).unlink(missing_ok=True)
        return EXIT_OK
    try:
        print(pull_tests(source, bundle, directory, mode), file=stdout)
    except PullFailed as exc:
        print(f"pull failed: {exc}; the bundle is in place, its test suite is not", file=stderr)
        return EXIT_FAILED
    return EXIT_OK


def pull_tests(source: Source, bundle: VerifiedBundle, directory: Path, mode: int) -> str:
    """Make `directory/tests.json` the test suite `bundle` names; one line saying what was
    done. Raises `PullFailed` when it cannot be fetched or does not verify."""
    manifest, digest = bundle.manifest, bundle.tests
    which = f"{manifest.decision_type} version {manifest.version}"
    if bundle.format != FORMAT:
        return f"tests: {which} is an {bundle.format} bundle, which carries its scenarios itself"
    if digest is None:
        return f"tests: {which} has no scenarios, so no test suite"
    path = directory / TESTS_FILE
    if _is_its_suite(path, bundle):
        return f"tests unchanged: {path} is the test suite of {which}"
    url = source.version_url(manifest.version, "tests")
    if url is None:
        raise PullFailed(
            f"the test suite's URL cannot be derived from {source.url}, which does not end in "
            "/bundle (the workbench's layout)"
        )
    response = source.get(url)
    try:
        verify_suite(response.body, bundle)
    except SuiteInvalid as exc:
        raise PullFailed(f"the served test suite does not verify: {exc}") from None
    replace_file(path, response.body, mode)
    return f"tests: {digest.count} scenario(s) of {which}, sha256 {digest.sha256} -> {path}"


def _is_its_suite(path: Path, bundle: VerifiedBundle) -> bool:
    """Whether the file is the suite the bundle names. The digest is the sha256 of the
    suite's file form without its newline, so hashing settles it: a file with that hash is
    byte for byte the suite `verify_suite` checked before writing it, and validating tens of
    megabytes of scenarios again on every pull would cost seconds for nothing."""
    local, digest = read_or_none(path), bundle.tests
    if local is None or digest is None or bundle.format != FORMAT:
        return False
    return local.endswith(b"\n") and hashlib.sha256(local[:-1]).hexdigest() == digest.sha256
