"""What the review page asks a person to sign: the canonical approval or publication
statement (base64 of its bytes for signing.js, JSON for `evidence-compiler sign-approval`).
Nothing is signed here: the browser or the person's own key file signs."""

from __future__ import annotations

import json
from typing import Any

from django.core.exceptions import ValidationError

from contracts.documents import ContractInvalid
from contracts.models import ContractVersion
from publishing import review, signing
from publishing.impact import ImpactReport


def report_or_none(version: ContractVersion) -> ImpactReport | None:
    try:
        return review.report_for(version)
    except ContractInvalid:
        return None


def statements_to_sign(user: Any, version: ContractVersion, actions: Any) -> dict[str, Any]:
    """The exact statements the person would sign (base64 of their canonical bytes, for
    signing.js; JSON, for sign-approval and for reading)."""
    found: dict[str, Any] = {}
    try:
        if actions[review.APPROVE].allowed and signing.signing_key(user) is not None:
            report = report_or_none(version)
            if report is not None:
                statement = review.approval_statement(
                    user, version, report.sha256, report.widening_ids
                )
                found["approval_statement"] = shown(statement)
        if actions[review.PUBLISH].allowed and signing.signing_key(user) is not None:
            draft = review.publication_draft(actor=user, version=version)
            found["publication_statement"] = shown(draft.statement)
            found["published_at"] = draft.published_at.isoformat()
    except ValidationError as exc:
        found["statement_problem"] = " ".join(exc.messages)
    return found


def shown(statement: Any) -> dict[str, str]:
    return {
        "base64": review.statement_base64(statement),
        "json": json.dumps(statement.model_dump(mode="json"), indent=2),
    }
