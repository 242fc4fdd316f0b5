"""Forms and data (issue 24), in a domain of our own: a library's inter-library loan desk
deciding whether a rare book may be lent to another library.

Each test posts what a person really types through the Django test client: a pasted corpus
with a name given twice, a candidate with five things wrong, a paste larger than a form may
send, roles typed as " , ,", an expectation naming an unknown operator, a 100,000-character
description. Each refusal is located and in the product's words, and nothing is written.
"""

from __future__ import annotations

import json
from html import unescape

import pytest
from django.test import override_settings
from django.urls import reverse

from contracts import demo
from contracts import services as contract_services
from contracts.models import SourceClass, SourceClassProposal
from scenarios import services
from scenarios.models import Corpus, CorpusCandidate, Scenario

pytestmark = pytest.mark.django_db

KEY = "library.interlibrary_loan"
Tier = SourceClass.AuthorityTier

CONTRACT = demo.DemoContract(
    key=KEY,
    title="Inter-library loan",
    description="May this rare book be lent to another library?",
    purposes=("loan_check",),
    propositions=(
        demo.DemoProposition("condition_ok", ("conservation_report",), "Fit to travel."),
        demo.DemoProposition("borrower_trusted", ("loan_register",), "The borrower is known."),
    ),
)


def _book(item_id: str, **changes):
    return {
        "id": item_id,
        "entity": "RARE-1742",
        "allowed_roles": ["loans_librarian"],
        "allowed_purposes": ["loan_check"],
        "evidence_class": "conservation_report",
        "supports": ["condition_ok"],
        "valid_from": "2026-03-01",
        "tokens": 80,
        "relevance": 0.8,
        "content": f"Report {item_id}",
    } | changes


@pytest.fixture
def library(owner, catalogue_manager):
    for key, label in (("conservation_report", "Conservation report"), ("loan_register", "Loans")):
        contract_services.source_class_create(
            actor=catalogue_manager, key=key, label=label, authority_tier=Tier.SYSTEM_OF_RECORD
        )
    return demo.create_contract(CONTRACT, owner=owner)


def url(name, **kwargs):
    return reverse(f"scenarios:{name}", kwargs=kwargs)


def page_of(response) -> str:
    return unescape(response.content.decode())


def _nothing_imported():
    assert not Corpus.objects.exists()
    assert not CorpusCandidate.objects.exists()


# --------------------------------------------------------------------------- corpus import


def test_a_name_given_twice_in_a_pasted_corpus_is_refused_with_its_place(as_owner, library):
    text = json.dumps({"candidates": [_book("CR-1")]}, indent=1)
    # The last value would win silently: the reviewer saw 0.2, the compiler would read 0.9.
    text = text.replace('"relevance": 0.8', '"relevance": 0.2,\n  "relevance": 0.9')
    response = as_owner.post(url("corpus_import", key=KEY), {"name": "loans", "text": text})
    assert response.status_code == 422
    line = next(n for n, row in enumerate(text.splitlines(), 1) if '"relevance": 0.9' in row)
    assert f'the name "relevance" is given twice in one object, at line {line} column 3' in (
        page_of(response)
    )
    _nothing_imported()


def test_the_same_name_in_two_objects_is_no_duplicate(as_owner, library):
    text = json.dumps({"candidates": [_book("CR-1"), _book("CR-2")]})
    response = as_owner.post(url("corpus_import", key=KEY), {"name": "loans", "text": text})
    assert response.status_code == 302
    assert Corpus.objects.get().candidates.count() == 2


def test_an_escaped_spelling_of_the_same_name_is_a_duplicate(as_owner, library):
    text = json.dumps({"candidates": [_book("CR-1")]})
    text = text.replace('"tokens": 80', '"tokens": 80, "\\u0074okens": 8')
    response = as_owner.post(url("corpus_import", key=KEY), {"name": "loans", "text": text})
    assert response.status_code == 422
    assert 'the name "tokens" is given twice' in page_of(response)
    _nothing_imported()


def test_every_problem_of_one_candidate_is_listed_at_once_in_the_products_words(as_owner, library):
    bad = _book(
        "CR-9",
        relevance=7.5,
        valid_from="2026-13-02",
        allowed_roles="loans_librarian",
        evidence_class="conservaton_report",
    )
    text = json.dumps({"candidates": [_book("CR-1"), bad]})
    text = text.replace('"tokens": 80, "relevance": 7.5', '"tokens": 100000000000000000000, '
                        '"relevance": 7.5')  # fmt: skip
    assert "100000000000000000000" in text
    response = as_owner.post(
        url("corpus_import", key=KEY), {"name": "loans", "text": text, "strict": "on"}
    )
    assert response.status_code == 422
    page = page_of(response)
    for field, message in [
        ("relevance", "must be between 0 and 1 (got 7.5)"),
        ("valid_from", 'not a date (there is no month 13; got "2026-13-02")'),
        ("tokens", "100000000000000000000 is too large"),
        ("allowed_roles", 'must be a list (got text "loans_librarian")'),
        ("evidence_class", "'conservaton_report' is not in the source-class catalogue"),
    ]:
        assert f"{field}: {message}" in page or (field in page and message in page), message
    assert "Input should" not in page and "Extra inputs" not in page
    _nothing_imported()


def test_a_misspelt_field_and_a_missing_one_are_said_plainly(as_owner, library):
    book = _book("CR-1", evidnce_class="loan_register")
    del book["content"]
    response = as_owner.post(
        url("corpus_import", key=KEY),
        {"name": "loans", "text": json.dumps({"candidates": [book]})},
    )
    page = page_of(response)
    assert response.status_code == 422
    assert "is not a field here: check the spelling" in page
    assert "is required" in page and "Field required" not in page
    _nothing_imported()


