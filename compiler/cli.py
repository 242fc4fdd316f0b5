"""`python -m compiler` (`evidence-compiler`): compile, compare, sweep, schema, verify-bundle,
pull, test.

With `pull` (the network) and `contract_tests` (test directories), the only modules of the
compiler that touch files, stdin/stdout and exit codes.
Exit codes: 0 compiled (or valid), 1 refused (or an invalid bundle, or a sweep with a
violation or a failed expectation), 2 invalid input.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO

from .codes import Result
from .errors import InvalidInput
from .jsonio import parse_json
from .loading import collection_paused, load_input_consuming
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
    compile_.add_argument("--receipt", help="also write the decision's receipt here (--bundle)")
    compile_.add_argument("--decision-id", help="the receipt's decision id (default: its hash)")
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
    sweep.add_argument(
        "--tier",
        action="append",
        default=[],
        metavar="CLASS=TIER",
        help="a class's authority tier, named in corpus findings (repeatable)",
    )
    sweep.add_argument(
        "--expectations",
        help="a JSON list of variant expectations (operator, args, proposition, state)",
    )
    sweep.add_argument("--json", action="store_true", help="print the whole sweep as JSON")
    sweep.set_defaults(handler=_sweep)

    schema = commands.add_parser("schema", help="JSON Schema of the input and output")
    schema.add_argument("--which", choices=["input", "output", "both"], default="both")
    schema.add_argument("--tests", action="store_true", help="the test directory's files instead")
    schema.set_defaults(handler=_schema)

    verify = commands.add_parser("verify-bundle", help="check a bundle's hash and signatures")
    verify.add_argument("bundle")
    verify.add_argument("--public-key", required=True, help="a key file or a directory of keys")
    _policy_option(verify)
    verify.set_defaults(handler=_verify_bundle)

    keygen = commands.add_parser("keygen", help="create a signing key file on this machine")
    keygen.add_argument("name", help="the key files' name, e.g. your username")
    keygen.add_argument("--out", required=True, help="the directory for NAME.key, NAME.pub.pem")
    keygen.set_defaults(handler=_keygen)

    sign = commands.add_parser(
        "sign-approval", help="sign an approval (or publication) statement with a key file"
    )
    sign.add_argument("statement", help="the statement JSON the workbench shows, or -")
    sign.add_argument("--key", required=True, help="your private key file (keygen)")
    sign.add_argument("--out", help="write the signed statement here (default: stdout)")
    sign.set_defaults(handler=_sign_approval)

    pull = commands.add_parser("pull", help="fetch, verify and store the latest bundle")
    pull.add_argument("url", help="the bundle's URL (https, or http on a loopback address)")
    pull.add_argument("--token-file", required=True, help="a file holding the bearer token")
    pull.add_argument("--public-key", required=True, help="the pinned key set to verify with")
    pull.add_argument("--out", required=True, help="the directory holding bundle.json")
    _policy_option(pull)
    pull.set_defaults(handler=_pull)

    test = commands.add_parser("test", help="run a test directory's or a bundle's scenarios")
    test.add_argument("path", help="a test directory (contract.yaml, scenarios/) or a bundle")
    test.add_argument("--junit-xml", help="also write JUnit XML here")
    test.add_argument("--json", action="store_true", help="print the report as JSON")
    test.add_argument("--public-key", help="verify a bundle with this key set first")
    test.set_defaults(handler=_test)
    return parser


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
    if path == "-":
        data = _read_bytes(path)
        return load_input_consuming(parse_json(data), lambda: parse_json(data))
    return load_input_consuming(_read_json(path), lambda: _read_json(path))


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
                [
                    {
                        "loc": ["--public-key"],
                        "msg": "compile --bundle needs --public-key to verify the bundle",
                    }
                ]
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
    elif args.receipt:
        raise InvalidInput(
            [{"loc": ["--receipt"], "msg": "a receipt names its bundle: use it with --bundle"}]
        )
    else:
        document = _load(args.input)
    output = compile_input(document)
    if RETAINED_UNTIL_EXIT is not None:
        RETAINED_UNTIL_EXIT.append((document, output))
    if args.receipt:
        from .receipts import make_receipt

        receipt = make_receipt(
            document, output, bundle_sha256=bundle.sha256, decision_id=args.decision_id
        )
        _write_file(args.receipt, "--receipt", _dumps(receipt.to_json()).encode())
    for piece in output.json_text_pieces():  # what _write would print, without the slow
        out.write(piece)  # encoder and without holding the whole text
    out.write("\n")
    return _result_code(output)


def _compare(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .compare import compare

    if args.top_k < 1:
        raise InvalidInput([{"loc": ["--top-k"], "msg": "must be at least 1"}])
    _write(out, compare(_load(args.input), args.top_k))
    return EXIT_OK


def _sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The sweep with its verdicts; exit 1 on any violation or failed expectation."""
    from pydantic import TypeAdapter, ValidationError

    from .perturb import sweep
    from .relations import VariantExpectation

    tiers = {}
    for given in args.tier:
        cls, _, tier = given.partition("=")
        if not cls or not tier:
            raise InvalidInput([{"loc": ["--tier"], "msg": f"'{given}' is not CLASS=TIER"}])
        tiers[cls] = tier
    expectations: list[VariantExpectation] = []
    if args.expectations:
        try:
            expectations = TypeAdapter(list[VariantExpectation]).validate_python(
                _read_json(args.expectations)
            )
        except ValidationError as exc:
            raise InvalidInput(
                [{"loc": ["--expectations", *e["loc"]], "msg": e["msg"]} for e in exc.errors()]
            ) from None
    report = sweep(
        _load(args.input), weak_classes=args.weak_class, expectations=expectations, tiers=tiers
    )
    if args.json:
        _write(out, report)
    else:
        _print_verdicts(report, out)
    return EXIT_OK if report["passed"] else EXIT_REFUSED


