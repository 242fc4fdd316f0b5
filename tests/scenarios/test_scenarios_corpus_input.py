"""Corpus input a new user really sends: awkward ids, hostile files, names and located errors.

Every refusal here is a located message with nothing written; run this module on SQLite and
on PostgreSQL (DATABASE_URL=postgres://…), where a long id or a lone surrogate used to end in
a DataError.
"""

from __future__ import annotations

import json
import re
from html import escape, unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import override_settings
from django.urls import reverse

from contracts.models import AuditEvent
from scenarios import services
from scenarios.compiling import CorpusInvalid
from scenarios.models import Corpus, CorpusCandidate

pytestmark = pytest.mark.django_db
KEY = "credit.review.continuation"


def url(name, **kwargs):
    return reverse(f"scenarios:{name}", kwargs=kwargs)


def renamed(document, old, new):
    """The document with candidate `old` called `new`, references included."""
    text = json.dumps(document).replace(json.dumps(old), json.dumps(new))
    return json.loads(text)


def _posted(form):
    """What a browser posts back for a form shown with its initial values."""
    posted = {n: form[n].value() if form[n].value() is not None else "" for n in form.fields}
    return posted | {k: ", ".join(v) for k, v in posted.items() if isinstance(v, list)}


# Ids the interchange format accepts and people use: paths, spaces, URL punctuation, escapes
# that look already decoded, Unicode, dot segments, an inner line break, a trailing space.
AWKWARD_IDS = [
    "invoice/2026/0042",
    "/leading/slash/",
    "with space",
    "what?now",
    "hash#1",
    "100%",
    "%2F",
    "a+b&c=d",
    "unicodé-✓-日本",
    ".",
    "..",
    "a/../b",
    "line\nbreak",
    "trailing ",
    "<b>bold</b>",
]


@pytest.mark.parametrize("awkward", AWKWARD_IDS)
def test_an_awkward_id_works_on_every_page_that_shows_or_links_it(
    as_owner, owner, atlas, draft, atlas_document, scenario_fields, awkward
):
    document = renamed(atlas_document, "facility-F102", awkward)
    corpus = services.corpus_import(actor=owner, decision_type=atlas, name="c", document=document)

    page = as_owner.get(url("corpus_detail", key=KEY, pk=corpus.pk))
    assert page.status_code == 200
    html = page.content.decode()
    assert f"<code>{escape(awkward, quote=False)}</code>" in html
    # The corpus page's edit link leads to this candidate's form, whatever its id.
    links = [unescape(h) for h in re.findall(r'href="([^"]*/candidates/[^"]*/edit/)"', html)]
    edit = links[0]  # the renamed candidate is the corpus's first
    # A browser resolves "." and ".." segments before asking; the link must have none.
    assert not {".", ".."} & set(edit.split("/"))
    form_page = as_owner.get(edit)
    assert form_page.status_code == 200
    assert form_page.context["form"].initial["id"] == awkward
    assert form_page.context["candidate_id"] == awkward

    # Saving the form posts back to the same candidate and keeps the id as typed.
    posted = _posted(form_page.context["form"])
    posted["relevance"] = "0.5"
    saved = as_owner.post(edit, posted)
    assert saved.status_code == 302, saved.content.decode()[:2000]
    row = CorpusCandidate.objects.get(corpus=corpus, candidate_id=awkward)
    assert row.data["relevance"] == 0.5

    scenario = services.scenario_create(
        actor=owner, decision_type=atlas, corpus=corpus, name="s", **scenario_fields()
    )
    run = services.run_start(actor=owner, version=draft)
    shown = escape(awkward, quote=False)
    base = run.results.get(perturbation="")
    hidden = run.results.get(perturbation=f"hide({awkward})")
    pages = {
        "run": url("run_detail", key=KEY, pk=run.pk),
        "packet": url("result_packet", key=KEY, run_pk=run.pk, pk=base.pk),
        "diff": url("result_diff", key=KEY, run_pk=run.pk, pk=hidden.pk),
        "compare": url("scenario_compare", key=KEY, pk=scenario.pk),
        "scenario": url("scenario_detail", key=KEY, pk=scenario.pk),
    }
    for name, address in pages.items():
        response = as_owner.get(address)
        assert response.status_code == 200, name
        if name != "run":
            assert shown in response.content.decode(), name


