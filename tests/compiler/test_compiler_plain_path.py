"""The CLI's compile without pydantic (`plain_loading`, `pipeline.run`, `output_text`) is the
library's compile: it accepts only documents `CompileInput` accepts, with the same values, and
writes exactly the bytes `json.dumps(compile_input(...).to_json(), indent=2,
ensure_ascii=False)` writes. Anything else goes to pydantic, which lists every problem."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest
from evidence_factories import candidate, context_item, contract, delegation, document
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_compiler_properties import ANY_DOC

from compiler import Candidate, InvalidInput, compile_input, load_input
from compiler import _json_reader as jsonio
from compiler._candidate_fields import CANDIDATE_FIELDS, REQUIRED
from compiler._json_reader import NotQuick, quick_object, quick_text
from compiler._output_json import compiled_pieces
from compiler._pipeline import run
from compiler._slotted import PlainCandidate
from compiler._slotted_reader import load_plain, load_plain_text

SETTINGS = settings(
    max_examples=120,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
ROOT = Path(__file__).resolve().parents[2]


def library_text(doc) -> str:
    return json.dumps(compile_input(load_input(doc)).to_json(), indent=2, ensure_ascii=False)


def plain_text(doc) -> str | None:
    plain = load_plain_text(quick_text(json.dumps(doc, ensure_ascii=False).encode()))
    return None if plain is None else "".join(compiled_pieces(run(plain)))


SPECIAL = [
    document(candidate("a"), candidate("b", entity="OTHER"), context_item("c")),
    document(candidate('naïve "quoted" \\ id\t✓', content="ü\n\u2028"), token_budget=0),
    document(candidate("a", requirement="mandatory", tokens=5000)),  # refused in plan
    document(candidate("a"), req={**document()["request"], "entity": "Nobody"}),  # refused
    document(),
    document(
        candidate("a", forms=[{"rank": 0, "tokens": 5, "content": "short"}], floor=0),
        candidate("b", depends_on=["a"], group="g", group_required=True),
        candidate("c", superseded_by="a", valid_to="2027-01-01"),
        candidate("d", source={"kind": "doc", "ref": "r"}, relevance=1),
        delegation=delegation(),
        named=["a"],
        expected_policy={"name": "default", "version": 1},
        directory={"entities": {"ATLAS-IN-01": ["Atlas"]}, "role_parents": {}},
    ),
    document(
        candidate("a"),
        con=contract(
            policy={
                "min_relevance": 0,
                "role_order": ["tool", "support", "evidence", "state", "task", "instruction"],
            }
        ),
    ),  # fmt: skip
]


@pytest.mark.parametrize("doc", SPECIAL, ids=range(len(SPECIAL)))
def test_plain_compile_writes_the_library_output_byte_for_byte(doc):
    assert plain_text(doc) == library_text(doc)


@pytest.mark.parametrize("doc", SPECIAL, ids=range(len(SPECIAL)))
def test_reading_candidates_in_chunks_changes_nothing(doc, monkeypatch):
    """Every `}, {` is tried as a chunk's end (those inside a form list or a string fail and
    are read element by element)."""
    doc = copy.deepcopy(doc)
    doc["candidates"] += [candidate("z", content='x}, {"id": "no"}, {', forms=[
        {"rank": 0, "tokens": 1, "content": "}, {"}, {"rank": 1, "tokens": 2, "content": "b"}]
    )]  # fmt: skip
    monkeypatch.setattr(jsonio, "QUICK_CHUNK_CHARS", 1)
    assert plain_text(doc) == library_text(doc)


@SETTINGS
@given(ANY_DOC)
def test_every_generated_document_compiles_the_plain_way_to_the_same_bytes(doc):
    assert plain_text(doc) == library_text(doc)
    assert load_plain(copy.deepcopy(doc)) is not None


ODD_VALUES = [
    None, "", "x", "ATLAS-IN-01", -1, 0, 1, 2, 2**53, 2**60, 0.5, 1.5, float("nan"), True,
    False, [], ["x"], [1], [[]], {}, {"x": 1}, "2026-08-30", "2026-13-01", "2026-08-30T00:00:00",
    "evidence", "mandatory", "cheapest",
]  # fmt: skip


def _paths(value, at=()):
    """Every place in a document a value can be replaced, added or removed."""
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


FIELD_NAMES = ["id", "tokens", "floor", "forms", "role", "group", "valid_to", "extra", "policy"]


@st.composite
def mutated(draw):
    doc = copy.deepcopy(draw(st.sampled_from(SPECIAL)))
    path = draw(st.sampled_from([p for p in _paths(doc) if p]))
    parent = doc
    for part in path[:-1]:
        parent = parent[part]
    action = draw(st.sampled_from(["replace", "delete", "add"]))
    if action == "delete":
        del parent[path[-1]]
    elif action == "add" and isinstance(parent, dict):
        parent[draw(st.sampled_from(FIELD_NAMES))] = draw(st.sampled_from(ODD_VALUES))
    else:
        parent[path[-1]] = draw(st.sampled_from(ODD_VALUES))
    return doc


@SETTINGS
@given(mutated())
def test_the_plain_way_accepts_only_what_pydantic_accepts_and_compiles_it_alike(doc):
    try:
        expected = library_text(doc)
    except InvalidInput:
        assert load_plain(copy.deepcopy(doc)) is None
        return
    plain = load_plain(copy.deepcopy(doc))
    if plain is not None:  # it may leave a valid document to pydantic, never change it
        assert "".join(compiled_pieces(run(plain))) == expected


# Integers within 64 bits: beyond them orjson, which reads the list in chunks, gives a float
# where `json` gives an int, and no candidate field accepts either (`_converted_list`).
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
    max_leaves=20,
)


@SETTINGS
@given(st.dictionaries(st.text(), JSON, max_size=5), st.lists(JSON, max_size=5), st.data())
def test_the_quick_reader_reads_what_json_reads(head, items, data):
    value = {**head, "c": items}
    indent = data.draw(st.sampled_from([None, 0, 2]))
    separators = data.draw(st.sampled_from([None, (",", ":"), (" ,", " : ")]))
    text = json.dumps(value, indent=indent, separators=separators, ensure_ascii=False)
    chunk = data.draw(st.sampled_from([jsonio.QUICK_CHUNK_CHARS, 1, 7]))
    default, jsonio.QUICK_CHUNK_CHARS = jsonio.QUICK_CHUNK_CHARS, chunk
    try:
        read = quick_object(quick_text(text.encode("utf-8", "surrogatepass")), "c", _tagged)
    except NotQuick:
        return  # read the careful way instead
    finally:
        jsonio.QUICK_CHUNK_CHARS = default
    expected = json.loads(text)
    expected["c"] = [_tagged(item) for item in expected["c"]]
    assert read == expected


def _tagged(item):
    return ("converted", item)


@pytest.mark.parametrize(
    "text",
    [
        '\ufeff{"c": []}',  # a byte order mark
        '{"c": [], "c": []}',  # a name twice
        '{"c": ["\\ud800"]}',  # half a surrogate pair
        '{"c": [0.' + "0" * 120 + "1]}",  # a number nobody means
        '{"c": 1}',
        '{"c": []} trailing',
        "[]",
    ],
)
def test_the_quick_reader_leaves_doubtful_text_to_the_careful_parser(text):
    with pytest.raises(NotQuick):
        quick_object(quick_text(text.encode("utf-8", "surrogatepass")), "c", _tagged)


def test_a_long_integer_is_read_and_left_to_pydantic_by_the_candidate_checks():
    doc = document(candidate("a"))
    text = json.dumps(doc).replace('"tokens": 100', '"tokens": 1' + "0" * 120)
    assert quick_object(quick_text(text.encode()), "c", _tagged)["candidates"][0]["tokens"] > 0
    assert load_plain_text(quick_text(text.encode())) is None


def test_a_plain_compile_imports_neither_pydantic_nor_the_bundle_modules(tmp_path):
    path = tmp_path / "in.json"
    path.write_text(json.dumps(document(candidate("a"))), encoding="utf-8")
    script = (
        "import sys\n"
        "from compiler_tools._cli import main\n"
        f"code = main(['compile', {str(path)!r}])\n"
        "heavy = ('pydantic', 'pydantic_core', 'cryptography', 'yaml', 'compiler_trust',\n"
        "         'compiler_tools._pull', 'compiler_tools._contract_tests',\n"
        "         'compiler._input', 'compiler._output')\n"
        "print(code, sorted(m for m in sys.modules if m.split('.')[0] in heavy or m in heavy))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert result.stdout.strip().splitlines()[-1] == "0 []"


# Each candidate's field types are checked by one look-up of their types in slot order (a
# missing required field keeps a stand-in, an unknown field makes the row longer): each of
# these is a candidate pydantic refuses, so the plain way must leave it to pydantic, even
# after a valid candidate of the same field layout has been seen.
REFUSED_CANDIDATES = [
    {"tokens": True},
    {"tokens": -1},
    {"relevance": True},
    {"relevance": float("inf")},
    {"valid_to": 20270101},
    {"superseded": None},
    {"superseded": 0},
    {"role": None},
    {"role": "nobody"},
    {"requirement": 1},
    {"forms": None},
    {"floor": -1},
    {"floor": 1.0},
    {"depends_on": None},
    {"denied_roles": [None]},
    {"allowed_roles": [["x"]]},
    {"source": []},
    {"id": ""},
    {"extra": 1},
]
SAME_FIELD_VALID = {
    "tokens": 1, "relevance": 0.5, "valid_to": "2027-01-01", "superseded": False,
    "role": "evidence", "requirement": "preferred", "forms": [], "floor": None,
    "depends_on": [], "denied_roles": [], "allowed_roles": ["x"], "source": None, "id": "a",
}  # fmt: skip


@pytest.mark.parametrize("change", REFUSED_CANDIDATES, ids=repr)
def test_a_candidate_of_a_seen_layout_with_a_refused_field_is_left_to_pydantic(change):
    bad = {**candidate("b"), **change}
    good = candidate("a", **{k: SAME_FIELD_VALID[k] for k in change if k in SAME_FIELD_VALID})
    doc = document(good, bad)
    with pytest.raises(InvalidInput):
        library_text(doc)
    assert load_plain(copy.deepcopy(doc)) is None
    assert plain_text(doc) is None


@pytest.mark.parametrize("name", ["id", "entity", "tokens", "relevance", "valid_from"])
def test_a_candidate_without_a_required_field_is_left_to_pydantic(name):
    bad = {k: v for k, v in candidate("b").items() if k != name}
    doc = document(candidate("a"), bad)
    with pytest.raises(InvalidInput):
        library_text(doc)
    assert load_plain(copy.deepcopy(doc)) is None


def test_the_model_and_its_slotted_twin_have_the_candidate_fields_of_the_one_table():
    """A field added to the model and not to the table (or the other way) would make the
    plain way refuse, or silently drop, what pydantic accepts."""
    model = {
        name: REQUIRED if field.is_required() else field.default
        for name, field in Candidate.model_fields.items()
    }
    assert list(model) == list(CANDIDATE_FIELDS) == list(PlainCandidate.__slots__)
    assert model == {name: field.default for name, field in CANDIDATE_FIELDS.items()}
    assert set(PlainCandidate.__annotations__) == set(CANDIDATE_FIELDS)