def _print_verdicts(report: dict[str, Any], out: TextIO) -> None:
    totals = report["totals"]
    print(
        f"{totals['perturbations']} perturbations: {totals['violations']} violation(s), "
        f"{totals['findings']} finding(s), {totals['expectation_failures']} failed "
        "expectation(s)",
        file=out,
    )
    for row in report["perturbations"]:
        shown = [v for v in row["verdicts"] if v["kind"] != "expected"]
        print(f"\n{row['verdict'].upper():9} {row['name']} — {row['label']}", file=out)
        for v in shown:
            print(f"  {v['kind']}: {v['message']}", file=out)
    for f in report["expectation_failures"]:
        print(
            f"\nFAIL {f['perturbation']}: {f['key']} expected {f['expected']}, got {f['actual']}",
            file=out,
        )
    if report["corpus_findings"]:
        print("\nCorpus:", file=out)
        for v in report["corpus_findings"]:
            print(f"  finding: {v['message']}", file=out)


def _schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.tests:
        from .contract_tests import file_schemas

        _write(out, file_schemas())
        return EXIT_OK
    schemas = {
        "input": CompileInput.model_json_schema(),
        "output": CompileOutput.model_json_schema(mode="serialization", by_alias=True),
    }
    _write(out, schemas if args.which == "both" else schemas[args.which])
    return EXIT_OK


def _pull(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .pull import pull

    return pull(args.url, token_file=args.token_file, public_key=args.public_key,
                out=args.out, stdout=out, stderr=err,
                require_approvals=args.require_approvals)  # fmt: skip


def _test(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .contract_tests import junit_xml, load_tests, run_tests, summary_text

    keys = None
    if args.public_key:
        from .keys import KeyLoadError, load_public_keys

        try:
            keys = load_public_keys(args.public_key)
        except KeyLoadError as exc:
            raise InvalidInput([{"loc": ["--public-key"], "msg": str(exc)}]) from None
    report = run_tests(load_tests(args.path, keys))
    if args.junit_xml:
        _write_file(args.junit_xml, "--junit-xml", junit_xml(report))
    if args.json:
        _write(out, report.to_json())
    else:
        print(summary_text(report), file=out)
    return EXIT_OK if report.passed else EXIT_REFUSED


def _verify_bundle(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .bundle import BundleInvalid, load_public_keys, verify_bundle

    try:
        bundle = verify_bundle(
            Path(args.bundle).read_bytes(),
            load_public_keys(args.public_key),
            require_approvals=args.require_approvals,
        )
    except (BundleInvalid, OSError, ValueError) as exc:
        print(f"invalid: {exc}", file=err)
        return EXIT_REFUSED
    for warning in bundle.warnings:
        print(f"warning: {warning}", file=err)
    manifest = bundle.manifest
    approvers = ", ".join(f"'{name}'" for name in manifest.approver_names)
    print(
        f"valid: {manifest.decision_type} version {manifest.version}, sha256 {bundle.sha256}, "
        f"published by '{manifest.publisher.person}', approved by {approvers}",
        file=out,
    )
    return EXIT_OK


def _keygen(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from .keys import KeyLoadError, key_id, load_private_key_file, write_key_files

    try:
        private_path, public_path = write_key_files(args.out, args.name)
    except KeyLoadError as exc:
        raise InvalidInput([{"loc": ["--out"], "msg": str(exc)}]) from None
    kid = key_id(load_private_key_file(private_path))
    print(
        f"key {kid}: private key {private_path} (keep it; it never leaves this machine), "
        f"public key {public_path} (register it on the workbench's Signing keys page)",
        file=out,
    )
    return EXIT_OK


def _sign_approval(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from .keys import KeyLoadError, load_private_key_file
    from .statements import StatementInvalid, sign_as

    try:
        key = load_private_key_file(args.key)
    except KeyLoadError as exc:
        raise InvalidInput([{"loc": ["--key"], "msg": str(exc)}]) from None
    statement = _read_json(args.statement)
    try:
        # The CLI may read the clock: signed_at is the signer's own date.
        signed = sign_as(statement, key, signed_at=dt.datetime.now(dt.UTC))
    except StatementInvalid as exc:
        raise InvalidInput([{"loc": ["statement"], "msg": str(exc)}]) from None
    text = _dumps(signed.to_json())
    if args.out:
        _write_file(args.out, "--out", text.encode("utf-8"))
    else:
        out.write(text)
    return EXIT_OK
