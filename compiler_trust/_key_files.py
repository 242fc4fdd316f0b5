"""Key files on disk: reading the trusted public keys (a key set or key files), writing a fresh
key pair (`evidence-compiler keygen`) and reading its private key back.

What a verifier calls once at start-up (`python -m compiler_tools verify-bundle FILE
--public-key KEYFILE_OR_DIR`, a retrieval service) and what `keygen` writes. Apart from
`compiler_trust._keys` so that the keys themselves (ids, PEM, key sets) are handled as bytes.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from compiler_trust._keys import (
    KEY_SET_FILE,
    PUBLIC_KEY_SUFFIXES,
    KeyLoadError,
    TrustedKey,
    generate_key_pair,
    key_id,
    load_private_key,
    parse_key_set,
    parse_public_keys,
)


def load_public_keys(path: str | Path) -> dict[str, TrustedKey]:
    """Trusted public keys by key id: a key set (a `*.json` file, or a directory holding
    `keys.json`), else one key file or a directory of `*.pem` / `*.pub`.

    A key set names each key's person and roles. Bare keys carry neither, so they let no
    signature through `verify_bundle`; they are read for looking at keys and for older
    tools. A key file may hold several keys (concatenated PEM blocks, OpenSSH lines). In a
    directory, files with other suffixes are ignored, files are read in name order, and the
    same key found twice is kept once. Raises `KeyLoadError` naming the file for an
    unreadable or non-Ed25519 key, for a private key, for a bad key set, and when no key is
    found at all."""
    root = Path(path)
    key_set = root / KEY_SET_FILE if root.is_dir() else root
    if key_set.is_file() and key_set.suffix.lower() == ".json":
        try:
            return parse_key_set(key_set.read_bytes())
        except KeyLoadError as exc:
            raise KeyLoadError(f"{key_set}: {exc}") from None
        except OSError as exc:
            raise KeyLoadError(f"{key_set}: cannot be read ({exc.strerror})") from None
    if root.is_dir():
        files = sorted(
            p for p in root.iterdir() if p.is_file() and p.suffix.lower() in PUBLIC_KEY_SUFFIXES
        )
        if not files:
            raise KeyLoadError(f"{root}: no *.pem or *.pub public key files in this directory")
    elif root.is_file():
        files = [root]
    else:
        raise KeyLoadError(f"{root}: no such key file or directory")
    found: dict[str, TrustedKey] = {}
    for file in files:
        try:
            keys = parse_public_keys(file.read_bytes())
        except KeyLoadError as exc:
            raise KeyLoadError(f"{file}: {exc}") from None
        except OSError as exc:
            raise KeyLoadError(f"{file}: cannot be read ({exc.strerror})") from None
        if not keys:
            raise KeyLoadError(f"{file}: holds no Ed25519 public key")
        for key in keys:
            found.setdefault(key_id(key), TrustedKey(key))
    return found


PRIVATE_KEY_SUFFIX = ".key"
PUBLIC_KEY_SUFFIX = ".pub.pem"


def write_key_files(
    directory: str | Path, name: str, password: bytes | None = None
) -> tuple[Path, Path]:
    """`evidence-compiler keygen`: a fresh key pair as `DIR/NAME.key` (PKCS#8, readable by its
    owner only) and `DIR/NAME.pub.pem`, the public key to register with the workbench. An
    existing key file is never overwritten (`KeyLoadError`)."""
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._@+-]*", name):
        raise KeyLoadError(f"'{name}' is not a usable key file name (letters, digits, ._@+-)")
    root = Path(directory)
    private_path = root / f"{name}{PRIVATE_KEY_SUFFIX}"
    public_path = root / f"{name}{PUBLIC_KEY_SUFFIX}"
    for path in (private_path, public_path):
        if path.exists():
            raise KeyLoadError(f"{path}: already exists; keygen never overwrites a key")
    private_pem, public_pem = generate_key_pair(password)
    try:
        root.mkdir(parents=True, exist_ok=True)
        handle = os.open(private_path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(handle, "wb") as stream:
            stream.write(private_pem)
        public_path.write_bytes(public_pem)
    except OSError as exc:
        raise KeyLoadError(f"{root}: cannot write the key files ({exc.strerror})") from None
    return private_path, public_path


def load_private_key_file(path: str | Path, password: bytes | None = None) -> Ed25519PrivateKey:
    """The private key of a key file `keygen` wrote (`KeyLoadError` naming the file)."""
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise KeyLoadError(f"{path}: cannot be read ({exc.strerror})") from None
    try:
        return load_private_key(data, password)
    except KeyLoadError as exc:
        raise KeyLoadError(f"{path}: {exc}") from None
