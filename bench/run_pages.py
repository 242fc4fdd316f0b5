"""The pages of a large run: size and time of each at 10,000 scenarios.

    .venv/bin/python bench/run_pages.py [--scenarios 10000] [--repeat 3] [--database PATH]
                                        [--database-url postgres://...]

Builds, in a scratch SQLite file, a suite of 10 propositions (`SUITE`) with
`--scenarios` scenarios, runs it in process, then asks for each page of the run with Django's
test client as its owner: the run page (the flip matrix's totals and first rows), the same
with every perturbation, the rows from the middle of the run (a plain link's page and the
lazily loaded rows htmx asks for), the coverage page and the streamed JSON report, in
`--repeat` interleaved rounds. Prints bytes, the median and best wall-clock time and the
median CPU time of this process (the database is SQLite, in process: on a machine shared
with other work the CPU time is the steadier figure); the target is at most 1 s each.
For the streamed report it prints the time to the first byte as well as the total.

`--database PATH` builds the run into PATH and keeps it; when PATH already holds a run of the
suite (from an earlier invocation), it is migrated (so a new migration's backfill runs on it)
and reused, which skips the build (minutes at 10,000 scenarios). `--scenarios` is then what
the kept run holds, whatever is asked. `--database-url` does the same with another database
(PostgreSQL): an empty database is migrated and built into, one that holds the suite's run is
reused. There the database server's own CPU time is not in the figure, so read the wall time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

from scratch_django import database_arguments, django_on

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 1.0

SUITE = """
import datetime as dt
from django.contrib.auth import get_user_model
from contracts import selectors, services
from scenarios import services as scenario_services
from scenarios.models import Scenario

PROPOSITIONS = [f"fact_{{i:02d}}" for i in range(10)]
owner = get_user_model().objects.create_user(
    "load-owner", password={password!r}, is_superuser=True
)
dt_ = services.decision_type_create(
    actor=owner, key="load.check", title="Ten facts", purposes=["check"]
)
version = selectors.current_version(decision_type=dt_)
for key in PROPOSITIONS:
    services.proposition_add(
        actor=owner, version=version, expected_lock_version=version.lock_version,
        key=key, accepted_classes=["facility_record"],
    )
    version.refresh_from_db()
candidates = [
    {{"id": f"record-{{k}}", "entity": "E1", "allowed_roles": ["analyst"],
     "allowed_purposes": ["check"], "evidence_class": "facility_record", "supports": [k],
     "valid_from": "2026-01-01",
     "tokens": 10, "relevance": 0.5, "content": f"Record for {{k}}."}}
    for k in PROPOSITIONS[:3]
] + [
    {{"id": f"note-{{k}}", "entity": "E1", "allowed_roles": ["analyst"],
     "allowed_purposes": ["check"], "evidence_class": "case_note", "supports": [k],
     "valid_from": "2026-01-01",
     "tokens": 10, "relevance": 0.9, "content": "A note."}}
    for k in PROPOSITIONS[3:5]
]
corpus = scenario_services.corpus_import(actor=owner, decision_type=dt_, name="load",
                                         document={{"candidates": candidates}})
