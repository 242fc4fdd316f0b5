"""Every heavy page of the workbench, one client at a time, against the cheapest signed-in page.

    .venv/bin/python bench/web_pages.py [--scenarios 50 2000 10000] [--domain gas_entry]
                                        [--database-url postgres://…/EMPTY_DB] [--keep DIR]
                                        [--requests 30] [--saturate-seconds 8] [--clients 8]
                                        [--workers 2] [--threads 2]

For each suite size it builds a scratch production deployment: a SQLite file in a temporary
directory (or the PostgreSQL database `--database-url` names, which must be empty; the size
is then appended to its name, `…/wb_bench_2000`, and that database created if missing),
`migrate`, `collectstatic`, and a decision type from one of `bench/domains/` (its catalogue,
contract, corpora and stories imported with the contract-test import), its stories copied to
`N` scenarios (bulk inserts), version 1 published over that suite, version 2 a submitted
draft with one accepted class fewer, both impact reports computed in process, and a finished
run of version 2; a PostgreSQL database is then vacuumed and analysed, as autovacuum would.
`--keep DIR` keeps each SQLite build in DIR and reuses one built before.

Then `gunicorn workbench.wsgi` with `workbench.settings.production` on 127.0.0.1, one person
signed in (the API called with a service token), and for each page:

* 1 client: `--requests` requests a page, round-robin across the pages (so a slow moment of
  the machine lands on all of them), sent as a browser sends them (`Accept-Encoding: gzip`);
  the median and p95, and the median's ratio to the cheapest signed-in page's
  (`/new-decision-type/`) in the same run;
* for a page with an ETag, the median of a repeat that sends it back (answered 304);
* the answer's bytes, uncompressed and as sent when gzip is accepted;
* the SQL queries one request makes, counted in a separate process over the same database
  with DEBUG off (Django's test client, `connection.execute_wrapper`, the second of two
  requests so one-off caches are warm);
* saturated throughput: `--clients` clients asking for that page alone for
  `--saturate-seconds`, in requests per second, and its ratio to the trivial page's.

It prints a Markdown table per size. Loopback only; the server and the clients share the
machine, so read the ratios, which are measured in the same run, rather than the seconds.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
DOMAINS = ROOT / "bench" / "domains"
OWNER, REVIEWER = "bench-owner", "bench-reviewer"
TRIVIAL = "trivial (/new-decision-type/)"
PAGE_ORDER = (
    "impact report, draft vs published",
    "scenarios list",
    "flip matrix ?show=all",
    "run page",
    "contract editor",
    "decision type page",
    "API bundle",
    TRIVIAL,
)


# --------------------------------------------------------------------------- the build
# Runs in a child process with the production settings (`--stage build`, `--stage count`).


def build(domain: str, scenarios: int, keys: Path) -> dict[str, Any]:
    """The suite, its published and submitted versions, both reports and a finished run; what
    the pages' URLs need (printed as JSON by the child)."""
    from django.contrib.auth import get_user_model
    from django.db import transaction

    from compiler_tools import read_document
    from contracts import roles, services
    from contracts.models import DecisionType, SourceClass
    from publishing import contract_import, review
    from publishing.demo import KeyFiles
    from scenarios import services as scenario_services
    from scenarios.models import Scenario

    directory = DOMAINS / domain
    document = read_document(directory / "contract.yaml")
    contract = document["contract"]
    key = contract["decision_type"]
    users = get_user_model().objects
    existing = DecisionType.objects.filter(key=key).first()
    if existing is not None:
        return kept(existing)
    # No passwords: each run signs the owner in with a session of its own (`renew`), so
    # two runs over one kept build never sign each other out.
    owner = users.create_user(OWNER, is_superuser=True, is_staff=True)
    reviewer = users.create_user(REVIEWER)
    tiers = {tier.name.lower(): tier.value for tier in SourceClass.AuthorityTier}
    SourceClass.objects.bulk_create(
        [
            SourceClass(
                key=c["key"],
                label=c["label"],
                authority_tier=tiers[c["authority_tier"]],
                weak=c.get("weak", False),
            )
            for c in document.get("source_classes", [])
        ],
        ignore_conflicts=True,
    )
    started = time.perf_counter()
    decision_type = services.decision_type_create(
        actor=owner, key=key, title=key, purposes=contract["purposes"]
    )
    services.access_grant(
        actor=owner, decision_type=decision_type, user=reviewer, role=roles.Role.REVIEWER
    )
    plan = contract_import.import_plan(decision_type, directory)
    contract_import.import_apply(
        actor=owner, decision_type=decision_type, directory=directory, confirmed_sha256=plan.sha256
    )
    stories = list(Scenario.objects.filter(decision_type=decision_type))
    fields = [f.attname for f in Scenario._meta.concrete_fields if not f.primary_key]
    copies = []
    for index in range(len(stories), scenarios):
        story = stories[index % len(stories)]
        copy = Scenario(**{name: getattr(story, name) for name in fields})
        copy.name = f"{story.name} #{index:05d}"
        # Each copy keeps its story's request (date included), so its expectations hold
        # and version 1 can be published with them.
        copy.position = index
        copies.append(copy)
    Scenario.objects.bulk_create(copies, batch_size=2000)
    print(
        f"suite of {scenarios} scenarios built in {time.perf_counter() - started:.0f} s",
        file=sys.stderr,
    )

    people = KeyFiles(keys)
    for person in (owner, reviewer):
        people.ensure(person)
    first = decision_type.versions.get(number=1)
    with transaction.atomic():
        first = review.version_submit(
            actor=owner, version=first, expected_lock_version=first.lock_version
        )
        report = review.report_ensure(first)
        people.approve(
            actor=reviewer,
            version=first,
            report_sha256=report.sha256,
            acknowledged_widenings=_widenings(report),
        )
        people.publish(actor=owner, version=first)
    print(f"version 1 published at {time.perf_counter() - started:.0f} s", file=sys.stderr)

    draft = services.version_start_draft(actor=owner, decision_type=decision_type)
    # One accepted class fewer on a proposition that accepts two: the report has changes.
    proposition = next(p for p in draft.propositions.all() if len(p.accepted_classes) > 1)
    services.accepted_class_remove(
        actor=owner,
        proposition=proposition,
        expected_lock_version=draft.lock_version,
        class_key=proposition.accepted_classes[-1],
    )
    draft.refresh_from_db()
    draft = review.version_submit(
        actor=owner, version=draft, expected_lock_version=draft.lock_version
    )
    review.report_ensure(draft)
    print(f"version 2's report at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    run = scenario_services.run_start(actor=owner, version=draft, background=False)
    print(f"run of version 2 at {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return {**kept(decision_type), "run": run.pk}


def _widenings(report: Any) -> list[str]:
    """Every widening the report names, acknowledged (the reviewer must, to approve)."""
    return [widening["id"] for widening in report.widenings]


def kept(decision_type: Any) -> dict[str, Any]:
    """What the pages' URLs need, read back from a build made earlier."""
    from scenarios.models import Scenario, SuiteRun

    run = SuiteRun.objects.filter(decision_type=decision_type).latest("created_at", "pk")
    return {
        "key": decision_type.key,
        "published": 1,
        "draft": decision_type.versions.latest("number").number,
        "run": run.pk,
        "scenarios": Scenario.objects.filter(decision_type=decision_type).count(),
    }


def count_queries(pages: dict[str, str], token: str) -> dict[str, int]:
    """The queries one request for each page makes (the second of two), DEBUG off."""
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client

    client = Client()
    client.force_login(get_user_model().objects.get(username=OWNER))
    counts: dict[str, int] = {}
    for name, path in pages.items():
        executed: list[str] = []

        def counter(execute: Any, sql: str, *args: Any, into: list[str] = executed) -> Any:
            into.append(sql)
            return execute(sql, *args)

        headers = {"Authorization": f"Bearer {token}"} if path.startswith("/api/") else {}
        for _ in range(2):
            executed.clear()
            with connection.execute_wrapper(counter):
                response = client.get(path, headers=headers)
            assert response.status_code == 200, (path, response.status_code)
        counts[name] = len(executed)
    return counts


def stage(args: argparse.Namespace) -> None:
    import django

    django.setup()
    if args.stage == "build":
        result = build(args.domain, args.scenarios[0], Path(args.keys))
    else:
        result = count_queries(json.loads(args.pages), args.token)
    print("RESULT " + json.dumps(result))


# --------------------------------------------------------------------------- the deployment


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run_child(env: dict[str, str], *args: str) -> Any:
    done = subprocess.run(
        [sys.executable, __file__, *args], env=env, cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    if done.returncode:
        sys.exit(f"{args[:2]} failed:\n{done.stdout}")
    line = next(line for line in done.stdout.splitlines() if line.startswith("RESULT "))
    return json.loads(line.removeprefix("RESULT "))


def django_admin(env: dict[str, str], *args: str) -> None:
    done = subprocess.run(
        [str(BIN / "django-admin"), *args], env=env, capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode:
        sys.exit(f"django-admin {args[0]} failed:\n{done.stdout}\n{done.stderr}")


def database_for(args: argparse.Namespace, scenarios: int, here: Path) -> str:
    """The size's database URL: a SQLite file (kept in --keep DIR if given) or, with
    --database-url, a PostgreSQL database of its own per size, created if missing."""
    if not args.database_url:
        folder = args.keep or here
        folder.mkdir(parents=True, exist_ok=True)
        return f"sqlite:///{(folder / f'web_pages_{args.domain}_{scenarios}.sqlite3').resolve()}"
    parts = urllib.parse.urlsplit(args.database_url)
    name = f"{parts.path.strip('/')}_{scenarios}"
    import psycopg

    server = parts._replace(path="/postgres").geturl()
    with psycopg.connect(server, autocommit=True) as connection:
        exists = connection.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
        if exists.fetchone() is None:
            connection.execute(f'CREATE DATABASE "{name}"')
    return parts._replace(path=f"/{name}").geturl()


def analyse(url: str) -> None:
    """PostgreSQL's planner statistics and visibility map, as autovacuum keeps them on a
    server in use (a bench server may run without it): after the build's bulk inserts the
    planner would otherwise think each table holds a handful of rows."""
    if not url.startswith("postgres"):
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute("VACUUM (ANALYZE)")


@contextmanager
def gunicorn(env: dict[str, str], here: Path, workers: int, threads: int) -> Iterator[str]:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    with (here / "gunicorn.log").open("w") as log:
        server = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "workbench.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(workers),
                "--threads",
                str(threads),
                "--timeout",
                "300",
            ],
            env=env,
            cwd=here,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            for _ in range(300):
                try:
                    urllib.request.urlopen(base + "/healthz", timeout=5).close()
                    break
                except OSError:
                    time.sleep(0.1)
            yield base
        finally:
            server.terminate()
            server.wait(timeout=30)


def fetch(base: str, path: str, headers: dict[str, str]) -> bytes:
    request = urllib.request.Request(base + path, headers=headers)
    with urllib.request.urlopen(request, timeout=600) as response:
        if response.status != 200 or response.url != base + path:  # e.g. sent to sign in
            raise RuntimeError(f"{path}: {response.status} from {response.url}")
        return response.read()


def revalidation(base: str, path: str, headers: dict[str, str], requests: int) -> float | None:
    """The median seconds of a repeat sent with the page's ETag (answered 304), or None
    when the page has no ETag."""
    request = urllib.request.Request(base + path, headers=headers)
    with urllib.request.urlopen(request, timeout=600) as response:
        response.read()
        etag = response.headers.get("ETag")
    if etag is None:
        return None
    timings = []
    for _ in range(requests):
        request = urllib.request.Request(base + path, headers={**headers, "If-None-Match": etag})
        started = time.perf_counter()
        try:
            urllib.request.urlopen(request, timeout=600).close()
        except urllib.error.HTTPError as answer:  # urllib raises on a 304
            if answer.code != 304:
                raise
        else:
            raise RuntimeError(f"{path}: a repeat with its ETag was not answered 304")
        timings.append(time.perf_counter() - started)
    return statistics.median(timings)


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def one_client(
    base: str, pages: dict[str, str], headers: dict[str, dict[str, str]], requests: int
) -> dict[str, list[float]]:
    """Round-robin: each round asks for every page once; seconds per answer."""
    timings: dict[str, list[float]] = {name: [] for name in pages}
    for _ in range(requests):
        for name, path in pages.items():
            started = time.perf_counter()
            fetch(base, path, headers[name])
            timings[name].append(time.perf_counter() - started)
    return timings


def saturated(base: str, path: str, headers: dict[str, str], clients: int, seconds: float) -> float:
    """Answers a second with `clients` clients asking for `path` alone until `seconds` pass
    (each finishes the request it has in hand)."""
    deadline = time.monotonic() + seconds
    answers = [0] * clients
    started = time.monotonic()

    def client(index: int) -> None:
        while time.monotonic() < deadline:
            fetch(base, path, headers)
            answers[index] += 1

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(answers) / (time.monotonic() - started)


def size(count: int) -> str:
    for unit, step in (("MB", 1e6), ("KB", 1e3)):
        if count >= step:
            return (
                f"{count / step:.1f} {unit}" if count < 10 * step else f"{count / step:.0f} {unit}"
            )
    return f"{count} B"


def measure(args: argparse.Namespace, scenarios: int, here: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
    env.update(
        PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
        DJANGO_SETTINGS_MODULE="workbench.settings.production",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost,testserver",
        DATABASE_URL=database_for(args, scenarios, here),
        DATABASE_CONN_MAX_AGE="60",
        DJANGO_STATIC_ROOT=str(here / "static"),
        DJANGO_SECURE_SSL_REDIRECT="false",
        DJANGO_SECURE_COOKIES="false",
        DJANGO_SECURE_HSTS_SECONDS="0",
        DJANGO_LOG_LEVEL="WARNING",
        # Signing keys' private halves are encrypted with this; a kept build must reuse it.
        SIGNING_KEY_SECRET="bench-signing-key-secret-" + "x" * 32,
    )
    started = time.perf_counter()
    django_admin(env, "migrate", "--noinput")
    django_admin(env, "collectstatic", "--noinput")
    built = run_child(env, "--stage", "build", "--scenarios", str(scenarios),
                      "--domain", args.domain, "--keys", str(here / "keys"))  # fmt: skip
    built |= run_child(env, "--stage", "renew")  # this run's session and service token
    analyse(env["DATABASE_URL"])
    print(
        f"\n{built['scenarios']} scenarios of {built['key']} ready in "
        f"{time.perf_counter() - started:.0f} s ({env['DATABASE_URL'].split(':')[0]})"
    )
    key, run = built["key"], built["run"]
    pages = {
        PAGE_ORDER[0]: f"/types/{key}/v{built['draft']}/impact/",
        PAGE_ORDER[1]: f"/suite/{key}/",
        PAGE_ORDER[2]: f"/suite/{key}/runs/{run}/?show=all",
        PAGE_ORDER[3]: f"/suite/{key}/runs/{run}/",
        PAGE_ORDER[4]: f"/types/{key}/v{built['draft']}/",
        PAGE_ORDER[5]: f"/types/{key}/",
        PAGE_ORDER[6]: f"/api/v1/types/{key}/bundle",
        TRIVIAL: "/new-decision-type/",
    }
    queries = run_child(
        env, "--stage", "count", "--pages", json.dumps(pages), "--token", built["token"]
    )
    with gunicorn(env, here, args.workers, args.threads) as base:
        cookie = f"sessionid={built['session']}"  # the production profile's cookie name
        plain = {
            name: {"Authorization": f"Bearer {built['token']}"}
            if path.startswith("/api/")
            else {"Cookie": cookie}
            for name, path in pages.items()
        }
        zipped = {name: {**h, "Accept-Encoding": "gzip"} for name, h in plain.items()}
        sizes = {name: len(fetch(base, path, plain[name])) for name, path in pages.items()}
        sent = {}
        for name, path in pages.items():
            body = fetch(base, path, zipped[name])
            sent[name] = len(body)
            if body[:2] == b"\x1f\x8b":
                assert len(gzip.decompress(body)) == sizes[name], name
        timings = one_client(base, pages, zipped, args.requests)
        repeats = {
            name: revalidation(base, path, zipped[name], args.requests // 3 or 1)
            for name, path in pages.items()
        }
        throughput = {
            name: saturated(base, path, zipped[name], args.clients, args.saturate_seconds)
            for name, path in pages.items()
        }
    report(built, pages, timings, repeats, sizes, sent, queries, throughput, args)


def report(
    built: dict[str, Any],
    pages: dict[str, str],
    timings: dict[str, list[float]],
    repeats: dict[str, float | None],
    sizes: dict[str, int],
    sent: dict[str, int],
    queries: dict[str, int],
    throughput: dict[str, float],
    args: argparse.Namespace,
) -> None:
    base = statistics.median(timings[TRIVIAL])
    print(
        f"\n{built['scenarios']:,} scenarios; 1 client, {args.requests} requests a page "
        f"round-robin, gzip accepted; throughput with {args.clients} clients, gunicorn "
        f"--workers {args.workers} --threads {args.threads}\n"
    )
    print(
        "| page | median | p95 | × trivial | 304 | bytes | gzipped | queries | req/s (8) "
        "| × trivial |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in pages:
        median = statistics.median(timings[name])
        repeat = repeats[name]
        revalidated = "—" if repeat is None else f"{repeat * 1000:.0f} ms"
        print(
            f"| {name} | {median * 1000:.0f} ms | {percentile(timings[name], 0.95) * 1000:.0f} ms "
            f"| {median / base:.1f}× | {revalidated} | {size(sizes[name])} | {size(sent[name])} "
            f"| {queries[name]} | {throughput[name]:.1f} "
            f"| {throughput[name] / throughput[TRIVIAL]:.3f}× |"
        )


def renew() -> dict[str, Any]:
    """A session of the owner's (a new one each run) and a new service token of theirs."""
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.test import Client

    from contracts.models import DecisionType
    from publishing import tokens

    owner = get_user_model().objects.get(username=OWNER)
    client = Client()
    client.force_login(owner)
    types = DecisionType.objects.filter(created_by=owner)
    _token, secret = tokens.token_create(actor=owner, name="bench", decision_types=types)
    return {"session": client.cookies[settings.SESSION_COOKIE_NAME].value, "token": secret}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenarios", type=int, nargs="+", default=[50, 2000, 10000])
    parser.add_argument(
        "--domain",
        default="gas_entry",
        choices=sorted(p.name for p in DOMAINS.iterdir() if p.is_dir()),
    )
    parser.add_argument("--database-url", help="postgres://… (a database per size, from its name)")
    parser.add_argument("--keep", type=Path, help="keep each SQLite build here, and reuse it")
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--saturate-seconds", type=float, default=8)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    # The child process's stages (the build and the query count need Django set up).
    parser.add_argument("--stage", choices=["build", "count", "renew"], help=argparse.SUPPRESS)
    parser.add_argument("--keys", help=argparse.SUPPRESS)
    parser.add_argument("--pages", help=argparse.SUPPRESS)
    parser.add_argument("--token", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stage == "renew":
        import django

        django.setup()
        print("RESULT " + json.dumps(renew()))
        return
    if args.stage:
        stage(args)
        return
    for scenarios in args.scenarios:
        here = Path(tempfile.mkdtemp(prefix="web_pages_"))
        try:
            measure(args, scenarios, here)
        finally:
            shutil.rmtree(here, ignore_errors=True)


if __name__ == "__main__":
    main()
