"""Reading untrusted YAML (`compiler_tools.parse_yaml`, the loader of every contract test
file): an alias bomb, a value that contains itself, nesting too deep, half a surrogate pair
and a date that is no date are refused with a clear message before any Python object is
built, and an ordinary file's aliases and merge keys still load. Through
`evidence-compiler test DIR` too, on a
pharmacy's dispensing check (tests/compiler/mutation_fixtures.py)."""

from __future__ import annotations

import io

import pytest
import yaml
from mutation_fixtures import write_dispense_directory
from yaml.constructor import BaseConstructor
from yaml.nodes import MappingNode

from compiler import InvalidInput
from compiler_tools import _untrusted_yaml as yamlio
from compiler_tools import main, parse_yaml


@pytest.fixture(autouse=True, params=["libyaml", "python"])
def loader(request, monkeypatch):
    """Every test twice: with libyaml's parser (when PyYAML has it) and with PyYAML's own."""
    if request.param == "python":
        monkeypatch.setattr(yamlio, "_LOADER", yamlio._PythonLoader)
    elif yamlio._LOADER is yamlio._PythonLoader:
        pytest.skip("this PyYAML was built without libyaml")
    return request.param


def laughs(levels: int, width: int = 10) -> str:
    """A "billion laughs": each level a list of `width` aliases of the level below, so the
    last stands for width**levels strings."""
    lines = ['l0: &l0 ["lol"]']
    lines += [f"l{i}: &l{i} [" + ", ".join([f"*l{i - 1}"] * width) + "]"
              for i in range(1, levels + 1)]  # fmt: skip
    return "\n".join(lines) + "\n"


def refusal(text: str) -> str:
    with pytest.raises(InvalidInput) as caught:
        parse_yaml(text)
    (error,) = caught.value.errors
    assert error["loc"] == []
    return error["msg"]


@pytest.fixture
def never_built(monkeypatch):
    """Building the Python objects of a hostile document (one with a top-level key `l0`,
    `m0`, `a0` or `batch`, as below) fails the test: its refusal must come first."""
    build = BaseConstructor.construct_document
    hostile = {"l0", "m0", "a0", "batch", "tray"}

    def guarded(self, node):
        keys = {k.value for k, _ in node.value} if isinstance(node, MappingNode) else set()
        if keys & hostile:
            raise AssertionError("the document was built before it was measured")
        return build(self, node)

    monkeypatch.setattr(BaseConstructor, "construct_document", guarded)


def test_a_nine_level_alias_bomb_is_refused_before_anything_is_built(never_built):
    # 10**9 strings once expanded: tens of gigabytes, were any walk to expand it.
    assert refusal(laughs(9)) == (
        "YAML aliases expand the document's 22 values to more than 220 (an alias bomb?): "
        "aliases may repeat what a file writes out up to 10 times over, and to 1,000,000 "
        "values at most"
    )


def test_a_bomb_of_merge_keys_is_refused_too(never_built):
    # Each level merges the one below ten times: PyYAML's merge would copy 10**9 key pairs.
    lines = ["m0: &m0 {sku: A-100}"]
    lines += [f"m{i}: &m{i} {{<<: [" + ", ".join([f"*m{i - 1}"] * 10) + "]}"
              for i in range(1, 10)]  # fmt: skip
    assert "(an alias bomb?)" in refusal("\n".join(lines))


def test_an_ordinary_files_aliases_and_merge_keys_still_load():
    text = (
        "defaults: &shelf {aisle: 4, chilled: false}\n"
        "roles: &roles [pharmacist, technician]\n"
        "items:\n"
        "  - {<<: *shelf, sku: A-100, roles: *roles}\n"
        "  - {<<: *shelf, sku: B-200, chilled: true, roles: *roles}\n"
        "checked: 2026-03-01\n"
    )
    value = parse_yaml(text)
    assert value["items"] == [
        {"aisle": 4, "chilled": False, "sku": "A-100", "roles": ["pharmacist", "technician"]},
        {"aisle": 4, "chilled": True, "sku": "B-200", "roles": ["pharmacist", "technician"]},
    ]
    assert str(value["checked"]) == "2026-03-01"
    assert parse_yaml("") is None


