"""One decision three ways, side by side: the library call (`compiler_tools.decide` on a
verified bundle), the same decision through `evidence-compiler serve` (HTTP/JSON on loopback,
one kept-alive connection), and a plain sort of the same candidates by relevance (what a
retriever does without the compiler).

    python bench/runtime.py [--candidates 50] [--rounds 300] [--receipt]

Each round runs the three once, in turn (interleaved, so a slow moment of the machine hits
all three alike); the medians are printed with the ratios and the p50 overhead of the server
over the library call (HTTP, JSON both ways, and the server's own validation). The bundle is
the Atlas example contract signed with the tests' fixed keys; the candidates are the
example's, copied with new ids and spread relevance up to `--candidates`. Needs the serve
extra (waitress, prometheus-client).
"""

from __future__ import annotations

import argparse
import copy
import http.client
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "compiler")]

from atlas_bundle import atlas_bundle, atlas_request, key_set  # noqa: E402

from compiler_tools import BUNDLE_FILE, decide  # noqa: E402
from compiler_trust import load_public_keys, verify_bundle  # noqa: E402


def candidates(count: int) -> list[dict[str, Any]]:
    """`count` candidates: the example's, copied with new ids and spread relevance."""
    base = atlas_request()["candidates"]
    out = []
    for index in range(count):
        candidate = copy.deepcopy(base[index % len(base)])
        if index >= len(base):
            candidate["id"] = f"{candidate['id']}-copy{index}"
        candidate["relevance"] = round(1.0 - index / (2 * count), 4)
        out.append(candidate)
    return out


def start_server(directory: Path, keys: Path) -> tuple[subprocess.Popen[str], str, int]:
    process = subprocess.Popen(
        [sys.executable, "-m", "compiler_tools", "serve", "--bundle-dir", str(directory),
         "--public-key", str(keys), "--port", "0"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert process.stdout is not None
    line = process.stdout.readline()
    if not line.startswith("serving decisions on "):
        process.terminate()
        raise SystemExit(f"serve did not start (pip install 'evidence-compiler[serve]'?): {line}")
    host, port = line.split("//")[1].strip().rsplit(":", 1)
    return process, host, int(port)


def server_side_mean(connection: http.client.HTTPConnection) -> float:
    """The server's own mean time per decision, from its compile-time histogram."""
    connection.request("GET", "/metrics")
    text = connection.getresponse().read().decode()
    values = dict(
        line.split(" ", 1) for line in text.splitlines() if line.startswith("evidence_compile_")
    )
    return float(values["evidence_compile_seconds_sum"]) / float(
        values["evidence_compile_seconds_count"]
    )


def timed(call: Callable[[], object]) -> float:
    started = time.perf_counter()
    call()
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--candidates", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--receipt", action="store_true", help="ask for the receipt too")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as scratch:
        directory, keys_dir = Path(scratch) / "bundles", Path(scratch) / "keys"
        directory.mkdir()
        data = atlas_bundle()
        (directory / BUNDLE_FILE).write_bytes(data)
        keys = key_set(keys_dir)
        bundle = verify_bundle(data, load_public_keys(keys))
        document = atlas_request()
        pool = candidates(args.candidates)
        # Bytes, so http.client sends headers and body in one write (a str body is a second
        # write, which Nagle's algorithm and delayed ACKs can hold back for milliseconds).
        body = json.dumps(
            {"request": document["request"], "candidates": pool,
             "directory": document["directory"], "receipt": args.receipt}
        ).encode()  # fmt: skip
        process, host, port = start_server(directory, keys)
        connection = http.client.HTTPConnection(host, port, timeout=30)
        try:

            def library() -> object:
                return decide(bundle, document["request"], pool,
                              directory=document["directory"], receipt=args.receipt)  # fmt: skip

            def server() -> object:
                connection.request("POST", "/v1/decide", body,
                                   {"Content-Type": "application/json"})  # fmt: skip
                answer = connection.getresponse()
                payload = answer.read()
                assert answer.status == 200, payload
                return json.loads(payload)

            def plain_sort() -> object:
                return sorted(pool, key=lambda c: c["relevance"], reverse=True)

            calls = {"library": library, "server": server, "sort": plain_sort}
            for call in calls.values():  # warm up: imports, caches, the connection
                for _ in range(5):
                    call()
            times: dict[str, list[float]] = {name: [] for name in calls}
            for _ in range(args.rounds):
                for name, call in calls.items():
                    times[name].append(timed(call))
            inside = server_side_mean(connection)
        finally:
            connection.close()
            process.terminate()
            process.wait()

    medians = {name: statistics.median(values) for name, values in times.items()}
    overheads = sorted(s - lib for s, lib in zip(times["server"], times["library"], strict=True))
    print(f"{args.candidates} candidates, {args.rounds} interleaved rounds, "
          f"receipt={'yes' if args.receipt else 'no'}; medians:")  # fmt: skip
    for name, value in medians.items():
        print(f"  {name:<8} {value * 1000:9.3f} ms")
    print(f"  library / sort   {medians['library'] / medians['sort']:8.1f}x")
    print(f"  server / library {medians['server'] / medians['library']:8.2f}x")
    print(f"  p50 overhead of the server over the library call: "
          f"{statistics.median(overheads) * 1000:.3f} ms")  # fmt: skip
    print(f"  (the server's own time per decision, mean from its metrics: {inside * 1000:.3f} ms;"
          " the rest is HTTP, JSON and scheduling between the two processes)")  # fmt: skip


if __name__ == "__main__":
    main()
