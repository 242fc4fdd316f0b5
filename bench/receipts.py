"""Receipts from production: the size of a batch, ingest and replay speed, on PostgreSQL.

    .venv/bin/python bench/receipts.py [--database-url postgres://postgres@127.0.0.1:5432/bench_receipts]
                                       [--receipts 5000] [--candidates 50] [--repeat 3]
                                       [--replay-repeat N] [--no-replay]

    .venv/bin/python bench/receipts.py --receipts 100000 --repeat 1   # the issue's scale

Builds the demo workspace in a scratch database (dropped and recreated) and one decision of
`--candidates` candidates compiled against the published Atlas bundle, then:

* sizes: one receipt in each format, and a batch of 500 compact receipts plain and gzipped,
  against the API's body limit;
* ingest: `--receipts` well-formed receipts (the same decision under distinct ids) posted
  gzipped in batches of 500 through the whole stack (middleware, django-ninja, the ingest)
  with Django's test client, beside a trivial baseline in the same run: the same bodies
  inflated, parsed and written as ingest stores them with one `bulk_create` each, outside
  the HTTP stack and with nothing checked. Interleaved,
  `--repeat` times; the medians in receipts/s (target: ingest at least 2,000/s), and per
  CPU second of this process (the steadier figure on a machine busy with other work);
* replay: the receipts replayed against the Atlas draft by `manage.py db_worker --batch`
  processes, one then two (interleaved, each started in a session of its own as
  bench/parallel_runs.py explains), every receipt checked against its bundle first (the
  checks are reset before each attempt); receipts/s, the workers' CPU seconds (two workers
  using the same CPU in more wall time are waiting on a busy machine, not on each other) and
  the ratio of the medians two/one (target: at most 0.6), beside the baseline of one compile
  of the decision in this process. `--replay-repeat` (default `--repeat`) sets how many times.
  Since the machine may be busy, the CPU figures come too: receipts per CPU second of the
  workers, and the ratio two workers would reach with a core each (half their CPU seconds
  against one worker's), which shows whether slicing costs anything beyond the compiles.

The database's own CPU time is not in the in-process figures; the load average is printed
with each attempt, so a noisy measurement shows as one.
"""

from __future__ import annotations

import argparse
import copy
import gzip
import io
import json
import os
import secrets
import statistics
import sys
import time
from pathlib import Path

from parallel_runs import drain_queue  # bench/ is the script's folder, first on the path

ROOT = Path(__file__).resolve().parent.parent
INGEST_TARGET = 2000.0
RATIO_TARGET = 0.6
BATCH = 500


def recreate(url: str) -> None:
    import psycopg

    base, name = url.rsplit("/", 1)
    with psycopg.connect(f"{base}/postgres", autocommit=True) as db:
        db.execute(f'DROP DATABASE IF EXISTS "{name}"')
        db.execute(f'CREATE DATABASE "{name}"')


def decision(candidates: int) -> tuple[dict, dict, object]:
    """(receipt in the first format, compact receipt, compile input) of one Atlas decision."""
    from compiler import compile_input
    from compiler_trust import (
        compact_receipt,
        compile_input_from_bundle,
        make_receipt,
        verify_bundle,
    )
    from contracts.models import DecisionType
    from publishing import signing, tokens

    atlas = DecisionType.objects.get(key="credit.review.continuation")
    document = json.loads((ROOT / "examples/atlas.json").read_text())
    request = {k: v for k, v in document.items() if k != "contract"}
    pool = []
    for n in range(candidates):
        item = copy.deepcopy(request["candidates"][n % len(request["candidates"])])
        item["id"] = f"{item['id']}-{n}"
        item["relevance"] = round(0.3 + (n * 37 % 70) / 100, 2)
        item["content"] = f"evidence text {n} " * 20
        pool.append(item)
    request["candidates"] = pool
    bundle = verify_bundle(tokens.latest_bundle(atlas).data, signing.trusted_public_keys())
    compile_document = compile_input_from_bundle(bundle, request)
    receipt = make_receipt(compile_document, compile_input(compile_document),
                           bundle_sha256=bundle.sha256)  # fmt: skip
    return receipt.to_json(), compact_receipt(receipt), compile_document


def bodies(compact: dict, count: int, prefix: str) -> list[bytes]:
    batches = []
    for start in range(0, count, BATCH):
        batch = [{**compact, "decision_id": f"{prefix}-{n}"}
                 for n in range(start, min(count, start + BATCH))]  # fmt: skip
        batches.append(gzip.compress(json.dumps({"receipts": batch}).encode(), 6))
    return batches


