"""The CLI's commands other than `compile` (see `cli`), imported only when one of them runs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, TextIO

from compiler._codes import authority_tier
from compiler._errors import InvalidInput
from compiler_tools._cli.streams import (
    EXIT_INVALID,
    EXIT_OK,
    EXIT_REFUSED,
    dumps,
    load,
    read_json,
    write,
    write_file,
)


def compare(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from compiler._compare import compare

    if args.top_k < 1:
        raise InvalidInput([{"loc": ["--top-k"], "msg": "must be at least 1"}])
    write(out, compare(load(args.input), args.top_k))
    return EXIT_OK


def sweep(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The sweep with its verdicts; exit 1 on any violation or failed expectation."""
    from pydantic import TypeAdapter, ValidationError

    from compiler._relations.expectations import VariantExpectation
    from compiler._sweep import sweep

    tiers, catalogue = {}, {}
    for given in args.tier:
        cls, _, tier = given.partition("=")
        if not cls or not tier:
            raise InvalidInput([{"loc": ["--tier"], "msg": f"'{given}' is not CLASS=TIER"}])
        tiers[cls] = tier
        try:
            catalogue[cls] = authority_tier(int(tier) if tier.isdigit() else tier)
        except ValueError as exc:
            raise InvalidInput([{"loc": ["--tier"], "msg": f"'{given}': {exc}"}]) from None
    expectations: list[VariantExpectation] = []
    if args.expectations:
        try:
            expectations = TypeAdapter(list[VariantExpectation]).validate_python(
                read_json(args.expectations)
            )
        except ValidationError as exc:
            raise InvalidInput(
                [{"loc": ["--expectations", *e["loc"]], "msg": e["msg"]} for e in exc.errors()]
            ) from None
    report = sweep(
        load(args.input), weak_classes=args.weak_class, expectations=expectations, tiers=tiers,
        catalogue=catalogue,
    )  # fmt: skip
    if args.json:
        write(out, report)
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


