"""`Records`: an immutable sequence of JSON records that a compile may build lazily.

A 100k-candidate compile decides 100k admissions in one tight pass; turning each decision into
a trace entry and a rejection record is presentation, and costs more than the decision. The
output therefore carries those lists as `Records`, which behave as a tuple of dicts
(iteration, indexing, len, equality, JSON) and build their items the first time anyone looks.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, get_args, overload

if TYPE_CHECKING:  # pydantic is imported only when a model is built around these
    from pydantic import GetCoreSchemaHandler
    from pydantic_core import core_schema

# "pass" is a Python keyword, so the trace entry is declared in the functional form.
TraceEntry = TypedDict(
    "TraceEntry",
    {"id": str | None, "pass": str, "outcome": str, "reason": str | None, "detail": str | None},
)


class Rejection(TypedDict):
    id: str
    reason: str
    detail: str | None


class Records[T](Sequence[T]):
    __slots__ = ("_build", "_items")

    def __init__(
        self, items: Iterable[T] = (), *, build: Callable[[], Iterable[T]] | None = None
    ) -> None:
        self._items: tuple[T, ...] | None = None if build is not None else tuple(items)
        self._build = build

    def _all(self) -> tuple[T, ...]:
        if self._items is None:
            assert self._build is not None
            self._items = tuple(self._build())
            self._build = None
        return self._items

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[T]:
        return iter(self._all())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Records):
            return self._all() == other._all()
        if isinstance(other, tuple | list):
            return self._all() == tuple(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._all())

    def __repr__(self) -> str:
        return f"Records({list(self._all())!r})"

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        from pydantic_core import core_schema

        (item_type,) = get_args(source) or (Any,)
        items = core_schema.list_schema(handler.generate_schema(item_type))
        from_json = core_schema.no_info_after_validator_function(cls, items)
        return core_schema.json_or_python_schema(
            json_schema=from_json,
            python_schema=core_schema.union_schema(
                [core_schema.is_instance_schema(cls), from_json]
            ),
            serialization=core_schema.plain_serializer_function_ser_schema(
                list,
                return_schema=items,  # the item schema writes fresh dicts
            ),
        )
