"""RFC 8785 canonical JSON and the hashes taken over it."""

from __future__ import annotations

import hashlib
from typing import Any

import rfc8785


def canonical_bytes(value: Any) -> bytes:
    """The JCS (RFC 8785) serialisation of a JSON-compatible value."""
    return rfc8785.dumps(value)


def sha256_hex(value: Any) -> str:
    return hashlib.sha256(canonical_bytes(value)).hexdigest()
