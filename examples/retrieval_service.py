"""A small retrieval service that puts a published contract between its search index and the
model, built from docs/distribution.md and docs/api.md alone.

    python examples/retrieval_service.py WORKBENCH_URL TOKEN_FILE WORK_DIR
        [--documents 2000] [--queries 40] [--top 50]

The domain is a machine-tool maker's export compliance desk (decision type
`export.dual_use.general_licence`): may a shipment leave under the open general export
licence? The service

1. pins the type's key set, fetched once from `GET /api/v1/types/{key}/keys`
   (WORK_DIR/keys.json, kept when it exists: a key set is reviewed, not refreshed blindly);
2. keeps the published bundle current with a `BundleStore` that pulls it itself from
   `GET /api/v1/types/{key}/bundle` into WORK_DIR/bundle (pull's checks: signatures against
   the pinned keys, no rollback, no fork);
3. indexes `--documents` generated export files in SQLite FTS5 (WORK_DIR/documents.sqlite),
   each document's candidate metadata stored beside its text;
4. for `--queries` shipments, searches the index (bm25), takes the `--top` hits as the
   candidates, and decides against the bundle with `decide(..., receipt=True)`;
5. posts the receipts back in the compact form (`compact_receipt`), gzipped, in batches of
   at most 500 (`POST /api/v1/decisions`), where a draft's impact report replays them.

It prints a JSON summary: the bundle, the decisions' results and slot states, the reasons
candidates were rejected, the receipts the workbench accepted, and the milliseconds a
decision took. TOKEN_FILE holds a service token of the type (the workbench's *Service tokens*
page). Needs the standard library and `evidence-compiler` only.
"""

from __future__ import annotations

import argparse
import collections
import datetime as dt
import gzip
import json
import sqlite3
import statistics
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from compiler_tools import BundleStore, decide
from compiler_trust import compact_receipt

DECISION_TYPE = "export.dual_use.general_licence"
DECISION_DATE = dt.date(2026, 11, 20)
BATCH = 500  # the API's largest batch
COMPLIANCE = ["compliance_analyst", "export_auditor"]
EVERYONE = ["compliance_analyst", "sales_engineer", "export_auditor"]
PURPOSES = ["export_release", "export_compliance_audit"]
CUSTOMERS = ["Feinmechanik", "Aero Components", "Precision Trading", "Werkzeugbau", "Motion"]
TOWNS = ["Brennholt", "Kestrel", "Gulf", "Aldbury", "Norrviken", "Tessaro", "Marlow"]
COUNTRIES = ["Germany", "Japan", "Canada", "Norway", "Italy", "Australia"]


# --------------------------------------------------------------------------- the documents


