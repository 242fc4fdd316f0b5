"""A retrieval service's use of the runtime API: keep the bundle `pull` maintains loaded and
verified, and decide requests against it in process.

    python examples/runtime_service.py BUNDLE_DIR KEYS INPUT.json [--receipt]

BUNDLE_DIR holds `bundle.json` (written by `evidence-compiler pull --out BUNDLE_DIR`); KEYS is
the pinned key set; INPUT.json is a compile input without its contract (`request`,
`candidates`, optionally `directory`), e.g. examples/atlas.json (its contract is ignored:
the bundle's is used). Prints the decision as JSON.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from compiler_tools import BundleStore, decide


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bundle_dir")
    parser.add_argument("keys")
    parser.add_argument("input")
    parser.add_argument("--receipt", action="store_true")
    args = parser.parse_args()

    document = json.loads(Path(args.input).read_text(encoding="utf-8"))
    # In a long-running service, create the store once at start-up: its daemon thread
    # re-reads bundle.json when pull replaces it (every 60 s by default), and pulls itself
    # when given url= and token_file=.
    with BundleStore(args.bundle_dir, public_key=args.keys, interval=30.0) as store:
        decision = decide(
            store,
            document["request"],
            document["candidates"],
            directory=document.get("directory"),
            receipt=args.receipt,
        )
    bundle = decision.bundle
    print(
        json.dumps(
            {
                "bundle": {"version": bundle.manifest.version, "sha256": bundle.sha256},
                "result": str(decision.output.result),
                "packet": list(decision.output.packet_ids),
                "slots": {s.proposition: str(s.state) for s in decision.output.slots},
                "receipt": decision.receipt.decision_id if decision.receipt else None,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
