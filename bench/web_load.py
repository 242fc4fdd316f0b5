"""The web process under load: the flip matrix, the contract editor and a trivial page, under
20 concurrent clients, against gunicorn running the production profile.

    .venv/bin/python bench/web_load.py [--clients 20] [--requests 600] [--seconds 120]
                                       [--workers 2] [--threads 4] [--trivial /healthz]

It builds a scratch deployment in a temporary directory (a SQLite file, static files
collected), a 50-scenario suite over a contract of 10 propositions and its finished run,
starts `gunicorn workbench.wsgi` with `workbench.settings.production` on 127.0.0.1, signs one
owner in, and lets the clients (threads, urllib, the owner's session cookie) request the three
pages in turn, all at once, until `--requests` answers or `--seconds` have passed. It prints
p50 and p95 of each page and the ratios to the trivial page's; the targets are a flip matrix
p95 and an editor p95 of at most 3x the trivial page's. Loopback only.
"""

from __future__ import annotations

import argparse
import http.cookiejar
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
TARGET = 3.0
PASSWORD = "load-test-" + secrets.token_urlsafe(8)

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


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def django_admin(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [str(BIN / "django-admin"), *args], env=env, capture_output=True, text=True, cwd=ROOT
    )
    if done.returncode:
        sys.exit(f"django-admin {args[0]} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


class Client:
    def __init__(self, base: str) -> None:
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.cookies))

    def get(self, path: str) -> tuple[int, bytes]:
        with self.opener.open(self.base + path, timeout=60) as response:
            return response.status, response.read()

    def sign_in(self, username: str, password: str) -> str:
        self.get("/sign-in/")
        token = next(c.value for c in self.cookies if c.name == "csrftoken")
        body = urllib.parse.urlencode(
            {"username": username, "password": password, "csrfmiddlewaretoken": token}
        ).encode()
        self.opener.open(urllib.request.Request(self.base + "/sign-in/", data=body), timeout=60)
        return next(c.value for c in self.cookies if c.name == "sessionid")


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def load(
    base: str, session: str, pages: dict[str, str], clients: int, requests: int, seconds: float
) -> dict[str, list[float]]:
    """Every client requests the pages in turn (each starting at another one) until the
    count or the time is reached; the latencies of each page, in ms."""
    timings: dict[str, list[float]] = {name: [] for name in pages}
    lock = threading.Lock()
    remaining = [requests]
    deadline = time.monotonic() + seconds
    errors: list[str] = []

    def client(index: int) -> None:
        opener = urllib.request.build_opener()
        opener.addheaders = [("Cookie", f"sessionid={session}")]
        names = list(pages)
        turn = index
        while time.monotonic() < deadline:
            with lock:
                if remaining[0] <= 0:
                    return
                remaining[0] -= 1
            name = names[turn % len(names)]
            turn += 1
            started = time.perf_counter()
            try:
                with opener.open(base + pages[name], timeout=60) as response:
                    response.read()
                    ok = response.status == 200
            except Exception as exc:  # counted, reported
                errors.append(f"{name}: {exc}")
                continue
            elapsed = (time.perf_counter() - started) * 1000
            if ok:
                with lock:
                    timings[name].append(elapsed)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        print(f"{len(errors)} failed request(s), e.g. {errors[0]}")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--requests", type=int, default=600)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--scenarios", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--trivial", default="/healthz")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as directory:
        here = Path(directory)
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DJANGO_", "DATABASE_"))}
        env.update(
            DJANGO_SETTINGS_MODULE="workbench.settings.production",
            DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
            DJANGO_ALLOWED_HOSTS="127.0.0.1,localhost",
            DATABASE_URL=f"sqlite:///{here / 'load.sqlite3'}",
            DJANGO_STATIC_ROOT=str(here / "static"),
            DJANGO_SECURE_SSL_REDIRECT="false",
            DJANGO_SECURE_COOKIES="false",
            DJANGO_SECURE_HSTS_SECONDS="0",
            DJANGO_LOG_LEVEL="WARNING",
        )
        django_admin(env, "migrate", "--noinput")
        django_admin(env, "collectstatic", "--noinput")
        django_admin(env, "load_demo")  # the catalogue the suite's classes come from
        code = SUITE.format(password=PASSWORD, scenarios=args.scenarios)
        run_pk, compiles, key, number = django_admin(env, "shell", "-c", code).split()[-4:]
        print(
            f"suite: {args.scenarios} scenarios x 10 propositions, run {run_pk}: "
            f"{compiles} compiles"
        )

        port = free_port()
        base = f"http://127.0.0.1:{port}"
        log = (here / "gunicorn.log").open("w")
        web = subprocess.Popen(
            [
                str(BIN / "gunicorn"),
                "workbench.wsgi",
                "--bind",
                f"127.0.0.1:{port}",
                "--workers",
                str(args.workers),
                "--threads",
                str(args.threads),
            ],
            env=env,
            cwd=here,
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        try:
            for _ in range(200):
                try:
                    Client(base).get("/healthz")
                    break
                except OSError:
                    time.sleep(0.1)
            session = Client(base).sign_in("load-owner", PASSWORD)
            pages = {
                "flip matrix": f"/suite/{key}/runs/{run_pk}/",
                "editor": f"/types/{key}/v{number}/",
                "trivial": args.trivial,
            }
            warm = Client(base)
            warm.cookies.set_cookie(
                http.cookiejar.Cookie(
                    0,
                    "sessionid",
                    session,
                    None,
                    False,
                    "127.0.0.1",
                    False,
                    False,
                    "/",
                    True,
                    False,
                    None,
                    False,
                    None,
                    None,
                    {},
                )
            )
            for path in pages.values():  # warm the processes' caches
                for _ in range(args.workers * 2):
                    status, body = warm.get(path)
                    assert status == 200, (path, status)
            sizes = {name: len(warm.get(path)[1]) for name, path in pages.items()}
            started = time.monotonic()
            timings = load(base, session, pages, args.clients, args.requests, args.seconds)
            took = time.monotonic() - started
        finally:
            web.terminate()
            web.wait(timeout=20)
            log.close()

    print(
        f"{args.clients} clients, gunicorn --workers {args.workers} --threads {args.threads}, "
        f"{sum(len(t) for t in timings.values())} answers in {took:.1f} s"
    )
    trivial = timings["trivial"]
    t50, t95 = statistics.median(trivial), percentile(trivial, 0.95)
    for name, values in timings.items():
        p50, p95 = statistics.median(values), percentile(values, 0.95)
        print(
            f"{name:12} n={len(values):4} {sizes[name]:9} bytes  p50 {p50:7.1f} ms  "
            f"p95 {p95:7.1f} ms  p95 ratio {p95 / t95:5.2f}  p50 ratio {p50 / t50:5.2f}"
        )
    for name in ("flip matrix", "editor"):
        ratio = percentile(timings[name], 0.95) / t95
        print(
            f"{name}: p95 {ratio:.2f}x the trivial page's (target <= {TARGET}x): "
            + ("met" if ratio <= TARGET else "NOT met")
        )


if __name__ == "__main__":
    main()