def shipments(documents: int) -> list[dict[str, Any]]:
    """One shipment per 20 documents: its id (the directory's entity), customer and country."""
    return [
        {
            "id": f"SHP-26-{1000 + n}",
            "order": f"SO-26-{1000 + n}",
            "customer": f"{TOWNS[n % len(TOWNS)]} {CUSTOMERS[n % len(CUSTOMERS)]} {n}",
            "country": COUNTRIES[n % len(COUNTRIES)],
        }
        for n in range(max(1, documents // 20))
    ]


def export_file(shipment: dict[str, Any], n: int) -> Iterator[dict[str, Any]]:
    """What a trade compliance system exports for one shipment: 20 documents, as candidates
    (each with its `content`). Some depend on a record that is never indexed, some were
    superseded by one that is not, one in seven shipments has a rating that contradicts its
    classification, the weak ones claim what only a record can establish, and the manual
    applies to every shipment (entity `"*"`)."""
    sid, customer, country = shipment["id"], shipment["customer"], shipment["country"]
    day = dt.timedelta(days=1)
    on = DECISION_DATE

    def item(suffix: str, cls: str, supports: list[str], text: str, **fields: Any) -> dict:
        base = {
            "id": f"{suffix}-{sid}",
            "entity": sid,
            "allowed_roles": EVERYONE,
            "allowed_purposes": PURPOSES,
            "evidence_class": cls,
            "supports": supports,
            "valid_from": (on - 40 * day).isoformat(),
            "content": f"{text} Shipment {sid}, order {shipment['order']}, {customer}.",
        }
        base.update(fields)
        base["tokens"] = max(20, len(base["content"].split()) * 4 // 3)
        return base

    rated = "2B001.b.1" if n % 7 else "2B001.a (high-accuracy LS-2 option)"
    screened = {"allowed_roles": COMPLIANCE, "valid_from": (on - 10 * day).isoformat(),
                "valid_to": (on + 20 * day).isoformat()}  # fmt: skip
    rows: list[tuple[str, str, list[str], str, dict[str, Any]]] = [
        ("cls", "classification_record", ["item_within_licence"],
         f"Vantor 5X-650 classification: rated {rated}; general licence checked.", {}),
        ("cls-old", "classification_record", ["item_within_licence"],
         "Earlier classification of the Vantor 5X-650, replaced after the build changed.",
         {"superseded_by": f"cls-{sid}", "valid_from": (on - 90 * day).isoformat()}),
        ("rate", "technical_rating_sheet", ["item_within_licence"],
         "Technical rating of the machine as built: repeatability 2.9 um, five axes.",
         {"depends_on": [f"test-report-{sid}"] if n % 3 == 0 else []}),
        ("dest", "destination_check", ["destination_permitted"],
         f"Destination {country}: permitted under the general licence; no embargo.", {}),
        *((f"dps-{party}", "denied_party_screening", ["parties_screened"],
           f"The {party} screened against the denied-party and sanctions lists: no match.",
           screened) for party in ("consignee", "forwarder", "end-user")),
        ("euu", "end_user_undertaking", ["end_use_assured"],
         "End-user undertaking: civil end use at the named site, no re-export.", {}),
        ("euq", "end_use_questionnaire", ["end_use_assured"],
         "End-use questionnaire returned by the customer: milling turbine housings.", {}),
        ("svy", "site_survey_report", ["installation_site_verified"],
         "Installation site survey by service engineering: foundation and power.", {}),
        ("erp", "erp_order_record", [], "ERP sales order: one Vantor 5X-650, FCA.", {}),
        ("packing", "erp_order_record", [], "Packing list: machine, controller.", {})
        if n % 7
        # the option's rating contradicts the classification of the standard build
        else ("rate-option", "technical_rating_sheet", [],
              "Technical rating of the LS-2 option as fitted: outside the general licence.",
              {"contradicts": ["item_within_licence"]}),
        ("email", "sales_email", ["item_within_licence", "end_use_assured"],
         "Sales email: the customer confirms it is all fine, please release quickly.", {}),
        ("dist", "distributor_statement", ["parties_screened"],
         "Distributor's letter of assurance: all parties are known to us.", {}),
        ("crm", "crm_note", ["destination_permitted"],
         "CRM account note: the account manager believes the destination is fine.", {}),
        ("screen-old", "denied_party_screening", ["parties_screened"],
         "Screening of the consignee from last quarter, expired.",
         {**screened, "valid_from": (on - 120 * day).isoformat(),
          "valid_to": (on - 90 * day).isoformat()}),
        ("audit", "classification_record", ["item_within_licence"],
         "Audit extract of the classification, for the export compliance audit only.",
         {"allowed_purposes": ["export_compliance_audit"]}),
        ("svy-draft", "site_survey_report", ["installation_site_verified"],
         "Draft site survey, superseded by the signed one in the document system.",
         {"superseded_by": f"svy-signed-{sid}"}),
        ("brief", "compliance_manual", [],
         f"Compliance briefing for shipments to {country}.", {}),
        ("manual", "compliance_manual", [],
         f"Export compliance manual, section {n}: how screening is recorded.",
         {"entity": "*", "id": f"manual-{n:04d}"}),
    ]  # fmt: skip
    for suffix, cls, supports, text, extra in rows:
        yield item(suffix, cls, supports, text, **extra)


def documents(count: int) -> list[dict[str, Any]]:
    every = [doc for n, s in enumerate(shipments(count)) for doc in export_file(s, n)]
    return every[:count]


def directory(count: int) -> dict[str, Any]:
    """The entity directory: each shipment by its id, its order and its customer's name."""
    return {
        "entities": {s["id"]: [s["order"], s["customer"]] for s in shipments(count)},
        "role_parents": {"trade_compliance_officer": ["compliance_analyst"]},
    }


# --------------------------------------------------------------------------- the index


def build_index(path: Path, docs: list[dict[str, Any]]) -> sqlite3.Connection:
    """An FTS5 table of the documents' text, each with its candidate metadata (JSON) beside."""
    path.unlink(missing_ok=True)
    db = sqlite3.connect(path)
    db.execute("CREATE VIRTUAL TABLE docs USING fts5(doc_id UNINDEXED, meta UNINDEXED, content)")
    db.executemany(
        "INSERT INTO docs (doc_id, meta, content) VALUES (?, ?, ?)",
        [
            (d["id"], json.dumps({k: v for k, v in d.items() if k != "content"}), d["content"])
            for d in docs
        ],
    )
    db.commit()
    return db


def search(db: sqlite3.Connection, query: str, top: int) -> list[dict[str, Any]]:
    """The `top` best hits as candidates. bm25 scores are negative, lower is better; the
    relevance a candidate declares is its score over the best one's, in (0, 1]."""
    rows = db.execute(
        "SELECT meta, content, bm25(docs) AS score FROM docs WHERE docs MATCH ? "
        "ORDER BY score LIMIT ?",
        (query, top),
    ).fetchall()
    best = rows[0][2] if rows else -1.0
    return [
        {**json.loads(meta), "content": content, "relevance": round(score / best, 4)}
        for meta, content, score in rows
    ]


# --------------------------------------------------------------------------- the workbench


def call(url: str, token: str, body: bytes | None = None) -> bytes:
    headers = {"Authorization": f"Bearer {token}"}
    if body is not None:
        headers |= {"Content-Type": "application/json", "Content-Encoding": "gzip"}
    request = urllib.request.Request(url, data=body, headers=headers)  # noqa: S310
    with urllib.request.urlopen(request, timeout=60) as answer:  # noqa: S310
        return answer.read()


def post_receipts(api: str, token: str, receipts: list[dict[str, Any]]) -> dict[str, int]:
    totals = collections.Counter()
    for start in range(0, len(receipts), BATCH):
        body = gzip.compress(json.dumps({"receipts": receipts[start : start + BATCH]}).encode())
        answer = json.loads(call(f"{api}/decisions", token, body))
        totals.update({k: answer[k] for k in ("accepted", "duplicate", "refused")})
    return dict(totals)


# --------------------------------------------------------------------------- the service


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "workbench", help="the workbench's base URL, e.g. https://workbench.example"
    )
    parser.add_argument("token_file")
    parser.add_argument("work_dir", type=Path)
    parser.add_argument("--documents", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--top", type=int, default=50)
    args = parser.parse_args()
    api = args.workbench.rstrip("/") + "/api/v1"
    token = Path(args.token_file).read_text().strip()
    args.work_dir.mkdir(parents=True, exist_ok=True)

    keys = args.work_dir / "keys.json"
    if not keys.exists():
        keys.write_bytes(call(f"{api}/types/{DECISION_TYPE}/keys", token))
    store = BundleStore(
        args.work_dir / "bundle",
        public_key=keys,
        url=f"{api}/types/{DECISION_TYPE}/bundle",
        token_file=args.token_file,
        interval=300.0,
    )
    with store:
        bundle = store.current()  # NoBundle, with pull's reason, if the first pull failed
        docs = documents(args.documents)
        db = build_index(args.work_dir / "documents.sqlite", docs)
        entities = directory(args.documents)
        results, states, reasons = (collections.Counter() for _ in range(3))
        receipts, timings = [], []
        for n, shipment in enumerate(shipments(args.documents)[: args.queries]):
            query = (f'"{shipment["id"]}" OR classification OR screening OR undertaking '
                     "OR destination")  # fmt: skip
            candidates = search(db, query, args.top)
            request = {
                "decision_type": DECISION_TYPE,
                "principal": "olu",
                "roles": ["trade_compliance_officer"],
                "purpose": "export_release",
                "entity": shipment["customer"],  # resolved through the directory
                "decision_date": DECISION_DATE.isoformat(),
                "token_budget": 2000,
            }
            started = time.perf_counter()
            decision = decide(store, request, candidates, directory=entities, receipt=True,
                              decision_id=f"release-{shipment['id']}-{n}")  # fmt: skip
            timings.append((time.perf_counter() - started) * 1000)
            output = decision.output
            results[str(output.result)] += 1
            states.update(f"{s.proposition}: {s.state}" for s in output.slots)
            reasons.update(str(r["reason"]) for r in output.rejected)
            receipts.append(compact_receipt(decision.receipt))
        posted = post_receipts(api, token, receipts)
    print(json.dumps({
        "bundle": {"decision_type": bundle.manifest.decision_type,
                   "version": bundle.manifest.version, "sha256": bundle.sha256},
        "documents": len(docs),
        "decisions": len(receipts),
        "candidates_per_decision": args.top,
        "results": dict(results),
        "slots": dict(sorted(states.items())),
        "rejections": dict(sorted(reasons.items())),
        "receipts": posted,
        "decision_ms_median": round(statistics.median(timings), 2) if timings else None,
    }, indent=2))  # fmt: skip


if __name__ == "__main__":
    main()
