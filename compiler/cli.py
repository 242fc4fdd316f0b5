"""`python -m compiler`: compile, compare, sweep, schema, verify-bundle.

The only module of the compiler that touches files, stdin/stdout and exit codes.
Exit codes: 0 compiled (or valid), 1 refused (or an invalid bundle), 2 invalid input.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from pydantic_core import from_json

from .codes import Result
from .errors import InvalidInput
from .loading import collection_paused, load_input
from .models import CompileInput, CompileOutput

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
    try:
        # A command reads, validates, compiles and writes objects that live until it ends:
        # the cyclic collector would only rescan them (see `collection_paused`).
        with collection_paused():
            return args.handler(args, out, err)
    except InvalidInput as invalid:
        if getattr(args, "json", False):
            _write(out, invalid.to_json())
        else:
            print(str(invalid), file=err)
        return EXIT_INVALID


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m compiler", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    compile_ = commands.add_parser("compile", help="compile one input document")
    compile_.add_argument("input", help="the input JSON file, or - for stdin")
    compile_.add_argument("--bundle", help="take the contract from this verified bundle")
    compile_.add_argument("--public-key", help="key file or directory to verify --bundle with")
    compile_.add_argument("--json", action="store_true", help="print input errors as JSON")
    compile_.set_defaults(handler=_compile)

    compare = commands.add_parser("compare", help="plain top-k vs post-filtered vs compiled")
    compare.add_argument("input")
    compare.add_argument("--top-k", type=int, default=5)
    compare.add_argument("--json", action="store_true")
    compare.set_defaults(handler=_compare)

    sweep = commands.add_parser("sweep", help="the standard perturbation suite and its flips")
    sweep.add_argument("input")
    sweep.add_argument(
        "--weak-class", action="append", default=[], help="a class to substitute first (repeatable)"
    )
    sweep.add_argument("--json", action="store_true")
    sweep.set_defaults(handler=_sweep)

    schema = commands.add_parser("schema", help="JSON Schema of the input and output")
    schema.add_argument("--which", choices=["input", "output", "both"], default="both")
    schema.set_defaults(handler=_schema)

    verify = commands.add_parser("verify-bundle", help="check a bundle's hash and signatures")
    verify.add_argument("bundle")
    verify.add_argument("--public-key", required=True, help="a key file or a directory of keys")
    verify.set_defaults(handler=_verify_bundle)
    return parser


def _read_json(path: str) -> Any:
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInput([{"loc": [], "msg": f"cannot read {path}: {exc.strerror}"}]) from None
    except UnicodeDecodeError as exc:
        raise InvalidInput(
            [{"loc": [], "msg": f"not UTF-8 text: byte {exc.start} cannot be decoded"}]
        ) from None
    try:
        value = _parse_json(text)
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            [
                {
                    "loc": [],
                    "msg": f"not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}",
                }
            ]
        ) from None
    if _SURROGATE_ESCAPE.search(text):
        lone = sorted(_lone_surrogates(value, []), key=lambda loc: [(isinstance(p, str), p)
                                                                     for p in loc])
        if lone:
            raise InvalidInput(
                [{"loc": loc, "msg": "a \\u escape names half a surrogate pair, not a character"}
                 for loc in lone]
            )
    return value


def _parse_json(text: str) -> Any:
    """`json.loads(text)`, through pydantic-core's parser when it accepts the text.

    It is faster, and it shares each repeated short string (a class, a role, a date) between
    all the places that spell it, a third less memory for a large pool. It refuses a few texts
    `json.loads` reads (a lone surrogate escape, very deep nesting) and fails where json.loads
    fails: whenever it refuses, `json.loads` decides, so the value and every error message
    are `json.loads`'s own.
    """
    try:
        return from_json(text)
    except ValueError:
        return json.loads(text)


# JSON may spell a lone UTF-16 surrogate as an escape; it is no character, and can be neither
# hashed (RFC 8785) nor printed as UTF-8. Only a document containing such an escape is walked.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _lone_surrogates(value: Any, loc: list[Any]) -> Iterator[list[Any]]:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            yield loc
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _lone_surrogates(key, loc)
            yield from _lone_surrogates(item, [*loc, key])
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _lone_surrogates(item, [*loc, index])


def _load(path: str) -> CompileInput:
    return load_input(_read_json(path))


def _write(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, indent=2, ensure_ascii=False) + "\n")


def _result_code(output: CompileOutput) -> int:
    return EXIT_OK if output.result is Result.COMPILED else EXIT_REFUSED


def _compile(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .pipeline import compile_input

    if args.bundle:
        from .bundle import (
            BundleInvalid,
            compile_input_from_bundle,
            load_public_keys,
            verify_bundle,
        )

        if not args.public_key:
            raise InvalidInput(
                [{"loc": ["--public-key"],
                  "msg": "compile --bundle needs --public-key to verify the bundle"}]
            )
        try:
            bundle = verify_bundle(
                Path(args.bundle).read_bytes(), load_public_keys(args.public_key)
            )
        except (BundleInvalid, OSError, ValueError) as exc:
            # ValueError covers a key file that cannot be read as a public key.
            print(f"bundle refused: {exc}", file=err)
            return EXIT_REFUSED
        document = compile_input_from_bundle(bundle, _read_json(args.input))
    else:
        document = _load(args.input)
    output = compile_input(document)
    if RETAINED_UNTIL_EXIT is not None:
        RETAINED_UNTIL_EXIT.append((document, output))
    out.write(output.to_json_text() + "\n")  # what _write would print, without the slow encoder
    return _result_code(output)


def _compare(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .compare import compare

    if args.top_k < 1:
        raise InvalidInput([{"loc": ["--top-k"], "msg": "must be at least 1"}])
    _write(out, compare(_load(args.input), args.top_k))
    return EXIT_OK


def _sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .perturb import sweep

    _write(out, sweep(_load(args.input), weak_classes=args.weak_class))
    return EXIT_OK


def _schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    schemas = {
        "input": CompileInput.model_json_schema(),
        "output": CompileOutput.model_json_schema(mode="serialization", by_alias=True),
    }
    _write(out, schemas if args.which == "both" else schemas[args.which])
    return EXIT_OK


def _verify_bundle(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .bundle import BundleInvalid, load_public_keys, verify_bundle

    try:
        bundle = verify_bundle(Path(args.bundle).read_bytes(), load_public_keys(args.public_key))
    except (BundleInvalid, OSError, ValueError) as exc:
        print(f"invalid: {exc}", file=err)
        return EXIT_REFUSED
    manifest = bundle.manifest
    approvers = ", ".join(f"'{name}'" for name in manifest.approver_names)
    print(
        f"valid: {manifest.decision_type} version {manifest.version}, sha256 {bundle.sha256}, "
        f"published by '{manifest.publisher.person}', approved by {approvers}",
        file=out,
    )
    return EXIT_OK