# --------------------------------------------------------------------------- hostile imports


def _import(client, **fields):
    return client.post(url("corpus_import", key=KEY), {"name": "hostile", **fields})


def _refused(response, *messages):
    assert response.status_code == 422
    page = unescape(response.content.decode())
    for message in messages:
        assert message in page
    assert not Corpus.objects.exists()
    assert not CorpusCandidate.objects.exists()
    assert not AuditEvent.objects.filter(action=services.Action.CORPUS_IMPORTED).exists()


def test_arrays_nested_50000_deep_are_refused_with_a_location(as_owner, atlas):
    upload = SimpleUploadedFile("deep.json", b"[" * 50_000 + b"]" * 50_000)
    _refused(_import(as_owner, file=upload), "nested more than 64 levels deep at line 1 column 65")


def test_a_5000_digit_integer_is_refused_with_a_location(as_owner, atlas, atlas_document):
    text = json.dumps(atlas_document).replace('"tokens": 180', '"tokens": ' + "9" * 5_000, 1)
    assert "9" * 5_000 in text
    _refused(_import(as_owner, text=text), "a number of more than 100 digits at line 1 column")


def test_an_id_longer_than_the_table_holds_is_refused_on_every_database(
    as_owner, atlas, atlas_document
):
    long_id = "x" * 201
    document = renamed(atlas_document, "policy-P3", long_id)
    _refused(
        _import(as_owner, text=json.dumps(document)),
        f"candidates[2] (id '{long_id}')",
        "An id is at most 200 characters; this one has 201.",
    )


def test_a_lone_surrogate_in_content_is_refused_on_every_database(as_owner, atlas, atlas_document):
    atlas_document["candidates"][1]["content"] = "approved \ud800"
    text = json.dumps(atlas_document)  # ensure_ascii writes the escape \\ud800
    _refused(
        _import(as_owner, text=text),
        "candidates[1] content: a \\u escape names half a surrogate pair",
    )


def test_the_service_refuses_a_lone_surrogate_handed_over_directly(owner, atlas, atlas_document):
    atlas_document["candidates"][1]["content"] = "approved \ud800"
    with pytest.raises(CorpusInvalid) as caught:
        services.corpus_import(actor=owner, decision_type=atlas, name="c", document=atlas_document)
    [problem] = caught.value.problems
    assert (problem.index, problem.candidate_id, problem.field) == (1, "workflow-E88", "content")
    assert not Corpus.objects.exists()


def test_an_upload_that_is_not_utf8_is_refused_not_replaced(as_owner, atlas, atlas_document):
    raw = json.dumps(atlas_document).replace("Atlas", "Atl\xe4s").encode("latin-1")
    upload = SimpleUploadedFile("latin1.json", raw)
    _refused(_import(as_owner, file=upload), "not UTF-8 text: byte", "(line 1 column")


@override_settings(CORPUS_UPLOAD_MAX_BYTES=1_000)
def test_an_upload_over_the_size_cap_is_refused_and_the_form_says_the_cap(
    as_owner, atlas, atlas_document
):
    form_page = as_owner.get(url("corpus_import", key=KEY)).content.decode()
    assert "at most 1000\xa0bytes" in unescape(form_page)
    upload = SimpleUploadedFile("big.json", json.dumps(atlas_document).encode())
    _refused(_import(as_owner, file=upload), "corpora of at most 1000\xa0bytes are accepted")
    _refused(_import(as_owner, text=json.dumps(atlas_document)), "at most 1000 bytes")


@pytest.mark.parametrize("name", ["two\r\nlines", "tab\there", "bell\x07"])
def test_a_corpus_name_with_control_characters_is_refused(
    as_owner, owner, atlas, atlas_document, name
):
    response = as_owner.post(
        url("corpus_import", key=KEY), {"name": name, "text": json.dumps(atlas_document)}
    )
    _refused(response, services.CONTROL_CHARACTER)
    with pytest.raises(services.ValidationError) as caught:
        services.corpus_import(actor=owner, decision_type=atlas, name=name, document=atlas_document)
    assert caught.value.message_dict == {"name": [services.CONTROL_CHARACTER]}