def ingest(client, secret: str, batches: list[bytes]) -> float:
    started = time.perf_counter()
    for body in batches:
        response = client.post(
            "/api/v1/decisions", body, content_type="application/json",
            headers={"Authorization": f"Bearer {secret}", "Content-Encoding": "gzip"},
        )  # fmt: skip
        assert response.status_code == 200, response.content[:300]
        assert response.json()["refused"] == 0, response.content[:300]
    return time.perf_counter() - started


def baseline(batches: list[bytes], bundle, decision_type, token) -> float:
    """The same bodies inflated, parsed and written as ingest stores them (one compressed
    document and a row per receipt), outside the HTTP stack, nothing checked or hashed."""
    import orjson
    from django.db import transaction

    from publishing.models import DecisionReceipt, ReceiptBatch, receipt_text

    started = time.perf_counter()
    for body in batches:
        receipts = orjson.loads(gzip.decompress(body))["receipts"]
        with transaction.atomic():
            batch = ReceiptBatch.objects.create(
                document=ReceiptBatch.pack([receipt_text(r) for r in receipts])
            )
            DecisionReceipt.objects.bulk_create(
                DecisionReceipt(
                    decision_type=decision_type,
                    bundle=bundle,
                    token=token,
                    batch=batch,
                    position=n,
                    decision_id=r["decision_id"],
                )  # fmt: skip
                for n, r in enumerate(receipts)
            )
    return time.perf_counter() - started


