"""Every string a person or a service supplied — a scenario's name, a candidate's id, a
receipt's decision id — is escaped and isolated in its own `<bdi>` wherever the impact
report, the review page, a run's pages and the replay of recorded decisions print it, so a
right-to-left override (U+202E) in it cannot reorder the words around it.

The domain: interlibrary loans at a university library. A request is lent when the partner
library's holding is confirmed and a lending agreement covers it; version 2 lets a
librarian's email stand for the agreement, which admits the email and changes the slot — in
the scenario, in its perturbations and in a loan production recorded."""

from __future__ import annotations

import datetime as dt
from html.parser import HTMLParser

import pytest

from contracts import demo as contracts_demo
from contracts import services
from contracts.models import SourceClass

pytestmark = pytest.mark.django_db

OVERRIDE = "\u202e"
SCENARIO = f"Loan {OVERRIDE}<script>alert('scenario')</script> thesis"
EMAIL_ID = f"MAIL-{OVERRIDE}<script>alert('candidate')</script>"
DECISION = f"loan-{OVERRIDE}<script>alert('decision')</script>-7"
MARKERS = (SCENARIO, EMAIL_ID, DECISION)

Tier = SourceClass.AuthorityTier
CONTRACT = contracts_demo.DemoContract(
    key="library.interlibrary_loan",
    title="Interlibrary loan",
    description="May the library borrow this item for a reader from a partner library?",
    purposes=("interlibrary_loan",),
    propositions=(
        contracts_demo.DemoProposition(
            "holding_confirmed", ("union_catalogue_record",), "The partner holds the item."
        ),
        contracts_demo.DemoProposition(
            "agreement_in_force", ("lending_agreement",), "A lending agreement covers it."
        ),
    ),
    reviewers=(),
    viewers=(),
)
ENTITY = "PARTNER-TALLINN"


def _item(id_: str, cls: str, supports: str) -> dict:
    return {
        "id": id_, "entity": ENTITY, "allowed_roles": ["loans_librarian"],
        "allowed_purposes": ["interlibrary_loan"], "evidence_class": cls,
        "supports": [supports], "valid_from": "2026-01-01", "tokens": 50, "relevance": 0.7,
        "content": f"{cls} for the Tallinn partner",
    }  # fmt: skip


CORPUS = {
    "directory": {"entities": {ENTITY: ["Tallinn University Library"]}},
    "candidates": [
        _item("UC-1", "union_catalogue_record", "holding_confirmed"),
        _item(EMAIL_ID, "librarian_email", "agreement_in_force"),
    ],
}


@pytest.fixture
def loans(owner, reviewer, catalogue_manager, devices, keys):
    """Version 1 published (the agreement unknown: only an email speaks to it), a recorded
    loan compiled against it, and version 2 drafted accepting the email."""
    from scenarios import services as scenario_services

    for key, label, tier, weak in (
        ("union_catalogue_record", "Union catalogue record", Tier.SYSTEM_OF_RECORD, False),
        ("lending_agreement", "Lending agreement", Tier.APPROVED_INSTRUMENT, False),
        ("librarian_email", "Librarian email", Tier.INFORMAL, False),
    ):
        services.source_class_create(
            actor=catalogue_manager, key=key, label=label, authority_tier=tier, weak=weak
        )
    decision_type = contracts_demo.create_contract(CONTRACT, owner=owner, reviewers=[reviewer])
    corpus = scenario_services.corpus_import(
        actor=owner, decision_type=decision_type, name="Tallinn holdings", document=CORPUS
    )
    scenario = scenario_services.scenario_create(
        actor=owner, decision_type=decision_type, corpus=corpus, name=SCENARIO,
        principal="lena", roles=["loans_librarian"], purpose="interlibrary_loan",
        entity=ENTITY, decision_date=dt.date(2026, 11, 2), token_budget=400,
        expected_slots={"holding_confirmed": "supported", "agreement_in_force": "unknown"},
    )  # fmt: skip
    _publish_first(decision_type, owner, reviewer, devices)
    _record_a_loan(decision_type, owner, scenario)
    draft = services.version_start_draft(actor=owner, decision_type=decision_type)
    services.accepted_class_add(
        actor=owner, proposition=draft.propositions.get(key="agreement_in_force"),
        expected_lock_version=draft.lock_version, class_key="librarian_email",
    )  # fmt: skip
    draft.refresh_from_db()
    return draft


def _publish_first(decision_type, owner, reviewer, devices):
    from publishing import review

    first = decision_type.versions.get(number=1)
    first = review.version_submit(
        actor=owner, version=first, expected_lock_version=first.lock_version
    )
    report = review.report_ensure(first)
    devices.approve(actor=reviewer, version=first, report_sha256=report.sha256)
    first.refresh_from_db()
    devices.publish(actor=owner, version=first)


def _record_a_loan(decision_type, owner, scenario):
    from compiler import compile_input
    from compiler_trust import compile_input_from_bundle, make_receipt, verify_bundle
    from publishing import receipts, signing, tokens

    verified = verify_bundle(
        tokens.latest_bundle(decision_type).data, signing.trusted_public_keys()
    )
    document = compile_input_from_bundle(
        verified, {"request": scenario.request_document(), **CORPUS}
    )
    receipt = make_receipt(
        document, compile_input(document), bundle_sha256=verified.sha256, decision_id=DECISION
    )
    token, secret = tokens.token_create(
        actor=owner, name="loans desk", decision_types=[decision_type]
    )
    (outcome,) = receipts.receipts_ingest(
        token=tokens.authenticate(secret), receipts=[receipt.to_json()]
    )
    assert outcome.status == receipts.ACCEPTED