@pytest.mark.parametrize(
    ("name", "disposition"),
    [
        ('say "hi"', 'attachment; filename="credit.review.continuation-say-hi-.json"'),
        (
            "evil\r\nSet-Cookie: x=1",
            'attachment; filename="credit.review.continuation-evil-Set-Cookie:-x=1.json"',
        ),
        ("née", "attachment; filename*=utf-8''credit.review.continuation-n%C3%A9e.json"),
    ],
)
def test_export_answers_whatever_the_corpus_is_called(
    as_owner, corpus, atlas_document, name, disposition
):
    # Stored before names were checked: the export must still answer.
    Corpus.objects.filter(pk=corpus.pk).update(name=name)
    response = as_owner.get(url("corpus_export", key=KEY, pk=corpus.pk))
    assert response.status_code == 200
    assert response["Content-Disposition"] == disposition
    assert len(json.loads(response.content)["candidates"]) == len(atlas_document["candidates"])


# --------------------------------------------------------------------------- located errors


def test_import_problems_cite_the_candidate_id(as_owner, atlas, atlas_document):
    atlas_document["candidates"][5]["tokens"] = -3
    response = as_owner.post(
        url("corpus_import", key=KEY), {"name": "bad", "text": json.dumps(atlas_document)}
    )
    assert response.status_code == 422
    assert escape("candidates[5] (id 'investigation-X9')") in response.content.decode()


def test_valid_to_before_valid_from_is_shown_on_valid_to(as_owner, corpus):
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    form = as_owner.get(edit).context["form"]
    posted = _posted(form)
    posted |= {"valid_from": "2026-08-29", "valid_to": "2026-08-01"}
    response = as_owner.post(edit, posted)
    assert response.status_code == 422
    errors = response.context["form"].errors
    assert errors["valid_to"] == ["valid_to 2026-08-01 is before valid_from 2026-08-29"]
    assert "other" not in errors
    assert 'id="id_valid_to_error"' in response.content.decode()


def test_the_directory_is_shown_as_json(as_owner, corpus):
    page = as_owner.get(url("corpus_detail", key=KEY, pk=corpus.pk)).content.decode()
    directory = unescape(page.split('<pre class="json">', 1)[1].split("</pre>", 1)[0])
    assert json.loads(directory) == corpus.directory


def test_a_lone_surrogate_in_the_other_fields_is_refused_on_the_field(as_owner, corpus):
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    form = as_owner.get(edit).context["form"]
    posted = _posted(form)
    posted["other"] = '{"source": {"kind": "crm", "ref": "\\ud800"}}'
    response = as_owner.post(edit, posted)
    assert response.status_code == 422
    assert "half a surrogate pair" in response.context["form"].errors["other"][0]


def test_the_service_refuses_a_candidate_id_longer_than_the_table_holds(owner, corpus):
    data = dict(corpus.candidates.get(candidate_id="rm-note-N7").data, id="y" * 201)
    with pytest.raises(services.ValidationError) as caught:
        services.candidate_save(actor=owner, corpus=corpus, data=data)
    assert caught.value.message_dict == {
        "id": ["An id is at most 200 characters; this one has 201."]
    }


# --------------------------------------------------------------------------- unknown values


def _typos(document):
    document["candidates"][1]["evidence_class"] = "recipt_scan"
    document["candidates"][0]["supports"] = ["facility_limit", "facilty_limit"]
    return document


CLASS_WARNING = (
    "candidates[1] (id 'workflow-E88') evidence_class: 'recipt_scan' is not in the "
    "source-class catalogue"
)
PROPOSITION_WARNING = (
    "candidates[0] (id 'facility-F102') supports.1: 'facilty_limit' is not a proposition of "
    "any version of this decision type."
)


def test_a_clean_corpus_imports_without_warnings(owner, atlas, draft, atlas_document):
    corpus = services.corpus_import(
        actor=owner, decision_type=atlas, name="c", document=atlas_document, strict=True
    )
    assert corpus.warnings == []


