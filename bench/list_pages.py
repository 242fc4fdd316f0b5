"""The first page of every list at 10,000 scenarios: bytes, queries and time, against the
cheapest signed-in page in the same run.

    .venv/bin/python bench/list_pages.py [--scenarios 10000] [--repeat 5] [--database PATH]
                                         [--database-url postgres://...]

Builds, in a scratch SQLite file (or the database `--database-url` names), the suite
`bench/web_load.py` uses (10 propositions) with `--scenarios` scenarios, not run, plus what
the other lists list: 60 finished runs, a corpus of 1,000 candidates, 60 service tokens and
30 versions. Then asks, as the suite's owner with Django's test client, for each list's first
page (and the scenarios list filtered and at a middle page), in `--repeat` interleaved rounds
after one uncounted, and prints each page's bytes, queries, median time and its ratio to
`/new-decision-type/`'s median; the target is at most 200 KB a first page. `--database PATH`
keeps the built file and reuses it on the next invocation; a database `--database-url` names
that already holds the suite is reused too.
"""

from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time
from pathlib import Path

from scratch_django import database_arguments, django_on

ROOT = Path(__file__).resolve().parent.parent
TARGET_BYTES = 200_000
KEY = "load.check"


def build(scenarios: int) -> None:
    """The suite of `run_pages.py`, without its run, and rows for the other lists."""
    from django.core.management import call_command
    from run_pages import SUITE

    call_command("load_demo", verbosity=0)
    code = SUITE.format(password="bench-password", scenarios=scenarios)
    code = code[: code.index("run = scenario_services.run_start")]
    exec(compile(code, "suite", "exec"), {})  # noqa: S102 - our own script

    from django.contrib.auth import get_user_model

    from contracts.models import ContractVersion, DecisionType
    from publishing import tokens
    from scenarios.models import Corpus, CorpusCandidate, SuiteRun

    owner = get_user_model().objects.get(username="load-owner")
    decision_type = DecisionType.objects.get(key=KEY)
    version = decision_type.versions.get(number=1)
    SuiteRun.objects.bulk_create(
        SuiteRun(
            decision_type=decision_type,
            version=version,
            created_by=owner,
            status=SuiteRun.Status.FINISHED,
            total=scenarios,
            done=scenarios,
            summary={"failures": 3, "flipped_slots": 12, "scenarios": scenarios},
        )  # fmt: skip
        for _ in range(60)
    )
    big = Corpus.objects.create(decision_type=decision_type, name="big", created_by=owner)
    CorpusCandidate.objects.bulk_create(
        CorpusCandidate(
            corpus=big,
            position=i,
            candidate_id=f"record-{i:04d}",
            data={
                "id": f"record-{i:04d}",
                "entity": "E1",
                "allowed_roles": ["analyst"],
                "allowed_purposes": ["check"],
                "evidence_class": "facility_record",
                "supports": ["fact_00"],
                "valid_from": "2026-01-01",
                "tokens": 10,
                "relevance": 0.5,
                "content": f"Record {i}.",
            },
        )  # fmt: skip
        for i in range(1000)
    )
    for i in range(60):
        tokens.token_create(actor=owner, name=f"service {i}", decision_types=[decision_type])
    ContractVersion.objects.bulk_create(
        ContractVersion(
            decision_type=decision_type,
            number=n,
            created_by=owner,
            status=ContractVersion.Status.RETIRED,
            created_at=dt.datetime(2026, 1, 1, tzinfo=dt.UTC),
        )  # fmt: skip
        for n in range(2, 32)
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenarios", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=5)
    database_arguments(parser, "the suite")
    args = parser.parse_args()
    started = time.perf_counter()
    url, reuse = django_on(args, "lists.sqlite3")
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext, override_settings

    from scenarios.models import Corpus, Scenario

    if args.database_url:
        from contracts.models import DecisionType

        reuse = DecisionType.objects.filter(key=KEY).exists()
    if not reuse:
        build(args.scenarios)
    with connection.cursor() as cursor:
        # The planner's statistics of the rows just built, as autovacuum would gather them.
        cursor.execute("ANALYZE")
    count = Scenario.objects.filter(decision_type__key=KEY).count()
    print(f"{count} scenarios in {url.split('?')[0]} ({time.perf_counter() - started:.0f} s)")

    client = Client()
    client.force_login(get_user_model().objects.get(username="load-owner"))
    suite = f"/suite/{KEY}/"
    big = Corpus.objects.get(decision_type__key=KEY, name="big").pk
    pages = {
        "cheapest (new decision type)": "/new-decision-type/",
        "scenarios (suite page)": suite,
        "scenarios ?verdict=unknown": f"{suite}?verdict=unknown",
        "scenarios ?q=scenario 09": f"{suite}?q=scenario+09",
        "scenarios, middle page": f"{suite}?page={max(1, count // 100)}",
        "candidates (1,000)": f"{suite}corpora/{big}/",
        "versions (31)": f"/types/{KEY}/versions/",
        "tokens (60)": "/tokens/",
    }
    times: dict[str, list[float]] = {name: [] for name in pages}
    sizes: dict[str, int] = {}
    queries: dict[str, int] = {}
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        for path in pages.values():  # a first round fills the caches, and is not counted
            client.get(path)
        for _ in range(args.repeat):
            # Interleaved: a slow moment of the shared machine lands on every page alike.
            for name, path in pages.items():
                with CaptureQueriesContext(connection) as captured:
                    begun = time.perf_counter()
                    response = client.get(path)
                    times[name].append(time.perf_counter() - begun)
                status = response.status_code
                sizes[name] = len(response.content) if status == 200 else -status
                queries[name] = len(captured)
    baseline = statistics.median(times["cheapest (new decision type)"])
    print(f"{'page':30} {'bytes':>11} {'queries':>8} {'median':>9} {'ratio':>7}")
    for name in pages:
        median = statistics.median(times[name])
        verdict = "ok" if 0 <= sizes[name] <= TARGET_BYTES else "OVER 200 KB"
        if sizes[name] < 0:
            verdict = f"answered {-sizes[name]}"
        print(
            f"{name:30} {sizes[name]:11,} {queries[name]:8} {median:8.3f}s "
            f"{median / baseline:6.1f}x  {verdict}"
        )


if __name__ == "__main__":
    main()
