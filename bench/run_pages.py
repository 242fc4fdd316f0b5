"""The pages of a large run: size and time of each at 10,000 scenarios.

    .venv/bin/python bench/run_pages.py [--scenarios 10000] [--repeat 3]

Builds, in a scratch SQLite file, the suite `bench/web_load.py` uses (10 propositions) with
`--scenarios` scenarios, runs it in process, then asks for each page of the run with Django's
test client as its owner: the run page (the flip matrix's totals and first page of rows), a
middle page, the lazily loaded rows of the next page, the coverage page and the streamed JSON
report. Prints bytes and the best of `--repeat` times; the target is at most 1 s each.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 1.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--scenarios", type=int, default=10000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    directory = tempfile.mkdtemp()
    sys.path[:0] = [str(ROOT), str(ROOT / "bench")]
    os.environ.update(
        DJANGO_SETTINGS_MODULE="workbench.settings.dev",
        DATABASE_URL=f"sqlite:///{directory}/pages.sqlite3",
        DJANGO_DEBUG="0",
        DJANGO_SECRET_KEY=secrets.token_urlsafe(50),
        DJANGO_ALLOWED_HOSTS="testserver",
    )
    import django

    django.setup()
    import web_load
    from django.core.management import call_command
    from django.test import Client
    from django.test.utils import override_settings

    call_command("migrate", verbosity=0, interactive=False)
    call_command("load_demo", verbosity=0)
    started = time.perf_counter()
    namespace: dict[str, object] = {}
    code = web_load.SUITE.format(password="bench-password", scenarios=args.scenarios)
    code = code.replace("print(run.pk", "result = (run.pk")
    exec(compile(code, "suite", "exec"), namespace)  # noqa: S102 - our own script
    run_pk, compiles, key, _ = namespace["result"]
    print(
        f"{args.scenarios} scenarios, {compiles} compiles, run in "
        f"{time.perf_counter() - started:.0f} s"
    )

    from django.contrib.auth import get_user_model

    client = Client()
    client.force_login(get_user_model().objects.get(username="load-owner"))
    run = f"/suite/{key}/runs/{run_pk}/"
    middle = args.scenarios // 50 // 2 or 1
    pages = {
        "run page": run,
        f"page {middle}": f"{run}?page={middle}",
        "next rows (htmx)": f"{run}?page=2&partial=rows",
        "coverage": f"{run}coverage/",
        "report.json (streamed)": f"{run}report.json",
    }
    with override_settings(ALLOWED_HOSTS=["testserver"]):
        for name, path in pages.items():
            best, size = float("inf"), 0
            headers = {"HX-Request": "true"} if "partial" in path else {}
            for _ in range(args.repeat):
                begun = time.perf_counter()
                response = client.get(path, headers=headers)
                body = (
                    b"".join(response.streaming_content) if response.streaming else response.content
                )
                best = min(best, time.perf_counter() - begun)
                size = len(body)
                assert response.status_code == 200, (path, response.status_code)
            verdict = "ok" if best <= TARGET_SECONDS else "over 1 s"
            print(f"{name:24} {size:11,} bytes  {best:6.3f} s  {verdict}")


if __name__ == "__main__":
    main()
