"""Reading untrusted YAML safely: the one loader of contract test files (`evidence-compiler
test`, the workbench's upload and `import_contract_tests`).

`yaml.safe_load` builds no arbitrary objects, but it still accepts documents that crash or
stall their reader. An alias names a value written once; nine levels of ten aliases each (a
"billion laughs") are a few hundred bytes that stand for 10**9 values: PyYAML shares them, but
every walk of the result (reading dates back as strings, pydantic, the workbench's checks)
expands them, and needs minutes and gigabytes. An alias inside its own anchor makes a value
that contains itself, and every walk of it recurses until Python gives up; so does nesting
thousands of levels deep, already in PyYAML's own composer. A date such as 2026-13-01 or an
integer of thousands of digits stops the constructor with a bare `ValueError`.

`parse_yaml` composes the document's node graph first (linear in the text: an alias is the
node of its anchor, not a copy) and measures it before a Python object is made: how many
values it expands to, each node counted once per path that reaches it (memoised per node,
so the count never expands anything), and how deep it nests once expanded. It refuses, with
`InvalidInput` and a line and column:

- expansion through aliases beyond `ALIAS_FACTOR` times the values the document writes out
  itself, or beyond `MAX_EXPANDED_VALUES` values (a document that writes out more without
  aliases is not refused for it);
- a value that contains itself through an alias;
- nesting deeper than `compiler._json_reader.MAX_DEPTH` (as for JSON), counted through aliases;
- a string with half a UTF-16 surrogate pair (a `\\uD800` escape: no character; as for JSON);
- a scalar PyYAML cannot turn into its value (a timestamp that is no date, an integer too
  long to convert).

The text is scanned and parsed by libyaml when PyYAML has it (C: some six times faster than
PyYAML's own parser, which needs tens of seconds for 5 MB) and by PyYAML's parser otherwise;
composing, resolving and constructing are PyYAML's in both, so a document reads the same
either way. Only the wording of a syntax error differs, and libyaml refuses a few things
itself before the checks above see them (a lone surrogate escape, nesting past 1,000).

Needs PyYAML (`evidence-compiler[yaml]`): import this module where YAML is read, inside a
`try` that turns `ImportError` into `contract_tests.NEEDS_YAML`. Pure: no files, no clock.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import yaml
from yaml.composer import Composer
from yaml.constructor import ConstructorError, SafeConstructor
from yaml.events import AliasEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from compiler._errors import InvalidInput
from compiler._json_reader import MAX_DEPTH

# How far aliases may expand a file: to ALIAS_FACTOR times the values it writes out, and to
# no more than MAX_EXPANDED_VALUES. The factor keeps the cost of a file's aliases in step with
# its size (an upload of many small bombs costs what its bytes would anyway: walking a value
# is many times cheaper than parsing one), the maximum keeps one file's walks to a
# second or two. Ordinary anchors (a list of roles shared by every candidate) need far less.
ALIAS_FACTOR = 10
MAX_EXPANDED_VALUES = 1_000_000

NOT_YAML = "not valid YAML: {problem}{where}"
ALIAS_BOMB = (
    "YAML aliases expand the document's {written:,} values to more than {limit:,} (an alias "
    "bomb?): aliases may repeat what a file writes out up to {factor} times over, and to "
    "{most:,} values at most"
)
SELF_CONTAINING = "a value contains itself through a YAML alias{where}"
TOO_DEEP = "nested more than {limit} levels deep (counting through YAML aliases){where}"
LONE_SURROGATE = "a \\u escape names half a surrogate pair, not a character{where}"
UNREADABLE = "cannot read {value!r} as {kind}: {error}"

# Sizes are capped here, so that a document of ten thousand nested aliases adds small
# numbers, not numbers of ten thousand digits.
_CAP = 10**12


def parse_yaml(data: bytes | str) -> Any:
    """The value of the single YAML document `data`, or `InvalidInput` saying what is wrong
    and where. The document is measured before any Python object is made of it."""
    loader = _LOADER(data)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _measure(node)
        return loader.construct_document(node)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        raise _invalid(NOT_YAML.format(problem=problem, where=_at(mark))) from None
    finally:
        loader.dispose()


# The checks are a mixin over PyYAML's composer; mypy reads them as a whole safe loader.
if TYPE_CHECKING:
    _Composer = yaml.SafeLoader
else:
    _Composer = Composer


class _Checks(_Composer):
    """What both loaders add to PyYAML's safe loading: composing refuses nesting deeper than
    `MAX_DEPTH` (the composer recurses once per level), and a scalar that cannot be converted
    is a YAML error with the scalar's line, not a bare `ValueError`."""

    _depth = 0

    def compose_node(self, parent: Node | None, index: Any) -> Node | None:
        if self.check_event(AliasEvent):
            return super().compose_node(parent, index)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _invalid(TOO_DEEP.format(limit=MAX_DEPTH, where=_at(mark)))
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: Node, deep: bool = False) -> Any:
        try:
            return super().construct_object(node, deep)
        except (ValueError, OverflowError) as exc:
            kind = node.tag.rsplit(":", 1)[-1]
            value = node.value if isinstance(node.value, str) else ""
            value = value if len(value) <= 40 else value[:40] + "…"
            problem = UNREADABLE.format(value=value, kind=kind, error=exc)
            raise ConstructorError(None, None, problem, node.start_mark) from None