def test_unknown_classes_and_propositions_are_warnings_with_their_location(
    as_owner, atlas, draft, atlas_document
):
    response = as_owner.post(
        url("corpus_import", key=KEY),
        {"name": "typos", "text": json.dumps(_typos(atlas_document))},
        follow=True,
    )
    assert response.status_code == 200
    shown = [str(m) for m in response.context["messages"]]
    assert any(m.startswith(f"Warning: {CLASS_WARNING}") for m in shown)
    assert f"Warning: {PROPOSITION_WARNING}" in shown
    assert Corpus.objects.get(name="typos").candidates.count() == 6


def test_strict_mode_makes_unknown_values_errors_and_saves_nothing(
    as_owner, atlas, draft, atlas_document
):
    response = as_owner.post(
        url("corpus_import", key=KEY),
        {"name": "typos", "text": json.dumps(_typos(atlas_document)), "strict": "on"},
    )
    _refused(response, "2 problems; nothing was saved.", "'recipt_scan' is not in the")
    page = unescape(response.content.decode())
    assert "candidates[1] (id 'workflow-E88')" in page and "supports.1" in page


def test_import_fixtures_prints_warnings_and_refuses_them_with_strict(
    atlas, draft, atlas_document, tmp_path
):
    import io

    from django.core.management import CommandError, call_command

    path = tmp_path / "typos.json"
    path.write_text(json.dumps(_typos(atlas_document)))
    err = io.StringIO()
    with pytest.raises(CommandError, match="2 problem"):
        call_command("import_fixtures", KEY, str(path), "--strict", stderr=err)
    assert not Corpus.objects.exists()
    err = io.StringIO()
    call_command("import_fixtures", KEY, str(path), stderr=err, stdout=io.StringIO())
    lines = err.getvalue().splitlines()
    assert lines[0].startswith(
        "warning: item 0 (id 'facility-F102'), field supports.1: 'facilty_limit' is not"
    )
    assert lines[1].startswith(
        "warning: item 1 (id 'workflow-E88'), field evidence_class: 'recipt_scan' is not"
    )
    assert Corpus.objects.get(name="typos").candidates.count() == 6


def test_the_candidate_form_offers_known_values_and_warns_about_new_ones(as_owner, draft, corpus):
    edit = url("candidate_edit", key=KEY, pk=corpus.pk, candidate_id="rm-note-N7")
    response = as_owner.get(edit)
    page = response.content.decode()
    assert 'list="known-evidence-classes"' in page and 'list="known-propositions"' in page
    datalists = response.context["form"].datalists
    assert "case_note" in datalists["known-evidence-classes"]
    assert "waiver_valid" in datalists["known-propositions"]
    assert "credit_analyst" in datalists["known-roles"]
    assert "annual_credit_review" in datalists["known-purposes"]
    assert '<datalist id="known-evidence-classes"><option value="' in page

    form = response.context["form"]
    posted = _posted(form)
    posted["evidence_class"] = "recipt_scan"
    saved = as_owner.post(edit, posted, follow=True)
    shown = [str(m) for m in saved.context["messages"]]
    assert any(m.startswith("Warning: evidence_class: 'recipt_scan' is not in the") for m in shown)
    assert corpus.candidates.get(candidate_id="rm-note-N7").data["evidence_class"] == "recipt_scan"


def test_a_scenario_expecting_ids_its_corpus_lacks_is_saved_with_a_warning(as_owner, corpus):
    response = as_owner.post(
        url("scenario_create", key=KEY),
        {
            "name": "typo",
            "corpus": corpus.pk,
            "principal": "maya",
            "roles": "credit_analyst",
            "purpose": "annual_credit_review",
            "entity": "Atlas",
            "decision_date": "2026-08-30",
            "token_budget": "760",
            "check_rejected": "on",
            "expected_rejected": "investigation-X9, polcy-P2",
        },
        follow=True,
    )
    assert response.status_code == 200
    assert [str(m) for m in response.context["messages"]][1:] == [
        "Warning: expected_rejected: 'polcy-P2' is not a candidate of corpus 'atlas'."
    ]