class _Printed(HTMLParser):
    """Each text node of a page with whether a `<bdi>` encloses it (a page's <title> cannot
    hold elements: left out)."""

    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
            "source", "track", "wbr"}  # fmt: skip

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.open: list[str] = []
        self.texts: list[tuple[str, bool]] = []

    def handle_starttag(self, tag, attrs):
        if tag not in self.VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if tag in self.open:
            while self.open.pop() != tag:
                pass

    def handle_data(self, data):
        if "title" not in self.open and "script" not in self.open:
            self.texts.append((data, "bdi" in self.open))


def printed(page: str, marker: str) -> list[tuple[str, bool]]:
    """The text nodes holding (the start of) `marker`, each with whether it is isolated."""
    parser = _Printed()
    parser.feed(page)
    head = marker.split(OVERRIDE)[0] + OVERRIDE
    return [(text, isolated) for text, isolated in parser.texts if head in text]


def assert_isolated(page: str, marker: str, *, at_least: int = 1) -> None:
    assert "<script>alert(" not in page, "a supplied string reached the page unescaped"
    found = printed(page, marker)
    assert len(found) >= at_least, f"{marker!r} printed {len(found)} time(s)"
    raw = [text for text, isolated in found if not isolated]
    assert raw == [], f"{marker!r} printed outside <bdi>: {raw}"


def test_the_replay_of_recorded_decisions_isolates_the_decision_id(loans, client, owner):
    from publishing.replay import replay_start

    replay_start(actor=owner, version=loans)  # the test settings run tasks at once
    client.force_login(owner)
    page = client.get(f"/types/{CONTRACT.key}/v2/impact/").content.decode()
    section = page[page.index('<section id="recorded-decisions"') :]
    section = section[: section.index("</section>") + len("</section>")]
    assert "1 would change" in section
    # The decision's heading, its slot change and the email it would now admit.
    assert_isolated(section, DECISION, at_least=3)
    assert_isolated(section, EMAIL_ID)


def test_the_impact_report_isolates_scenario_names_and_candidate_ids(loans, client, owner):
    client.force_login(owner)
    url = f"/types/{CONTRACT.key}/v2/impact/"
    page = client.get(url).content.decode()
    # The summary, the failed expectation, the widening and the headline; then each
    # compile's slot change and admitted email, said as the scenario's list is opened.
    assert_isolated(page, SCENARIO, at_least=3)
    assert_isolated(page, EMAIL_ID)
    compiles = client.get(url + "?part=compiles&page=1&compiles=1", headers={"HX-Request": "true"})
    assert_isolated(compiles.content.decode(), SCENARIO, at_least=5)
    assert_isolated(compiles.content.decode(), EMAIL_ID, at_least=5)


def test_every_compile_of_a_scenario_is_said_when_its_reader_opens_it(loans, client, owner):
    client.force_login(owner)
    url = f"/types/{CONTRACT.key}/v2/impact/"
    page = client.get(url).content.decode()
    # The list waits behind a link, and htmx's request as it opens.
    assert '<ul class="flips">' not in page
    assert 'href="?page=1&amp;compiles=1#compiles-1"' in page
    assert 'hx-get="?part=compiles&amp;page=1&amp;compiles=1"' in page

    opened = client.get(url + "?page=1&compiles=1").content.decode()
    assert opened.count('<ul class="flips">') == 1
    assert '<details class="every-compile" id="compiles-1" open>' in opened
    part = client.get(url + "?part=compiles&page=1&compiles=1", headers={"HX-Request": "true"})
    text = part.content.decode()
    assert part.status_code == 200 and "<h1>" not in text and 'class="scenario"' not in text
    assert text.count('<ul class="flips">') == 1
    assert client.get(url + "?compiles=x").status_code == 400


def test_the_review_page_isolates_them(loans, client, owner, reviewer):
    from publishing import review

    loans.refresh_from_db()
    review.version_submit(actor=owner, version=loans, expected_lock_version=loans.lock_version)
    review.report_ensure(loans)
    client.force_login(reviewer)  # the approve form: the headline and each widening
    page = client.get(f"/types/{CONTRACT.key}/v2/review/").content.decode()
    assert 'name="acknowledged_widenings"' in page
    assert_isolated(page, EMAIL_ID)


def test_a_runs_pages_isolate_them(loans, client, owner):
    from scenarios import services as scenario_services
    from scenarios.models import ScenarioResult

    run = scenario_services.run_start(actor=owner, version=loans)
    client.force_login(owner)
    page = client.get(f"/suite/{CONTRACT.key}/runs/{run.pk}/").content.decode()
    assert_isolated(page, SCENARIO)
    base = ScenarioResult.objects.get(run=run, perturbation="")
    page = client.get(f"/suite/{CONTRACT.key}/runs/{run.pk}/results/{base.pk}/").content.decode()
    assert_isolated(page, SCENARIO)
    assert_isolated(page, EMAIL_ID)
