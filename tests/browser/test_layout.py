"""Hostile user text in a real browser: a 10,000-character unbroken description never widens a
page, a key is never broken mid-word, and a right-to-left override stays inside its string."""

from __future__ import annotations

import io

import pytest

pytestmark = pytest.mark.browser

VIEWPORT = {"width": 1280, "height": 900}
LONG = "x" * 10_000
RLO = "\u202e"
# The longest key the catalogue allows (64 characters), accepted by the editor's propositions.
LONG_KEY = "case_note" + "_recorded" * 6 + "s"
# Each page that shows user text, as a path built from the workspace.
PAGES = {
    "catalogue": lambda w: "/source-classes/",
    "dashboard": lambda w: "/",
    "editor": lambda w: f"/types/{w['key']}/v1/",
    "corpus": lambda w: f"/suite/{w['key']}/corpora/{w['corpus']}/",
    "suite": lambda w: f"/suite/{w['key']}/",
    "scenario": lambda w: f"/suite/{w['key']}/scenarios/{w['scenario']}/",
    "flip matrix": lambda w: f"/suite/{w['key']}/runs/{w['run']}/",
    "coverage": lambda w: f"/suite/{w['key']}/runs/{w['run']}/coverage/",
    "packet": lambda w: f"/suite/{w['key']}/runs/{w['run']}/results/{w['base']}/",
    "diff": lambda w: f"/suite/{w['key']}/runs/{w['run']}/results/{w['variant']}/diff/",
    "review": lambda w: f"/types/{w['key']}/v1/review/",
    "impact": lambda w: f"/types/{w['key']}/v1/impact/",
}