class _PythonLoader(_Checks, yaml.SafeLoader):
    """`yaml.SafeLoader` with the checks: PyYAML's scanner and parser, in Python."""


def _libyaml_loader() -> type[_Checks] | None:
    """libyaml's scanner and parser (C, some six times faster: what a large upload costs is
    mostly scanning), with PyYAML's own composer, resolver and safe constructor, so a
    document reads the same as with `_PythonLoader` (only the wording of a syntax error
    differs). None when PyYAML was built without libyaml (its wheels have it on most
    platforms)."""
    try:
        from yaml._yaml import CParser
    except ImportError:
        return None

    class _LibyamlLoader(_Checks, CParser, SafeConstructor, Resolver):
        def __init__(self, stream: bytes | str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    return _LibyamlLoader


_LOADER: type[_Checks] = _libyaml_loader() or _PythonLoader


def _children(node: Node) -> list[Node]:
    if isinstance(node, SequenceNode):
        return list(node.value)
    if isinstance(node, MappingNode):
        return [part for pair in node.value for part in pair]
    return []


def _measure(root: Node) -> None:
    """Refuse a node graph that expands too far, contains itself or nests too deep, or a
    string that is no text. Iterative (no recursion), each node visited once: the size and
    depth of a node reached again through an alias are its memoised ones."""
    size: dict[int, int] = {}
    depth: dict[int, int] = {}
    open_: set[int] = set()  # nodes whose children are being measured: their ancestors' path
    stack: list[tuple[Node, bool]] = [(root, False)]
    while stack:
        node, children_done = stack.pop()
        key = id(node)
        if children_done:
            children = _children(node)
            size[key] = min(_CAP, 1 + sum(size[id(c)] for c in children))
            depth[key] = 1 + max((depth[id(c)] for c in children), default=0)
            open_.discard(key)
            if depth[key] > MAX_DEPTH:
                raise _invalid(TOO_DEEP.format(limit=MAX_DEPTH, where=_at(node.start_mark)))
            continue
        if key in size:
            continue
        if key in open_:
            raise _invalid(SELF_CONTAINING.format(where=_at(node.start_mark)))
        if isinstance(node, ScalarNode) and not _is_text(node.value):
            raise _invalid(LONE_SURROGATE.format(where=_at(node.start_mark)))
        open_.add(key)
        stack.append((node, True))
        stack.extend((child, False) for child in _children(node))
    written = len(size)  # the distinct nodes: the values the file writes out
    limit = max(written, min(MAX_EXPANDED_VALUES, ALIAS_FACTOR * written))
    if size[id(root)] > limit:
        message = ALIAS_BOMB.format(written=written, limit=limit, factor=ALIAS_FACTOR,
                                    most=MAX_EXPANDED_VALUES)  # fmt: skip
        raise _invalid(message)


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _at(mark: Any) -> str:
    return f" at line {mark.line + 1} column {mark.column + 1}" if mark is not None else ""


def _invalid(msg: str) -> InvalidInput:
    return InvalidInput([{"loc": [], "msg": msg}])
