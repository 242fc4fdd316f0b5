"""`python -m compiler` (`evidence-compiler`): compile, compare, sweep, schema, verify-bundle,
pull, test.

With `pull` (the network) and `contract_tests` (test directories), the only modules of the
compiler that touch files, stdin/stdout and exit codes.
Exit codes: 0 compiled (or valid), 1 refused (or an invalid bundle, or a sweep with a
violation or a failed expectation, or `test --baseline OLD --fail-on-widening` with a
widening), 2 invalid input.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from compiler.codes import Result
from compiler.errors import InvalidInput
from compiler.jsonio import parse_json

# Each command imports what it needs when it runs: a compile of valid input imports neither
# pydantic nor the bundle, key, pull or contract-test modules (`plain_loading` says how).
if TYPE_CHECKING:
    from compiler.models import CompileInput
    from compiler.plain import PlainInput

EXIT_OK, EXIT_REFUSED, EXIT_INVALID = 0, 1, 2

RETAINED_UNTIL_EXIT: list[Any] | None = None
"""Set by `python -m compiler`, which ends the process without tearing its objects down: a
compile's input and output are kept here rather than freed one by one just before the end."""


def main(
    argv: list[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args = _parser().parse_args(argv)
    from compiler.collector import collection_paused

    try:
        # A command reads, validates, compiles and writes objects that live until it ends:
        # the cyclic collector would only rescan them (see `collection_paused`).
        with collection_paused():
            return _handler(args.handler)(args, out, err)
    except InvalidInput as invalid:
        if getattr(args, "json", False):
            _write(out, invalid.to_json())
        else:
            print(str(invalid), file=err)
        return EXIT_INVALID


def _handler(name: str | Callable[..., int]) -> Callable[..., int]:
    """A command's handler: `_compile` here, the others in `cli.commands`, imported (with
    what they need) only when one of them runs."""
    if callable(name):
        return name
    from . import commands as cli_commands

    handler: Callable[..., int] = getattr(cli_commands, name)
    return handler


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compiler", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    compile_ = commands.add_parser("compile", help="compile one input document")
    compile_.add_argument("input", help="the input JSON file, or - for stdin")
    compile_.add_argument("--bundle", help="take the contract from this verified bundle")
    compile_.add_argument("--public-key", help="key file or directory to verify --bundle with")
    compile_.add_argument("--json", action="store_true", help="print input errors as JSON")
    compile_.add_argument("--receipt", help="also write the decision's receipt here (--bundle)")
    compile_.add_argument("--decision-id", help="the receipt's decision id (default: its hash)")
    compile_.set_defaults(handler=_compile)

    compare = commands.add_parser("compare", help="plain top-k vs post-filtered vs compiled")
    compare.add_argument("input")
    compare.add_argument("--top-k", type=int, default=5)
    compare.add_argument("--json", action="store_true")
    compare.set_defaults(handler="compare")

    sweep = commands.add_parser("sweep", help="the standard perturbation suite and its flips")
    sweep.add_argument("input")
    sweep.add_argument(
        "--weak-class", action="append", default=[], help="a class to substitute first (repeatable)"
    )
    sweep.add_argument(
        "--tier",
        action="append",
        default=[],
        metavar="CLASS=TIER",
        help="a class's authority tier: 1 (system_of_record) to 4 (informal); the contract "
        "probes judge precedence and promotion by it (repeatable)",
    )
    sweep.add_argument(
        "--expectations",
        help="a JSON list of variant expectations (operator, args, proposition, state)",
    )
    sweep.add_argument("--json", action="store_true", help="print the whole sweep as JSON")
    sweep.set_defaults(handler="sweep")

    schema = commands.add_parser("schema", help="JSON Schema of the input and output")
    schema.add_argument("--which", choices=["input", "output", "both"], default="both")
    schema.add_argument("--tests", action="store_true", help="the test directory's files instead")
    schema.set_defaults(handler="schema")

    verify = commands.add_parser("verify-bundle", help="check a bundle's hash and signatures")
    verify.add_argument("bundle")
    verify.add_argument("--public-key", required=True, help="a key file or a directory of keys")
    _policy_option(verify)
    verify.set_defaults(handler="verify_bundle")

    keygen = commands.add_parser("keygen", help="create a signing key file on this machine")
    keygen.add_argument("name", help="the key files' name, e.g. your username")
    keygen.add_argument("--out", required=True, help="the directory for NAME.key, NAME.pub.pem")
    keygen.set_defaults(handler="keygen")

    sign = commands.add_parser(
        "sign-approval", help="sign an approval (or publication) statement with a key file"
    )
    sign.add_argument("statement", help="the statement JSON the workbench shows, or -")
    sign.add_argument("--key", required=True, help="your private key file (keygen)")
    sign.add_argument("--out", help="write the signed statement here (default: stdout)")
    sign.set_defaults(handler="sign_approval")

    pull = commands.add_parser("pull", help="fetch, verify and store the latest bundle")
    pull.add_argument("url", help="the bundle's URL (https, or http on a loopback address)")
    pull.add_argument("--token-file", required=True, help="a file holding the bearer token")
    pull.add_argument("--public-key", required=True, help="the pinned key set to verify with")
    pull.add_argument("--out", required=True, help="the directory holding bundle.json")
    _policy_option(pull)
    pull.set_defaults(handler="pull")

    test = commands.add_parser("test", help="run a test directory's or a bundle's scenarios")
    test.add_argument("path", help="a test directory (contract.yaml, scenarios/) or a bundle")
    test.add_argument("--junit-xml", help="also write JUnit XML here")
    test.add_argument("--json", action="store_true", help="print the report as JSON")
    test.add_argument("--public-key", help="verify a bundle with this key set first")
    _baseline_options(test)
    _mutation_options(test)
    test.set_defaults(handler="test")
    return parser


def _baseline_options(test: argparse.ArgumentParser) -> None:
    test.add_argument(
        "--baseline",
        metavar="OLD",
        help="list every widening against this older contract: a bundle, a test directory "
        "or a contract file (JSON or YAML)",
    )
    test.add_argument(
        "--fail-on-widening",
        action="store_true",
        help="with --baseline: exit 1 when there is any widening (default: listed only)",
    )


def _mutation_options(test: argparse.ArgumentParser) -> None:
    test.add_argument(
        "--mutate",
        action="store_true",
        help="also apply every mistake kind to the contract and report which the scenarios "
        "notice (mutation testing)",
    )
    test.add_argument(
        "--min-score",
        type=float,
        metavar="N",
        help="with --mutate: exit 1 when the mutation score is below N (0.8 or 80 for 80%%)",
    )


def _policy_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--require-approvals",
        type=int,
        default=1,
        metavar="N",
        help="refuse a bundle with fewer than N valid approvals (default 1)",
    )


def _read_bytes(path: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput([{"loc": [], "msg": f"cannot read {path}: {exc.strerror}"}]) from None


def _read_json(path: str) -> Any:
    return parse_json(_read_bytes(path))


def _load(path: str) -> CompileInput:
    """The input, its parsed JSON let go as it is validated; read again (stdin's bytes are
    kept for that) only to locate problems."""
    from compiler.loading import load_input_consuming

    if path == "-":
        data = _read_bytes(path)
        return load_input_consuming(parse_json(data), lambda: parse_json(data))
    return load_input_consuming(_read_json(path), lambda: _read_json(path))


def _load_for_compile(path: str) -> PlainInput | CompileInput:
    """The input as `plain` objects when it is valid and plainly so (no pydantic), else
    validated by `_load` (which lists every problem with its location)."""
    from compiler.jsonio import NotQuick, quick_text
    from compiler.plain_loading import load_plain_text

    data = _read_bytes(path)
    try:
        text = quick_text(data)
    except NotQuick:
        text = None
    if path != "-":
        del data  # read again if needed: the text alone is held while the pool is built
    if text is not None:
        plain = load_plain_text(text)
        del text
        if plain is not None:
            return plain
    if path == "-":
        from compiler.loading import load_input_consuming

        return load_input_consuming(parse_json(data), lambda: parse_json(data))
    return _load(path)


def _dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def _write(out: TextIO, value: Any) -> None:
    out.write(_dumps(value))


def _write_file(path: str, option: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        message = f"cannot write {path}: {exc.strerror}"
        raise InvalidInput([{"loc": [option], "msg": message}]) from None


def _compile(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from compiler.output_text import compiled_pieces
    from compiler.pipeline import run

    document: PlainInput | CompileInput
    if args.bundle:
        bundled = _bundled_input(args, err)
        if isinstance(bundled, int):
            return bundled
        bundle, document = bundle_document = bundled
    elif args.receipt:
        raise InvalidInput(
            [{"loc": ["--receipt"], "msg": "a receipt names its bundle: use it with --bundle"}]
        )
    else:
        document = _load_for_compile(args.input)
    compiled = run(document)
    if RETAINED_UNTIL_EXIT is not None:
        RETAINED_UNTIL_EXIT.append((document, compiled))
    if args.receipt:
        from compiler.output_model import to_output
        from compiler.receipts import compact_receipt, make_receipt

        receipt = make_receipt(
            bundle_document[1],
            to_output(compiled),
            bundle_sha256=bundle.sha256,
            decision_id=args.decision_id,
        )
        # One line: a service posts receipts by the hundred, and indenting the rows would
        # triple their size.
        text = json.dumps(compact_receipt(receipt), ensure_ascii=False) + "\n"
        _write_file(args.receipt, "--receipt", text.encode())
    for piece in compiled_pieces(compiled):  # what _write would print, without the slow
        out.write(piece)  # encoder and without holding the whole text
    out.write("\n")
    return EXIT_OK if compiled.result == Result.COMPILED.value else EXIT_REFUSED


def _bundled_input(args: argparse.Namespace, err: TextIO) -> tuple[Any, CompileInput] | int:
    """The verified bundle and the input compiled against its contract, or the exit code of
    a refused bundle."""
    from compiler.bundle import (
        BundleInvalid,
        compile_input_from_bundle,
        load_public_keys,
        verify_bundle,
    )

    if not args.public_key:
        message = "compile --bundle needs --public-key to verify the bundle"
        raise InvalidInput([{"loc": ["--public-key"], "msg": message}])
    try:
        bundle = verify_bundle(Path(args.bundle).read_bytes(), load_public_keys(args.public_key))
    except (BundleInvalid, OSError, ValueError) as exc:
        # ValueError covers a key file that cannot be read as a public key.
        print(f"bundle refused: {exc}", file=err)
        return EXIT_REFUSED
    return bundle, compile_input_from_bundle(bundle, _read_json(args.input))