def schema(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.tests:
        from compiler_tools._contract_tests.files import file_schemas

        write(out, file_schemas())
        return EXIT_OK
    from compiler._input import CompileInput
    from compiler._output import CompileOutput

    schemas = {
        "input": CompileInput.model_json_schema(),
        "output": CompileOutput.model_json_schema(mode="serialization", by_alias=True),
    }
    write(out, schemas if args.which == "both" else schemas[args.which])
    return EXIT_OK


def pull(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from compiler_tools._pull import pull

    return pull(args.url, token_file=args.token_file, public_key=args.public_key,
                out=args.out, stdout=out, stderr=err, mode=args.mode,
                allow_downgrade=args.allow_downgrade, with_tests=args.with_tests,
                require_approvals=args.require_approvals)  # fmt: skip


def serve(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from compiler_tools._serve import missing_extra

    problem = missing_extra()
    if problem is not None:
        print(problem, file=err)
        return EXIT_INVALID
    from compiler_tools._runtime import BundleStore
    from compiler_tools._serve import serve as run_server
    from compiler_trust._keys import KeyLoadError

    try:
        store = BundleStore(args.bundle_dir, public_key=args.public_key,
                            interval=args.interval,
                            require_approvals=args.require_approvals)  # fmt: skip
    except KeyLoadError as exc:
        print(f"serve: {exc}", file=err)
        return EXIT_INVALID
    if store.last_error:
        print(f"warning: {store.last_error}", file=err)  # /healthz answers 503 until one loads
    run_server(store, host=args.host, port=args.port, threads=args.threads,
               max_body=args.max_body, stdout=out)  # fmt: skip
    return EXIT_OK


def test(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from compiler_tools._contract_tests.loading import InvalidTestFiles, load_tests
    from compiler_tools._contract_tests.reporting import junit_xml, summary_text
    from compiler_tools._contract_tests.running import run_tests

    keys = None
    if args.public_key:
        from compiler_trust._key_files import load_public_keys
        from compiler_trust._keys import KeyLoadError

        try:
            keys = load_public_keys(args.public_key)
        except KeyLoadError as exc:
            raise InvalidInput([{"loc": ["--public-key"], "msg": str(exc)}]) from None
    tests = load_tests(args.path, keys, args.tests)
    if tests.outside_catalogue:
        raise InvalidTestFiles(list(tests.outside_catalogue))
    widenings = _widenings(args, tests, keys)
    report = run_tests(tests)
    if args.mutate or args.min_score is not None:
        return _test_mutation(args, tests, report, out, err, widenings)
    if args.junit_xml:
        write_file(args.junit_xml, "--junit-xml", junit_xml(report, widenings))
    passed = report.passed and not (widenings and widenings.failed)
    if args.json:
        document = report.to_json()
        if widenings is not None:
            document.update(passed=passed, baseline=widenings.to_json())
        write(out, document)
    else:
        print(summary_text(report), file=out)
        if widenings is not None:
            print(widenings.summary_text(), file=out)
    return EXIT_OK if passed else EXIT_REFUSED


def _widenings(args: argparse.Namespace, tests: Any, keys: Any) -> Any:
    """`--baseline`: the widenings of the tests' contract against OLD (None without it)."""
    if not args.baseline:
        if args.fail_on_widening:
            message = "--fail-on-widening needs --baseline OLD to compare with"
            raise InvalidInput([{"loc": ["--fail-on-widening"], "msg": message}])
        return None
    from compiler_tools._contract_tests.baseline import baseline_widenings

    return baseline_widenings(tests, args.baseline, keys, fail_on_widening=args.fail_on_widening)


def _test_mutation(args: argparse.Namespace, tests: Any, report: Any, out: TextIO,
                   err: TextIO, widenings: Any = None) -> int:  # fmt: skip
    """`test --mutate`: the test run, then mutation testing over its scenarios; exit 1 when
    the run fails or the score is below `--min-score` (or, with `--baseline` and
    `--fail-on-widening`, there is a widening)."""
    from compiler_tools._contract_tests.mutation import (
        mutate,
        mutation_junit_xml,
        mutation_text,
        score_text,
    )
    from compiler_tools._contract_tests.reporting import summary_text

    minimum = _min_score(args)
    interactive = err.isatty()

    def progress(done: int, total: int) -> None:
        if interactive:
            end = "\n" if done == total else ""
            print(f"\rmutation testing: {done} of {total} mutants", end=end, file=err, flush=True)

    mutation = mutate(tests, progress)
    below = minimum is not None and mutation.score is not None and mutation.score < minimum
    if args.junit_xml:
        write_file(args.junit_xml, "--junit-xml", mutation_junit_xml(report, mutation))
    widened = widenings is not None and widenings.failed
    if args.json:
        document = {**report.to_json(), "mutation": mutation.to_json()}
        if widenings is not None:
            document.update(passed=report.passed and not widened, baseline=widenings.to_json())
        write(out, document)
    else:
        print(summary_text(report), file=out)
        if widenings is not None:
            print(widenings.summary_text(), file=out)
        print(f"\n{mutation_text(mutation)}", file=out)
        if below:
            print(f"FAILED: {score_text(mutation)}, below the minimum {minimum:.0%}", file=out)
    return EXIT_OK if report.passed and not below and not widened else EXIT_REFUSED


def _min_score(args: argparse.Namespace) -> float | None:
    """`--min-score` as a fraction: 0.8 and 80 both mean 80%."""
    if args.min_score is None:
        return None
    if not args.mutate:
        raise InvalidInput([{"loc": ["--min-score"], "msg": "needs --mutate"}])
    value = args.min_score
    if not 0 <= value <= 100:
        message = f"{value:g} is not a score: give a fraction (0.8) or a percentage (80)"
        raise InvalidInput([{"loc": ["--min-score"], "msg": message}])
    return value / 100 if value > 1 else value


def verify_bundle(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from compiler_trust._bundle.reasons import BundleInvalid
    from compiler_trust._bundle.verification import verify_bundle
    from compiler_trust._key_files import load_public_keys

    try:
        bundle = verify_bundle(
            Path(args.bundle).read_bytes(),
            load_public_keys(args.public_key),
            require_approvals=args.require_approvals,
            # The CLI may read the clock: no signature may be dated in the future.
            now=dt.datetime.now(dt.UTC),
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


def keygen(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    from compiler_trust._key_files import load_private_key_file, write_key_files
    from compiler_trust._keys import KeyLoadError, key_id

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


def sign_approval(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    import datetime as dt

    from compiler_trust._key_files import load_private_key_file
    from compiler_trust._keys import KeyLoadError
    from compiler_trust._statements import StatementInvalid, sign_as

    try:
        key = load_private_key_file(args.key)
    except KeyLoadError as exc:
        raise InvalidInput([{"loc": ["--key"], "msg": str(exc)}]) from None
    statement = read_json(args.statement)
    try:
        # The CLI may read the clock: signed_at is the signer's own date.
        signed = sign_as(statement, key, signed_at=dt.datetime.now(dt.UTC))
    except StatementInvalid as exc:
        raise InvalidInput([{"loc": ["statement"], "msg": str(exc)}]) from None
    text = dumps(signed.to_json())
    if args.out:
        write_file(args.out, "--out", text.encode("utf-8"))
    else:
        out.write(text)
    return EXIT_OK
