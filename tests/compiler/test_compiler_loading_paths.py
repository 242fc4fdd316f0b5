"""The fast paths of loading a document change nothing a caller can see: the JSON parser, the
shared field sets of candidates, and the raw-document checks on malformed ids."""

from __future__ import annotations

import json

import pytest
from evidence_factories import candidate, document

from compiler import InvalidInput, load_input
from compiler._json_reader import _loads as _parse_json
from compiler_tools import main


@pytest.mark.parametrize(
    "text",
    [
        '{"a": 1, "a": 2}',  # the last duplicate key wins
        "123456789012345678901234567890",
        "[-0, -0.0, 1e400, 1E5, 0.1, 5e-324, 1.7976931348623157e308]",
        "[NaN, Infinity, -Infinity]",
        '"\\u00e9\\ud83d\\ude00"',
        '"\\ud800"',  # a lone surrogate: pydantic-core refuses it, json.loads decides
        "[" * 300 + "]" * 300,  # deeper than pydantic-core's parser goes
    ],
)
def test_the_parser_reads_what_json_loads_reads(text):
    assert repr(_parse_json(text)) == repr(json.loads(text))


@pytest.mark.parametrize("text", ["", "{", '{"a": 1} x', "\ufeff{}", '"\x01"', "[1,]"])
def test_the_parser_fails_as_json_loads_fails(text):
    with pytest.raises(json.JSONDecodeError) as ours:
        _parse_json(text)
    with pytest.raises(json.JSONDecodeError) as theirs:
        json.loads(text)
    assert (ours.value.msg, ours.value.pos) == (theirs.value.msg, theirs.value.pos)


def test_the_cli_names_a_json_error_by_line_and_column(tmp_path, capsys):
    path = tmp_path / "bad.json"
    path.write_text('{\n  "request": ,\n}', encoding="utf-8")
    assert main(["compile", str(path)]) == 2
    assert "not valid JSON: Expecting value at line 2 column 14" in capsys.readouterr().err


def test_candidates_with_the_same_fields_share_one_field_set_and_copies_keep_their_own():
    doc = load_input(
        document(candidate("a"), candidate("b"), candidate("c", group="g"), token_budget=0)
    )
    a, b, c = doc.candidates
    assert a.__pydantic_fields_set__ is b.__pydantic_fields_set__
    assert "group" in c.model_dump(exclude_unset=True)
    assert "group" not in a.model_dump(exclude_unset=True)
    changed = a.model_copy(update={"floor": 0})
    changed.__pydantic_fields_set__.add("floor")  # what a copy's own bookkeeping may do
    assert "floor" not in b.__pydantic_fields_set__


@pytest.mark.parametrize("bad_id", [["a"], {"x": 1}, 7])
def test_an_id_that_is_not_a_string_is_reported_next_to_other_problems(bad_id):
    doc = document(
        candidate("a", superseded_by="b"),
        candidate("b", superseded_by="a"),
        candidate("c", superseded_by="a"),
    )
    doc["candidates"][2]["id"] = bad_id
    with pytest.raises(InvalidInput) as raised:
        load_input(doc)
    locations = [tuple(e["loc"]) for e in raised.value.errors]
    assert ("candidates", 2, "id") in locations
    assert ("candidates", 0, "superseded_by") in locations  # the a <-> b loop, still found


@pytest.fixture
def small_chunks(monkeypatch):
    import compiler._validate_input

    monkeypatch.setattr(compiler._validate_input, "CHUNK", 2)


def _pool(**changed: dict) -> dict:
    items = [candidate(f"c{i:02d}", relevance=i / 10) for i in range(7)]
    for index, fields in changed.items():
        items[int(index[1:])].update(fields)
    return document(*reversed(items))


@pytest.mark.parametrize(
    "changed",
    [
        {},
        {"i1": {"tokens": "12"}, "i5": {"id": 3}},  # field errors in two chunks
        {"i6": {"id": "c00"}},  # a duplicate id: only the raw document can locate it
        {"i2": {"depends_on": ["missing"]}, "i4": {"relevance": "0.5"}},
    ],
)
def test_consuming_load_gives_what_load_input_gives(small_chunks, changed):
    """The CLI's loader validates in chunks and drops the JSON it has validated; the input it
    builds, and every problem it reports with its location, are `load_input`'s own."""
    from compiler._validate_input import load_input_consuming

    def outcome(load):
        try:
            return load().candidates_in_id_order()
        except InvalidInput as exc:
            return exc.to_json()

    consumed = _pool(**changed)
    expected = outcome(lambda: load_input(_pool(**changed)))
    assert outcome(lambda: load_input_consuming(consumed, lambda: _pool(**changed))) == expected
    if not isinstance(expected, dict):  # a valid pool: none of its JSON objects is kept
        assert not any(isinstance(item, dict) for item in consumed["candidates"])


def test_the_cli_reports_a_large_pool_s_problems_at_the_caller_s_indices(
    small_chunks, tmp_path, capsys
):
    path = tmp_path / "input.json"
    path.write_text(json.dumps(_pool(i5={"tokens": -1})))
    assert main(["compile", "--json", str(path)]) == 2
    errors = json.loads(capsys.readouterr().out)["errors"]
    assert [e["loc"] for e in errors] == [["candidates", 1, "tokens"]]  # reversed: 5 is at 1


# --------------------------------------------------------------------------- names given twice


@pytest.mark.parametrize(
    ("text", "name", "where"),
    [
        ('{"a": 1, "a": 2}', '"a"', "line 1 column 10"),
        ('{"c": [{"id": "x",\n  "id": "y"}]}', '"id"', "line 2 column 3"),
        ('{"c": [{"id": "x", "\\u0069d": "y"}]}', '"id"', "line 1 column 20"),
    ],
)
def test_a_name_given_twice_in_one_object_is_refused_where_it_repeats(text, name, where):
    from compiler import InvalidInput, parse_json

    with pytest.raises(InvalidInput) as caught:
        parse_json(text)
    (error,) = caught.value.errors
    assert error["msg"].startswith(f"the name {name} is given twice in one object, at {where}")


def test_equal_names_in_different_objects_or_inside_strings_are_no_repeat():
    from compiler import parse_json

    text = '{"a": {"b": 1, "c": [{"b": 2}, {"b": 3}]}, "b": "a: \\"b\\":", "d": ["a", "a"]}'
    assert parse_json(text)["a"]["c"] == [{"b": 2}, {"b": 3}]