def test_aliases_may_repeat_a_file_ten_times_over_up_to_the_maximum(monkeypatch):
    # Seventeen values written out (the mapping, its three keys, three lists, ten numbers);
    # once expanded, a is 11 values, b 1 + 3 * 11 = 34, the document 1 + 12 + 35 + (1 + c).
    nested = "a: &a [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\nb: &b [*a, *a, *a]\n"
    assert len(parse_yaml(nested + "c: [*b, *b, *b]\n")["c"]) == 3  # 151 values: under 170
    assert "17 values to more than 170" in refusal(nested + "c: [*b, *b, *b, *b]\n")  # 185
    monkeypatch.setattr(yamlio, "MAX_EXPANDED_VALUES", 100)
    assert len(parse_yaml(nested + "c: [*b]\n")["c"]) == 1  # 84 values
    assert "17 values to more than 100" in refusal(nested + "c: [*b, *b]\n")  # 118
    # Written out, 300 values: past the maximum, but without an alias.
    assert len(parse_yaml(yaml.safe_dump([f"lot-{i}" for i in range(299)]))) == 299


def test_a_value_that_contains_itself_is_refused_with_its_line(never_built):
    message = refusal("batch:\n  lots: &lots [L1, {again: *lots}]\n")
    assert message == "a value contains itself through a YAML alias at line 2 column 9"


def test_nesting_too_deep_is_refused_written_out_or_through_aliases(never_built):
    plain = "tray: " + "[" * 100 + "]" * 100 + "\n"
    said = "nested more than 64 levels deep (counting through YAML aliases) at line 1 column 70"
    assert refusal(plain) == said  # the mapping is the first level
    # Each anchor nests the one before 40 levels deeper: 120 levels once expanded.
    lines = ["a0: &a0 x"]
    lines += [f"a{i}: &a{i} " + "[" * 40 + f"*a{i - 1}" + "]" * 40 for i in (1, 2, 3)]
    assert refusal("\n".join(lines)).startswith("nested more than 64 levels deep")
    # Thousands of levels: libyaml refuses them itself (past its own 1,000); never a crash.
    deep = refusal("tray: " + "[" * 5000 + "]" * 5000 + "\n")
    assert deep.startswith(("nested more than 64", "not valid YAML: exceeded maximum nesting"))


def test_half_a_surrogate_pair_and_an_impossible_date_are_refused_with_their_line(loader):
    lone = refusal('sku: A-100\nlabel: "dose \\uD800"\n')
    said = {"python": "a \\u escape names half a surrogate pair, not a character at line 2 "
                      "column 8",
            "libyaml": "not valid YAML: found invalid Unicode character escape code at line 2 "
                       "column 16"}  # fmt: skip
    assert lone == said[loader]
    message = refusal("sku: A-100\nexpires: 2026-13-01\n")
    assert message.startswith("not valid YAML: cannot read '2026-13-01' as timestamp: month")
    assert message.endswith("at line 2 column 10")


def run_tests(directory) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(["test", str(directory)], out, err)
    return code, out.getvalue() + err.getvalue()


def test_evidence_compiler_test_refuses_a_bomb_naming_its_file(tmp_path, never_built):
    directory = write_dispense_directory(tmp_path / "rx")
    contract = directory / "contract.yaml"
    contract.write_text(contract.read_text() + laughs(9))
    code, out = run_tests(directory)
    assert code == 2
    assert f"{contract}: (file): YAML aliases expand the document's " in out
    assert "(an alias bomb?)" in out


def test_evidence_compiler_test_runs_a_directory_whose_files_use_aliases(tmp_path):
    directory = write_dispense_directory(tmp_path / "rx")
    corpus = directory / "corpora" / "counter.yaml"
    document = yaml.safe_load(corpus.read_text())
    shared_roles = document["candidates"][0]["allowed_roles"]
    for candidate in document["candidates"]:
        assert candidate["allowed_roles"] == shared_roles
        candidate["allowed_roles"] = shared_roles  # one list: safe_dump writes an anchor
    text = yaml.safe_dump(document, sort_keys=False)
    assert "&id001" in text and "*id001" in text
    corpus.write_text(text)
    code, out = run_tests(directory)
    assert code == 0, out