def timed_replay(env: dict[str, str], workers: int) -> tuple[float, float, str]:
    from contracts.models import DecisionType
    from publishing import replay
    from publishing.models import DecisionReceipt, ReceiptReplay

    DecisionReceipt.objects.update(status=DecisionReceipt.Status.UNCHECKED, problems=[])
    ReceiptReplay.objects.all().delete()  # the last replay's slices, out of the way
    atlas = DecisionType.objects.get(key="credit.review.continuation")
    row = replay.replay_start(actor=None, version=atlas.versions.get(number=2))
    seconds, cpu = drain_queue(env, workers)
    row = ReceiptReplay.objects.get(pk=row.pk)
    if row.status != ReceiptReplay.Status.DONE:
        sys.exit(f"the replay did not finish ({row.status}, {row.done}/{row.total}): run a "
                 f"worker by hand to see why")  # fmt: skip
    result = row.result
    summary = f"workers' CPU {cpu:.1f} s; {row.status}: {row.done}/{row.total}, "
    summary += f"{result.get('replayed')} replayed, "
    summary += f"{len(result.get('changed', []))} changed, {result.get('refused')} refused"
    return seconds, cpu, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--database-url", default="postgres://postgres@127.0.0.1:5432/bench_receipts"
    )
    parser.add_argument("--receipts", type=int, default=5000)
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--replay-repeat", type=int, default=None, help="default: --repeat")
    parser.add_argument("--no-replay", action="store_true", help="sizes and ingest only")
    args = parser.parse_args()
    env = os.environ | {
        "DJANGO_SETTINGS_MODULE": "workbench.settings.dev",
        "DATABASE_URL": args.database_url,
        "DJANGO_DEBUG": "0",  # no query log
        "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
        "DJANGO_ALLOWED_HOSTS": "testserver",
        "PYTHONPATH": str(ROOT),
    }
    os.environ.update(env)
    sys.path.insert(0, str(ROOT))
    recreate(args.database_url)
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings

    from compiler import compile_input
    from contracts.models import DecisionType
    from publishing import tokens
    from publishing.models import DecisionReceipt, ReceiptBatch

    call_command("migrate", verbosity=0, interactive=False)
    call_command("load_demo", stdout=io.StringIO())
    first, compact, compile_document = decision(args.candidates)
    limit = settings.API_BODY_MAX_BYTES
    batch = json.dumps({"receipts": [compact] * BATCH}).encode()
    print(f"one receipt of {args.candidates} candidates: {len(json.dumps(first)):,} bytes "
          f"as receipt/1, {len(json.dumps(compact)):,} bytes compact (/2)")  # fmt: skip
    print(f"a batch of {BATCH} compact: {len(batch):,} bytes plain "
          f"({len(batch) / limit:.0%} of the {limit:,}-byte limit), "
          f"{len(gzip.compress(batch, 6)):,} bytes gzipped")  # fmt: skip

    atlas = DecisionType.objects.get(key="credit.review.continuation")
    olivia = get_user_model().objects.get(username="olivia")
    token, secret = tokens.token_create(actor=olivia, name="bench", decision_types=[atlas])
    bundle = tokens.latest_bundle(atlas)
    client = Client()
    rates: dict[str, list[float]] = {"ingest": [], "baseline": []}
    cpu_rates: dict[str, list[float]] = {"ingest": [], "baseline": []}
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        for attempt in range(args.repeat):
            batches = bodies(compact, args.receipts, f"a{attempt}")
            order = ("ingest", "baseline") if attempt % 2 == 0 else ("baseline", "ingest")
            for name in order:
                DecisionReceipt.objects.all().delete()
                ReceiptBatch.objects.all().delete()
                cpu = time.process_time()
                if name == "ingest":
                    seconds = ingest(client, secret, batches)
                else:
                    seconds = baseline(batches, bundle, atlas, token)
                cpu = time.process_time() - cpu
                rates[name].append(args.receipts / seconds)
                cpu_rates[name].append(args.receipts / cpu)
                print(f"attempt {attempt + 1}: {name:8} {args.receipts / seconds:8,.0f} "
                      f"receipts/s, {args.receipts / cpu:8,.0f} per CPU second of this "
                      f"process  load {os.getloadavg()[0]:4.1f}")  # fmt: skip
    ingest_rate, baseline_rate = (statistics.median(rates[k]) for k in ("ingest", "baseline"))
    ingest_cpu, baseline_cpu = (statistics.median(cpu_rates[k]) for k in ("ingest", "baseline"))
    verdict = "ok" if ingest_rate >= INGEST_TARGET else f"under {INGEST_TARGET:,.0f}/s"
    print(f"ingest: median {ingest_rate:,.0f} receipts/s ({verdict}); baseline "
          f"{baseline_rate:,.0f}/s; ingest takes {baseline_rate / ingest_rate:.1f}x the "
          f"baseline's time")  # fmt: skip
    print(f"per CPU second of this process (steadier on a busy machine; the database "
          f"server's CPU is not in it): ingest {ingest_cpu:,.0f}, baseline "
          f"{baseline_cpu:,.0f}")  # fmt: skip
    if args.no_replay:
        return

    # The last attempt's receipts stay (the loop ends on whichever ran last): keep the
    # ingested ones for the replay.
    DecisionReceipt.objects.all().delete()
    ReceiptBatch.objects.all().delete()
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        ingest(client, secret, bodies(compact, args.receipts, "replay"))
    started = time.perf_counter()
    for _ in range(50):
        compile_input(compile_document)
    compile_rate = 50 / (time.perf_counter() - started)
    times: dict[int, list[float]] = {1: [], 2: []}
    cpus: dict[int, list[float]] = {1: [], 2: []}
    for attempt in range(args.replay_repeat or args.repeat):
        for workers in (1, 2) if attempt % 2 == 0 else (2, 1):
            seconds, cpu, summary = timed_replay(env, workers)
            times[workers].append(seconds)
            cpus[workers].append(cpu)
            print(f"attempt {attempt + 1}: {workers} worker(s) {seconds:6.2f} s "
                  f"({args.receipts / seconds:,.0f} receipts/s), load "
                  f"{os.getloadavg()[0]:4.1f}  ({summary})")  # fmt: skip
    one, two = statistics.median(times[1]), statistics.median(times[2])
    print(f"replay: one worker {args.receipts / one:,.0f} receipts/s, two workers "
          f"{args.receipts / two:,.0f} receipts/s; ratio of medians two/one {two / one:.2f} "
          f"(target <= {RATIO_TARGET}); baseline: one compile of the decision "
          f"{compile_rate:,.0f}/s in this process (a replay compiles each receipt twice the "
          f"first time: its check, then the draft)")  # fmt: skip
    cpu_one, cpu_two = statistics.median(cpus[1]), statistics.median(cpus[2])
    print(f"replay per CPU second of the workers: one worker {args.receipts / cpu_one:,.0f} "
          f"receipts, two workers {args.receipts / cpu_two:,.0f} (two spend {cpu_two / cpu_one:.2f}"
          f"x one's CPU); with a core each, two would take {cpu_two / 2 / cpu_one:.2f} of one's "
          f"time (the load average says how far this machine was from that)")  # fmt: skip


if __name__ == "__main__":
    main()