# --------------------------------------------------------------------------- a large paste


@override_settings(CORPUS_UPLOAD_MAX_BYTES=1_000, DATA_UPLOAD_MAX_MEMORY_SIZE=4_000)
def test_a_paste_over_the_corpus_cap_is_refused_on_the_form_like_a_file(as_owner, library):
    text = json.dumps({"candidates": [_book(f"CR-{i}") for i in range(8)]})
    assert 1_000 < len(text) < 4_000
    response = as_owner.post(url("corpus_import", key=KEY), {"name": "spring loans", "text": text})
    assert response.status_code == 422
    page = page_of(response)
    assert "at most 1000 bytes are accepted" in page
    assert 'value="spring loans"' in page  # the form is kept
    _nothing_imported()


@override_settings(CORPUS_UPLOAD_MAX_BYTES=1_000, DATA_UPLOAD_MAX_MEMORY_SIZE=4_000)
def test_a_post_larger_than_a_form_may_send_gets_the_form_back_with_the_limit(as_owner, library):
    text = json.dumps({"candidates": [_book(f"CR-{i}") for i in range(40)]})
    assert len(text) > 4_000
    response = as_owner.post(url("corpus_import", key=KEY), {"name": "spring loans", "text": text})
    assert response.status_code == 413
    page = page_of(response)
    assert "a form's fields may hold at most 3.9\xa0KB" in page
    assert "Upload a large corpus as a file instead (at most 1000\xa0bytes)" in page
    assert 'name="file"' in page and 'name="text"' in page  # the import form, to upload
    assert "RequestDataTooBig" not in page
    _nothing_imported()


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=4_000)
def test_a_too_large_post_by_someone_signed_out_is_a_plain_413(client, library):
    response = client.post(url("corpus_import", key=KEY), {"text": "x" * 5_000})
    assert response.status_code == 413
    assert "at most 3.9\xa0KB" in response.content.decode()


# --------------------------------------------------------------------------- scenarios


@pytest.fixture
def loans(owner, library):
    return services.corpus_import(
        actor=owner,
        decision_type=library,
        name="loans",
        document={"candidates": [_book("CR-1"), _book("LR-1", evidence_class="loan_register",
                                                     supports=["borrower_trusted"])]},
    )  # fmt: skip


def _scenario_post(loans, **changes):
    return {
        "name": "Lend the 1742 atlas",
        "corpus": loans.pk,
        "principal": "ines",
        "roles": "loans_librarian",
        "purpose": "loan_check",
        "entity": "RARE-1742",
        "decision_date": "2026-05-01",
        "token_budget": "400",
    } | changes


@pytest.mark.parametrize("roles", [" , ,", "", "\n,\n"])
def test_roles_that_name_no_role_are_refused_on_the_field(as_owner, loans, roles):
    response = as_owner.post(url("scenario_create", key=KEY), _scenario_post(loans, roles=roles))
    assert response.status_code == 422
    assert "Give at least one role the principal holds" in page_of(response)
    assert not Scenario.objects.exists()


def test_the_service_refuses_a_blank_role_too(owner, library, loans):
    with pytest.raises(services.ValidationError) as caught:
        services.scenario_create(
            actor=owner,
            decision_type=library,
            corpus=loans,
            name="blank",
            principal="ines",
            roles=["loans_librarian", " "],
            purpose="loan_check",
            entity="RARE-1742",
            decision_date="2026-05-01",
            token_budget=400,
        )
    assert list(caught.value.message_dict) == ["roles"]


def test_an_unknown_operator_is_named_before_anything_it_lacks(as_owner, loans):
    expectations = json.dumps([{"operator": "nope"}])
    response = as_owner.post(
        url("scenario_create", key=KEY),
        _scenario_post(loans, variant_expectations=expectations),
    )
    assert response.status_code == 422
    page = page_of(response)
    assert "Expectation 1: 'nope' is not an operator; the operators are" in page
    assert "shift_days" in page
    assert "Field required" not in page
    assert not Scenario.objects.exists()


def test_a_known_operator_still_saves(as_owner, loans):
    expectations = json.dumps(
        [
            {
                "operator": "shift_days",
                "args": {"days": 400},
                "proposition": "condition_ok",
                "state": "supported",
            }
        ]
    )
    response = as_owner.post(
        url("scenario_create", key=KEY),
        _scenario_post(loans, variant_expectations=expectations),
    )
    assert response.status_code == 302
    assert Scenario.objects.get().variant_expectations[0]["operator"] == "shift_days"


# --------------------------------------------------------------------------- proposals


def test_a_proposed_description_longer_than_2000_characters_is_refused(client, library, owner):
    client.force_login(owner)
    response = client.post(
        reverse("source_class_propose_new"),
        {
            "key": "donor_letter",
            "label": "Donor letter",
            "authority_tier": int(Tier.CONTROLLED_DOCUMENT),
            "description": "d" * 100_000,
        },
    )
    assert response.status_code in (400, 422)
    assert "at most 2000 characters (it has 100000)" in page_of(response)
    assert not SourceClassProposal.objects.exists()

    response = client.post(
        reverse("source_class_propose_new"),
        {
            "key": "donor_letter",
            "label": "Donor letter",
            "authority_tier": int(Tier.CONTROLLED_DOCUMENT),
            "description": "d" * 2_000,
        },
    )
    assert response.status_code == 302
    assert len(SourceClassProposal.objects.get().description) == 2_000


def test_a_long_description_stored_before_the_limit_is_cut_short_in_lists(client, library, owner):
    SourceClass.objects.filter(key="loan_register").update(description="w" * 100_000)
    client.force_login(owner)
    page = client.get(reverse("source_class_list")).content.decode()
    assert "w" * 299 in page
    assert "w" * 301 not in page
