"""`python -m compiler_tools` (`evidence-compiler`): compile, compare, sweep, schema, keygen,
sign-approval, verify-bundle, pull, serve, test.

With `pull` (the network), `_contract_tests` (test directories) and the key files of
`compiler_trust`, the only code of the compiler that touches files, stdin/stdout and exit
codes (`streams` reads and writes for the commands).
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

from compiler._codes import Result
from compiler._errors import InvalidInput
from compiler_tools._cli.streams import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_REFUSED,
    load_for_compile,
    read_json,
    write,
    write_file,
)

# Each command imports what it needs when it runs: a compile of valid input imports neither
# pydantic nor the bundle, key, pull or contract-test modules (`compiler._slotted_reader` says how).
if TYPE_CHECKING:
    from compiler._input import CompileInput
    from compiler._slotted import PlainInput


def main(
    argv: list[str] | None = None, stdout: TextIO | None = None, stderr: TextIO | None = None
) -> int:
    out = stdout or sys.stdout
    err = stderr or sys.stderr
    args = _parser().parse_args(argv)
    try:
        return _handler(args.handler)(args, out, err)
    except InvalidInput as invalid:
        if getattr(args, "json", False):
            write(out, invalid.to_json())
        else:
            print(str(invalid), file=err)
        return EXIT_INVALID


def _handler(name: str | Callable[..., int]) -> Callable[..., int]:
    """A command's handler: `_compile` here, the others in `cli.commands`, imported (with
    what they need) only when one of them runs."""
    if callable(name):
        return name
    from compiler_tools._cli import commands as cli_commands

    handler: Callable[..., int] = getattr(cli_commands, name)
    return handler


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compiler_tools", description=__doc__)
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
    pull.add_argument(
        "--mode",
        default="0644",
        help="octal permission bits of the files written (default 0644: readers may run as "
        "another user)",
    )
    pull.add_argument(
        "--allow-downgrade",
        metavar="VERSION",
        help="accept the served bundle if it is exactly this version, even when it is older "
        "than one accepted before or does not descend from the bundle in place",
    )
    pull.add_argument(
        "--with-tests",
        action="store_true",
        help="also fetch the bundle's test suite into tests.json and verify it against the "
        "sha256 the bundle names (for `test BUNDLE --tests`; a service does not need it)",
    )
    _policy_option(pull)
    pull.set_defaults(handler="pull")

    serve = commands.add_parser("serve", help="answer decisions over HTTP/JSON (extra: serve)")
    serve.add_argument("--bundle-dir", required=True, help="the directory pull writes to")
    serve.add_argument("--public-key", required=True, help="the pinned key set to verify with")
    serve.add_argument("--host", default="127.0.0.1", help="the address to listen on")
    serve.add_argument("--port", type=int, default=8181, help="the port (0: any free one)")
    serve.add_argument("--threads", type=int, default=4, help="worker threads (default 4)")
    serve.add_argument(
        "--interval",
        type=float,
        default=5.0,
        help="seconds between two looks at the bundle file (default 5)",
    )
    serve.add_argument(
        "--max-body", type=int, default=8 * 1024 * 1024, help="largest request body in bytes"
    )
    _policy_option(serve)
    serve.set_defaults(handler="serve")

    test = commands.add_parser("test", help="run a test directory's or a bundle's scenarios")
    test.add_argument("path", help="a test directory (contract.yaml, scenarios/) or a bundle")
    test.add_argument("--junit-xml", help="also write JUnit XML here")
    test.add_argument("--json", action="store_true", help="print the report as JSON")
    test.add_argument("--public-key", help="verify a bundle with this key set first")
    test.add_argument(
        "--tests",
        metavar="FILE",
        help="a format-3 bundle's test suite (pull --with-tests: tests.json), checked against "
        "the sha256 the bundle names",
    )
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


def _compile(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from compiler._output_json import compiled_pieces
    from compiler._pipeline import run

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
        document = load_for_compile(args.input)
    compiled = run(document)
    if args.receipt:
        from compiler._compiled_to_output import to_output
        from compiler_trust._receipts import compact_receipt, make_receipt

        receipt = make_receipt(
            bundle_document[1],
            to_output(compiled),
            bundle_sha256=bundle.sha256,
            decision_id=args.decision_id,
        )
        # One line: a service posts receipts by the hundred, and indenting the rows would
        # triple their size.
        text = json.dumps(compact_receipt(receipt), ensure_ascii=False) + "\n"
        write_file(args.receipt, "--receipt", text.encode())
    for piece in compiled_pieces(compiled):  # what write would print, without the slow
        out.write(piece)  # encoder and without holding the whole text
    out.write("\n")
    return EXIT_OK if compiled.result == Result.COMPILED.value else EXIT_REFUSED


def _bundled_input(args: argparse.Namespace, err: TextIO) -> tuple[Any, CompileInput] | int:
    """The verified bundle and the input compiled against its contract, or the exit code of
    a refused bundle."""
    from compiler_trust._bundle.compiling import compile_input_from_bundle
    from compiler_trust._bundle.reasons import BundleInvalid
    from compiler_trust._bundle.verification import verify_bundle
    from compiler_trust._key_files import load_public_keys

    if not args.public_key:
        message = "compile --bundle needs --public-key to verify the bundle"
        raise InvalidInput([{"loc": ["--public-key"], "msg": message}])
    try:
        bundle = verify_bundle(Path(args.bundle).read_bytes(), load_public_keys(args.public_key))
    except (BundleInvalid, OSError, ValueError) as exc:
        # ValueError covers a key file that cannot be read as a public key.
        print(f"bundle refused: {exc}", file=err)
        return EXIT_REFUSED
    return bundle, compile_input_from_bundle(bundle, read_json(args.input))
