"""Pushdown against the in-memory path, on one PostgreSQL candidate table.

    python bench/pushdown.py [--n 1000000] [--entities 1000] [--repeat 3] [--url postgres://…]

Loads a seeded synthetic pool of `--n` candidates into a scratch PostgreSQL database (COPY,
then the indexes of `compiler.pushdown.candidate_table_ddl`), then, interleaved and repeated:

* pushdown: run `admission_query`, rebuild the returned rows, compile them (re-checked in memory);
* in memory: fetch every row's document, validate the whole pool and compile it.

It prints both medians and their ratio (target: pushdown at most 0.1x the in-memory path) and
checks, on every repeat, that the two compiles agree on every output field except the trace and
the rejection list (packet, slots, plan id, valid_until…). The scratch database is dropped at the
end, also on failure.

The pool spreads candidates evenly over `--entities` entities, as a production corpus spreads
over customers; the request concerns one of them, so the query returns about n / entities rows.
Within that entity every admission rule is exercised: roles (one inherited), purposes, denies,
classes (accepted, weak, unknown), validity windows, supersession flags and links, dependencies
and groups.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
import statistics
import sys
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psycopg  # noqa: E402
from compile_scale import ACCEPTED, PROPOSITIONS  # noqa: E402
from compile_scale import make_document as scale_document  # noqa: E402

from compiler import compile_input, load_input, pushdown  # noqa: E402

TARGET_RATIO = 0.1
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/postgres"
TARGET = "ATLAS-IN-01"


def make_document(size: int, entities: int, seed: int = 11) -> dict[str, Any]:
    rng = random.Random(seed)
    decision = dt.date(2026, 8, 30)
    names = [TARGET] + [f"ENT-{i:05d}" for i in range(1, entities)]
    roles = ["credit_analyst", "credit_staff", "financial_crime", "ops"]
    purposes = ["annual_credit_review", "investigation"]
    classes = [c for cs in ACCEPTED.values() for c in cs] + ["case_note", "email", "unknown"]
    ids = [f"doc-{rng.randrange(10**9):09d}-{i}" for i in range(size)]
    candidates = []
    for i in range(size):
        start = decision - dt.timedelta(days=rng.randint(-30, 700))
        end = start + dt.timedelta(days=rng.randint(10, 900)) if rng.random() < 0.4 else None
        c: dict[str, Any] = {
            "id": ids[i],
            "entity": rng.choice(names),
            "allowed_roles": [rng.choice(roles)],
            "allowed_purposes": [rng.choice(purposes)],
            "denied_roles": ["financial_crime"] if rng.random() < 0.02 else [],
            "denied_principals": ["review-bot"] if rng.random() < 0.01 else [],
            "evidence_class": rng.choice(classes),
            "supports": rng.sample(PROPOSITIONS, k=rng.choice([1, 1, 1, 2])),
            "contradicts": [rng.choice(PROPOSITIONS)] if rng.random() < 0.01 else [],
            "valid_from": start.isoformat(),
            "valid_to": end.isoformat() if end else None,
            "superseded": rng.random() < 0.05,
            "tokens": rng.randint(20, 400),
            "relevance": round(rng.random(), 3),
            "content": f"Synthetic document {i}.",
        }
        # Links to earlier candidates (of any entity): supersession, dependencies, groups.
        if i and rng.random() < 0.02:
            c["superseded_by"] = ids[rng.randrange(max(0, i - 50), i)]
        if i and rng.random() < 0.02:
            c["depends_on"] = [ids[rng.randrange(max(0, i - 50), i)]]
        if rng.random() < 0.02:
            c["group"] = f"grp-{rng.randrange(size // 20 + 1)}"
        candidates.append(c)
    # The request, contract and directory of the scale bench: entity "Atlas", 10 propositions.
    return {**scale_document(0), "candidates": candidates}


def load_table(connection: psycopg.Connection, candidates: Any) -> float:
    started = time.perf_counter()
    create, *indexes = pushdown.candidate_table_ddl("postgresql")
    connection.execute(create)
    with connection.cursor() as cursor, cursor.copy(pushdown.copy_sql()) as copy:
        for c in candidates:
            copy.write_row(pushdown.candidate_row(c))
    for statement in indexes:
        connection.execute(statement)
    connection.execute(f"ANALYZE {pushdown.DEFAULT_TABLE}")
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1_000_000, help="candidates in the table")
    parser.add_argument("--entities", type=int, default=1000, help="entities they spread over")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--url", default=DEFAULT_URL, help="a PostgreSQL server (any database)")
    args = parser.parse_args()

    started = time.perf_counter()
    raw = make_document(args.n, args.entities)
    whole = load_input(raw)
    request, contract, directory = whole.request, whole.contract, whole.directory
    print(f"generated and validated {args.n} candidates in {time.perf_counter() - started:.1f} s")

    name = f"wt_pushdown_bench_{uuid.uuid4().hex[:10]}"
    admin = psycopg.connect(args.url, autocommit=True)
    admin.execute(f"CREATE DATABASE {name}")
    try:
        url = args.url.rsplit("/", 1)[0] + f"/{name}"
        with psycopg.connect(url, autocommit=True) as connection:
            seconds = load_table(connection, whole.candidates)
            print(f"loaded {args.n} rows into {name} (COPY + indexes) in {seconds:.1f} s")
            del raw, whole
            return run(connection, request, contract, directory, args.repeat)
    finally:
        admin.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        admin.close()


def run(connection, request, contract, directory, repeat: int) -> int:
    def execute(sql: str, params: list[Any]) -> list[tuple[str, Any]]:
        return connection.execute(sql, params).fetchall()

    def pushed_down():
        return pushdown.compile_pushed_down(
            request, contract, "postgresql", execute, directory=directory
        )

    def in_memory():
        rows = connection.execute(f"SELECT document FROM {pushdown.DEFAULT_TABLE}").fetchall()
        document = {
            "request": request.model_dump(mode="json"),
            "contract": contract.model_dump(mode="json"),
            "directory": directory.model_dump(mode="json"),
            "candidates": [json.loads(r[0]) for r in rows],
        }
        del rows
        return compile_input(load_input(document))

    times: dict[str, list[float]] = {"pushdown": [], "in memory": []}
    loaded = 0
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = pushed_down()
        t1 = time.perf_counter()
        full = in_memory()
        t2 = time.perf_counter()
        times["pushdown"].append(t1 - t0)
        times["in memory"].append(t2 - t1)
        loaded = result.loaded
        same = pushdown.comparable(result.output) == pushdown.comparable(full)
        assert same, "the pushed-down compile differs from the whole-pool compile"
        assert not result.mismatched, f"query and in-memory check disagree: {result.mismatched}"
        del full
    out = result.output
    medians = {k: statistics.median(v) for k, v in times.items()}
    ratio = medians["pushdown"] / medians["in memory"]
    print(
        f"rows returned by the query: {loaded} (U: {len(result.pushed_admitted)}); "
        f"packet {len(out.packet)} items, slots "
        + ", ".join(f"{s.proposition}={s.state}" for s in out.slots)
    )
    for label, value in medians.items():
        print(f"{label:>10}: median {value * 1e3:10.1f} ms over {repeat} runs")
    verdict = "meets" if ratio <= TARGET_RATIO else "MISSES"
    print(
        f"pushdown is {ratio:.4f}x the in-memory path; {verdict} the {TARGET_RATIO}x target; "
        "packet, slots, plan id and valid_until identical on every run"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
