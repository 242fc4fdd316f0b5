"""The command line's reading and writing: files or stdin in, JSON out, and its exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from compiler._errors import InvalidInput
from compiler._json_reader import parse_json

if TYPE_CHECKING:
    from compiler._input import CompileInput
    from compiler._slotted import PlainInput

EXIT_OK, EXIT_REFUSED, EXIT_INVALID = 0, 1, 2


def read_bytes(path: str) -> bytes:
    try:
        return sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    except OSError as exc:
        raise InvalidInput([{"loc": [], "msg": f"cannot read {path}: {exc.strerror}"}]) from None


def read_json(path: str) -> Any:
    return parse_json(read_bytes(path))


def load(path: str) -> CompileInput:
    """The input, its parsed JSON let go as it is validated; read again (stdin's bytes are
    kept for that) only to locate problems."""
    from compiler._validate_input import load_input_consuming

    if path == "-":
        data = read_bytes(path)
        return load_input_consuming(parse_json(data), lambda: parse_json(data))
    return load_input_consuming(read_json(path), lambda: read_json(path))


def load_for_compile(path: str) -> PlainInput | CompileInput:
    """The input as slotted objects (`compiler._slotted`) when it is valid and plainly so (no
    pydantic), else validated by `load` (which lists every problem with its location)."""
    from compiler._json_reader import NotQuick, quick_text
    from compiler._slotted_reader import load_plain_text

    data = read_bytes(path)
    try:
        text = quick_text(data)
    except NotQuick:
        text = None
    if path != "-":
        del data  # read again if needed: the text alone is held while the pool is built
    if text is not None:
        plain = load_plain_text(text)
        del text
        if plain is not None:
            return plain
    if path == "-":
        from compiler._validate_input import load_input_consuming

        return load_input_consuming(parse_json(data), lambda: parse_json(data))
    return load(path)


def dumps(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write(out: TextIO, value: Any) -> None:
    out.write(dumps(value))


def write_file(path: str, option: str, data: bytes) -> None:
    try:
        Path(path).write_bytes(data)
    except OSError as exc:
        message = f"cannot write {path}: {exc.strerror}"
        raise InvalidInput([{"loc": [option], "msg": message}]) from None