Scenario.objects.bulk_create(
    Scenario(decision_type=dt_, corpus=corpus, name=f"scenario {{i:03d}}", position=i,
             principal="ana", roles=["analyst"], purpose="check", entity="E1",
             decision_date=dt.date(2026, 6, 1) + dt.timedelta(days=i % 30), token_budget=500,
             expected_slots={{"fact_00": "supported", "fact_09": "unknown"}}, created_by=owner)
    for i in range({scenarios})
)
run = scenario_services.run_start(actor=owner, version=version, background=False)
print(run.pk, run.summary["compiles"], dt_.key, version.number)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenarios", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    database_arguments(parser, "the run")
    args = parser.parse_args()
    started = time.perf_counter()
    database, reuse = django_on(args, "pages.sqlite3")
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings

    if args.database_url:
        from scenarios.models import SuiteRun

        reuse = SuiteRun.objects.filter(decision_type__key="load.check").exists()
        database = args.database_url
    if reuse:
        run_pk, compiles, key, scenarios = kept_run()
        print(
            f"{scenarios} scenarios, {compiles} compiles, kept in {database} "
            f"(migrated in {time.perf_counter() - started:.1f} s)"
        )
    else:
        call_command("load_demo", verbosity=0)
        namespace: dict[str, object] = {}
        code = SUITE.format(password="bench-password", scenarios=args.scenarios)
        code = code.replace("print(run.pk", "result = (run.pk")
        exec(compile(code, "suite", "exec"), namespace)  # noqa: S102 - our own script
        run_pk, compiles, key, _ = namespace["result"]
        scenarios = args.scenarios
        print(
            f"{scenarios} scenarios, {compiles} compiles, run in "
            f"{time.perf_counter() - started:.0f} s"
        )

    from scenarios import stored_reports
    from scenarios.models import SuiteRun

    kept = SuiteRun.objects.get(pk=run_pk)
    if stored_reports.has_pieces(kept):
        print(f"report kept in {kept.report_pieces.count()} pieces as the run committed")
    else:  # a run kept from an earlier invocation, built before runs kept pieces
        kept_as = "the parts written as it finished" if kept.report_parts.exists() else "its rows"
        print(f"the run kept no report pieces: its report comes from {kept_as}")

    from django.contrib.auth import get_user_model

    client = Client()
    client.force_login(get_user_model().objects.get(username="load-owner"))
    from scenarios.runner import POSITION_STRIDE

    run = f"/suite/{key}/runs/{run_pk}/"
    middle = scenarios // 2 * POSITION_STRIDE  # rows begin with scenario i at i * STRIDE
    pages = {
        "run page": run,
        "every perturbation": f"{run}?show=all",
        f"rows after {middle}": f"{run}?show=all&after={middle}",
        "next rows (htmx)": f"{run}?show=all&after={middle}&partial=rows",
        "coverage": f"{run}coverage/",
        "report.json (streamed)": f"{run}report.json",
    }
    # Interleaved: each round asks for every page once, so a slow moment of the machine
    # lands on all of them; each page's median and best over the rounds are printed.
    times: dict[str, list[float]] = {name: [] for name in pages}
    cpu: dict[str, list[float]] = {name: [] for name in pages}
    first_bytes: dict[str, list[float]] = {name: [] for name in pages}
    sizes: dict[str, int] = {}
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        for _ in range(args.repeat):
            for name, path in pages.items():
                headers = {"HX-Request": "true"} if "partial" in path else {}
                begun, begun_cpu = time.perf_counter(), time.process_time()
                response = client.get(path, headers=headers)
                assert response.status_code == 200, (path, response.status_code)
                if response.streaming:
                    pieces = iter(response.streaming_content)
                    body = next(pieces, b"")
                    first_bytes[name].append(time.perf_counter() - begun)
                    body += b"".join(pieces)
                else:
                    body = response.content
                times[name].append(time.perf_counter() - begun)
                cpu[name].append(time.process_time() - begun_cpu)
                sizes[name] = len(body)
    print(f"{'page':24} {'bytes':>11}        median    best   CPU  (of {args.repeat})")
    for name in pages:
        median, best = statistics.median(times[name]), min(times[name])
        verdict = "ok" if median <= TARGET_SECONDS else "over 1 s"
        print(
            f"{name:24} {sizes[name]:11,} bytes  {median:6.3f} s {best:6.3f} s "
            f"{statistics.median(cpu[name]):6.3f} s  {verdict}"
        )
        if first_bytes[name]:
            ttfb = statistics.median(first_bytes[name])
            print(
                f"{'  first byte':24} {'':11}        {ttfb:6.3f} s {min(first_bytes[name]):6.3f} s"
            )


def kept_run() -> tuple[int, int, str, int]:
    """The kept database's run of the suite: its pk, compiles, suite key and scenarios."""
    from scenarios.models import SuiteRun

    run = SuiteRun.objects.filter(decision_type__key="load.check").latest("created_at", "pk")
    return run.pk, run.summary["compiles"], run.decision_type.key, run.summary["scenarios"]


if __name__ == "__main__":
    main()