def _workspace(atlas, owner, text: str, long_key: str | None = None):
    """The demo suite with `text` put in every free-text field a user can fill, and a run."""
    from contracts import demo as contracts_demo
    from contracts import selectors
    from contracts.models import Proposition, SourceClass
    from scenarios import demo, services
    from scenarios.models import Corpus, CorpusCandidate, Scenario

    contracts_demo.create_contract(contracts_demo.REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    SourceClass.objects.update(label=text[:120], description=text)
    atlas.title, atlas.description = text[:200], text
    atlas.save()
    Proposition.objects.filter(version__decision_type=atlas).update(description=text)
    corpus = Corpus.objects.filter(decision_type=atlas).first()
    Corpus.objects.filter(pk=corpus.pk).update(name=text[:120], description=text)
    candidate = CorpusCandidate.objects.filter(corpus=corpus).first()
    candidate.data = candidate.data | {"content": text}
    candidate.save()
    Scenario.objects.filter(decision_type=atlas).update(description=text)
    scenario = Scenario.objects.filter(decision_type=atlas).first()
    Scenario.objects.filter(pk=scenario.pk).update(name=text[:160])
    if long_key:
        SourceClass.objects.filter(key="case_note").update(key=long_key)
        first = Proposition.objects.filter(version__decision_type=atlas).first()
        first.key, first.accepted_classes = long_key, [*first.accepted_classes, long_key]
        first.save()
    version = selectors.current_version(decision_type=atlas)
    run = services.run_start(actor=owner, version=version)
    results = run.results.filter(scenario=scenario)
    return {
        "key": atlas.key,
        "corpus": corpus.pk,
        "scenario": scenario.pk,
        "run": run.pk,
        "base": results.get(perturbation="").pk,
        "variant": results.exclude(perturbation="").first().pk,
    }


@pytest.fixture
def page(new_page, sign_in, owner):
    """A browser page at a laptop's width, signed in as the Atlas type's owner."""
    page = new_page(viewport=VIEWPORT)
    sign_in(page, "olivia")
    return page


def _findings(page, base_url: str, workspace, script: str, pages=PAGES, arg=None) -> dict:
    """What `script` finds on each page; pages where it finds nothing are left out."""
    found = {}
    for name, path in pages.items():
        response = page.goto(base_url + path(workspace))
        assert response.status == 200, name
        if result := page.evaluate(script, arg):
            found[name] = result
    return found


def test_a_10000_character_word_never_widens_a_page(live_server, page, atlas, owner):
    workspace = _workspace(atlas, owner, LONG)
    widths = {}
    for name, path in PAGES.items():
        response = page.goto(live_server.url + path(workspace))
        assert response.status == 200, name
        widths[name] = page.evaluate("document.documentElement.scrollWidth")
    assert widths == dict.fromkeys(PAGES, VIEWPORT["width"])


def test_keys_are_never_broken_mid_word(live_server, page, atlas, owner):
    assert len(LONG_KEY) == 64
    workspace = _workspace(atlas, owner, LONG, long_key=LONG_KEY)
    for name in ("catalogue", "editor", "flip matrix"):
        page.goto(live_server.url + PAGES[name](workspace))
        # A key shown on two lines is taller than one line of its own text.
        broken = page.evaluate(
            """() => [...document.querySelectorAll('code, .class-chip')]
                .filter(el => !el.closest('pre') && !el.matches('.hash'))
                .filter(el => el.getClientRects().length > 1)
                .map(el => el.textContent)"""
        )
        assert broken == [], name
        # A key cut short by an ellipsis keeps its full text in a tooltip.
        clipped = page.evaluate(
            """() => [...document.querySelectorAll('code, .class-chip')]
                .filter(el => el.scrollWidth > el.clientWidth + 1)
                .filter(el => !(el.getAttribute('title') || '').includes(el.textContent.trim()))
                .map(el => el.textContent)"""
        )
        assert clipped == [], name


def test_a_right_to_left_override_stays_inside_the_user_string(live_server, page, atlas, owner):
    workspace = _workspace(atlas, owner, f"{RLO}evil text")
    # Every rendered string holding the override sits in an isolate (<bdi> or dir=…), so the
    # text and buttons after it keep their order.
    leaks = _findings(
        page,
        live_server.url,
        workspace,
        """(rlo) => {
            const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
            const out = [];
            for (let node = walker.nextNode(); node; node = walker.nextNode()) {
                if (!node.data.includes(rlo)) continue;
                const parent = node.parentElement;
                if (parent.closest('script, style, textarea, option, title')) continue;
                if (!parent.closest('bdi, [dir]')) out.push(parent.outerHTML.slice(0, 80));
            }
            return out;
        }""",
        arg=RLO,
    )
    assert leaks == {}


@pytest.fixture
def five_propositions(atlas, owner):
    """The demo suite, run against an Atlas draft with a fifth proposition."""
    from contracts import selectors
    from contracts import services as contract_services
    from contracts.demo import REFUND_DESK, create_contract
    from scenarios import demo, services

    create_contract(REFUND_DESK, owner=owner)
    demo.load(io.StringIO(), queue_runs=False)
    version = selectors.current_version(decision_type=atlas)
    contract_services.proposition_add(
        actor=owner,
        version=version,
        expected_lock_version=version.lock_version,
        key="covenant_compliance",
        accepted_classes=["facility_record"],
    )
    version.refresh_from_db()
    run = services.run_start(actor=owner, version=version)
    assert version.propositions.count() == 5
    return run


def test_the_flip_matrix_result_column_is_visible_with_five_propositions(
    live_server, page, five_propositions
):
    run = five_propositions
    page.goto(f"{live_server.url}/suite/{run.decision_type.key}/runs/{run.pk}/")
    hidden = page.evaluate(
        """() => {
            const wrap = document.querySelector('.matrix-wrap').getBoundingClientRect();
            return [...document.querySelectorAll('table.matrix tr > :last-child')]
                .filter(cell => cell.getBoundingClientRect().right > wrap.right + 1)
                .map(cell => cell.textContent.trim());
        }"""
    )
    assert page.locator("table.matrix thead th").last.inner_text() == "Result"
    assert hidden == []


def test_a_flipped_slot_is_not_painted_as_a_failure(live_server, page, five_propositions):
    run = five_propositions
    variants = run.results.exclude(perturbation="")
    variant = next(r for r in variants if r.flips and r.flips.get("slots"))
    key = run.decision_type.key
    page.goto(f"{live_server.url}/suite/{key}/runs/{run.pk}/results/{variant.pk}/diff/")
    chip = page.locator("tr.flipped th .badge").first
    assert chip.inner_text() == "flipped"
    failure_colours = page.evaluate(
        """() => {
            const probe = document.createElement('span');
            probe.className = 'failed-text';
            document.body.append(probe);
            return [getComputedStyle(probe).color];
        }"""
    )
    colour = chip.evaluate("el => getComputedStyle(el).color")
    assert colour not in failure_colours


def test_headings_never_skip_a_level(live_server, page, atlas, owner):
    workspace = _workspace(atlas, owner, "Plain text")
    pages = PAGES | {
        "three-way": lambda w: f"/suite/{w['key']}/scenarios/{w['scenario']}/compare/",
    }
    skips = _findings(
        page,
        live_server.url,
        workspace,
        """() => [...document.querySelectorAll('h1,h2,h3,h4,h5,h6')]
            .map(h => +h.tagName[1])
            .filter((level, i, levels) => level > (i ? levels[i - 1] : 0) + 1)""",
        pages=pages,
    )
    assert skips == {}
