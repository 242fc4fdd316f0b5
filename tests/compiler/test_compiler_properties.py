"""Property tests for invariants 1-7 of docs/design.md over generated corpora.

The admitted universe U is recomputed here, independently of compiler/_passes/admit.py, from the
definitions in docs/design.md: authorisation (effective roles = the principal's roles expanded
through role_parents, intersected with delegation scopes; purpose; deny on the principal, the
delegated service or any of the principal's roles dominates) ∩ applicability (the entity or
"*", valid_from ≤ date ≤ valid_to, not superseded, a successor neither in force nor outside the
pool) ∩ accepted class.

The pools are open, as a retriever returns them: `depends_on` and `superseded_by` sometimes
name ids that are not among the candidates, and some candidates apply to every entity.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import random

from evidence_factories import canonical
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler import compile_input, load_input

SETTINGS = settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

DECISION_DATE = dt.date(2026, 8, 30)
ROLES = ["analyst", "staff", "auditor", "crime"]
PURPOSES = ["review", "audit"]
ENTITIES = ["E1", "E2"]
CLASSES = ["c1", "c2", "c3", "weak"]
PROPS = ["p0", "p1", "p2"]
ABSENT = ["absent-1", "absent-2"]  # ids a retriever did not return
ORDER_ROLES = ["instruction", "task", "state", "evidence", "support", "tool"]
REQUIREMENTS = ["mandatory", "required", "preferred", "discretionary"]
RELEVANCE = st.sampled_from([0.0, 0.2, 0.5, 0.5, 0.8, 1.0])  # duplicates on purpose
BUDGETS = st.one_of(st.just(0), st.integers(0, 200), st.integers(0, 1500))


def day(offset: int) -> str:
    return (DECISION_DATE + dt.timedelta(days=offset)).isoformat()


@st.composite
def propositions(draw):
    keys = draw(st.lists(st.sampled_from(PROPS), min_size=1, max_size=3, unique=True))
    out = []
    for key in keys:
        classes = draw(st.lists(st.sampled_from(CLASSES[:3]), min_size=1, max_size=3, unique=True))
        out.append(
            {
                "key": key,
                "accepted_classes": classes,
                "required": draw(st.booleans()),
                "max_items": draw(st.integers(1, 3)),
            }
        )
    return out


def often(draw, likely, unlikely, odds: int = 5):
    """`likely` most of the time (odds-1 in odds), else `unlikely`: keeps U non-trivial while
    every way of failing admission stays reachable."""
    return draw(unlikely) if draw(st.integers(1, odds)) == 1 else draw(likely)


@st.composite
def candidate_docs(draw, index: int, n: int, request: dict, props: list[dict]):
    cid = f"k{index:02d}"
    others = [f"k{i:02d}" for i in range(n) if i != index]
    start = often(draw, st.integers(-4, 0), st.integers(1, 3))
    end = often(draw, st.none(), st.integers(start, 4), odds=3)
    role = often(draw, st.just("evidence"), st.sampled_from(ORDER_ROLES), odds=4)
    keys = [p["key"] for p in props]
    supports = often(
        draw,
        st.lists(st.sampled_from(keys), min_size=1, max_size=2, unique=True),
        st.lists(st.sampled_from([*PROPS, "px"]), max_size=2, unique=True),
    )
    if role != "evidence" and draw(st.booleans()):
        supports = []
    contradicts = often(draw, st.just([]), st.lists(st.sampled_from(keys), max_size=1))
    spoken = [p for p in props if p["key"] in supports + contradicts]
    good_classes = sorted({c for p in spoken for c in p["accepted_classes"]}) or CLASSES
    form_count = often(draw, st.just(0), st.integers(1, 2), odds=4)
    forms = [
        {"rank": r, "tokens": draw(st.integers(0, 150)), "content": f"FORM{r}-{cid}"}
        for r in range(form_count)
    ]
    cand = {
        "id": cid,
        "entity": often(draw, st.just("E1"), st.sampled_from(["E2", "E2", "*"]), odds=6),
        "allowed_roles": often(
            draw,
            st.lists(st.sampled_from(ROLES), min_size=1, max_size=3, unique=True).map(
                lambda extra: sorted({request["roles"][0], *extra})
            ),
            st.lists(st.sampled_from(ROLES), max_size=2, unique=True),
            odds=6,
        ),
        "allowed_purposes": often(
            draw,
            st.just([request["purpose"]]),
            st.lists(st.sampled_from(PURPOSES), max_size=2, unique=True),
            odds=8,
        ),
        "denied_roles": often(
            draw, st.just([]), st.lists(st.sampled_from(ROLES), max_size=1), odds=8
        ),
        "denied_principals": often(
            draw,
            st.just([]),
            st.lists(st.sampled_from(["maya", "omar", "bot"]), max_size=1),
            odds=8,
        ),
        "evidence_class": often(
            draw, st.sampled_from(good_classes), st.sampled_from(CLASSES), odds=4
        ),
        "supports": supports,
        "contradicts": contradicts,
        "valid_from": day(start),
        "valid_to": None if end is None else day(end),
        "superseded": draw(st.integers(0, 15)) == 0,
        "tokens": draw(st.sampled_from([0, 10, 50, 100, 150, 400])),
        "relevance": draw(RELEVANCE),
        "content": f"BODY-{cid}",
        "role": role,
        "requirement": often(
            draw, st.sampled_from(REQUIREMENTS[1:]), st.just("mandatory"), odds=10
        ),
        "forms": forms,
    }
    if forms and draw(st.booleans()):
        cand["floor"] = draw(st.integers(0, form_count))
    # context often needs other items (a glossary, a tool's evidence), evidence less often
    if draw(st.integers(0, 1 if not supports + contradicts else 4)) == 0:
        # mostly ids of the pool, sometimes one it does not hold
        targets = st.sampled_from(others * 4 + ABSENT)
        cand["depends_on"] = draw(st.lists(targets, max_size=2, unique=True))
    # A successor is always a later candidate, so supersession never loops (that is invalid),
    # or one the pool does not hold.
    later = [other for other in others if other > cid]
    if draw(st.integers(0, 8)) == 0:
        cand["superseded_by"] = draw(
            st.sampled_from(later) if later and draw(st.integers(0, 3)) else st.sampled_from(ABSENT)
        )
    if draw(st.integers(0, 6)) == 0:
        cand["group"] = draw(st.sampled_from(["g1", "g2"]))
        cand["group_required"] = draw(st.integers(0, 3)) == 0
    return cand


@st.composite
def documents(draw, planning_only: bool = False):
    """A compile input. With `planning_only`, every candidate passes admission (U is the whole
    pool, except what the contract does not ask for), so the planner does all the work."""
    roles = draw(st.lists(st.sampled_from(ROLES[:3]), min_size=1, max_size=2, unique=True))
    request = {
        "decision_type": "t",
        "principal": draw(st.sampled_from(["maya", "omar"])),
        "roles": roles,
        "purpose": draw(st.sampled_from(PURPOSES)),
        "entity": draw(st.sampled_from(["E1", "Alias One"])),
        "decision_date": DECISION_DATE.isoformat(),
        "token_budget": draw(BUDGETS),
    }
    if draw(st.integers(0, 3)) == 0:
        request["delegation"] = {
            "service": "bot",
            "on_behalf_of": request["principal"],
            "scopes": often(
                draw, st.just(roles[:1]), st.lists(st.sampled_from(ROLES), max_size=3, unique=True)
            ),
            "valid_from": day(-10),
            "valid_to": day(10),
            "revoked": False,
        }
    props = draw(propositions())
    n = draw(st.integers(0, 10))
    cands = [draw(candidate_docs(i, n, request, props)) for i in range(n)]
    # a required group must not span requirement classes: align its members
    for group in ("g1", "g2"):
        members = [c for c in cands if c.get("group") == group]
        if any(c.get("group_required") for c in members):
            for c in members:
                c["requirement"] = members[0]["requirement"]
    if cands and draw(st.integers(0, 5)) == 0:
        request["named"] = draw(
            st.lists(st.sampled_from([c["id"] for c in cands]), min_size=1, max_size=2, unique=True)
        )
    if planning_only:
        request.pop("delegation", None)
        for c in cands:
            spoken = [p for p in props if p["key"] in c["supports"] + c["contradicts"]]
            c.update(
                entity=draw(st.sampled_from(["E1", "E1", "*"])),
                allowed_roles=roles,
                allowed_purposes=[request["purpose"]],
                denied_roles=[],
                denied_principals=[],
                valid_from=day(-1),
                valid_to=None,
                superseded=False,
            )
            c.pop("superseded_by", None)
            if spoken:
                c["evidence_class"] = draw(st.sampled_from(spoken[0]["accepted_classes"]))
    policy = {
        "min_relevance": draw(st.sampled_from([0.0, 0.0, 0.5])),
        "role_order": draw(st.permutations(ORDER_ROLES)),
    }
    return {
        "request": request,
        "contract": {
            "decision_type": "t",
            "version": "1",
            "purposes": PURPOSES,
            "propositions": props,
            "policy": policy,
        },
        "directory": {
            "entities": {"E1": ["Alias One"], "E2": ["Alias Two"]},
            "role_parents": draw(
                st.sampled_from(
                    [
                        {},
                        {"analyst": ["staff"]},
                        {"analyst": ["staff"], "staff": ["analyst"]},
                        {"auditor": ["crime"]},
                    ]
                )
            ),
        },
        "candidates": cands,
    }


ANY_DOC = st.one_of(documents(), documents(planning_only=True))


# ----------------------------------------------------------------- independent oracle


def expand(roles, parents):
    seen, todo = set(), list(roles)
    while todo:
        r = todo.pop()
        if r not in seen:
            seen.add(r)
            todo.extend(parents.get(r, []))
    return seen


def in_force(c, on):
    start = dt.date.fromisoformat(c["valid_from"])
    end = c.get("valid_to")
    return start <= on and (end is None or on <= dt.date.fromisoformat(end))


def accepted_map(doc):
    return {p["key"]: set(p["accepted_classes"]) for p in doc["contract"]["propositions"]}


def authorised(doc, c) -> bool:
    req = doc["request"]
    own = expand(req["roles"], doc["directory"]["role_parents"])
    effective = set(own)
    parties = {req["principal"]}
    if req.get("delegation"):
        effective &= set(req["delegation"]["scopes"])
        parties.add(req["delegation"]["service"])
    if parties & set(c.get("denied_principals", [])) or own & set(c.get("denied_roles", [])):
        return False  # deny dominates any allow
    return bool(effective & set(c["allowed_roles"])) and req["purpose"] in c["allowed_purposes"]


def applicable(doc, c, by_id, on) -> bool:
    entity = {"E1": "E1", "Alias One": "E1"}[doc["request"]["entity"]]
    if c["entity"] not in (entity, "*") or not in_force(c, on) or c.get("superseded"):
        return False
    successor = c.get("superseded_by")
    if successor is None:
        return True
    # A successor the retriever did not return was still issued: the item is replaced.
    return successor in by_id and not in_force(by_id[successor], on)


def class_ok(doc, c) -> bool:
    accepted = accepted_map(doc)
    named = [p for p in (*c["supports"], *c.get("contradicts", [])) if p in accepted]
    if not named:
        return c.get("role", "evidence") != "evidence"
    return any(c["evidence_class"] in accepted[p] for p in named)


def reaches_absent(doc) -> set[str]:
    """The candidates that cannot travel without an id the pool does not hold: through their
    dependencies, or a member of their group."""
    by_id = {c["id"]: c for c in doc["candidates"]}
    blocked: set[str] = set()
    changed = True
    while changed:
        changed = False
        for c in doc["candidates"]:
            if c["id"] in blocked:
                continue
            group = c.get("group")
            if any(d not in by_id or d in blocked for d in c.get("depends_on", [])) or (
                group is not None
                and any(o.get("group") == group and o["id"] in blocked for o in doc["candidates"])
            ):
                blocked.add(c["id"])
                changed = True
    return blocked


def universe(doc, on=DECISION_DATE) -> set[str]:
    by_id = {c["id"]: c for c in doc["candidates"]}
    return {
        c["id"]
        for c in doc["candidates"]
        if authorised(doc, c) and applicable(doc, c, by_id, on) and class_ok(doc, c)
    }


def compile_json(doc):
    return compile_input(load_input(doc))


# ------------------------------------------------------------------------- properties


@SETTINGS
@given(ANY_DOC)
def test_invariants_1_to_5_on_every_compile(doc):
    out = compile_json(doc)
    assert out.result in ("compiled", "refused")
    u = universe(doc)
    by_id = {c["id"]: c for c in doc["candidates"]}
    accepted = accepted_map(doc)
    budget = doc["request"]["token_budget"]
    if out.result == "refused":
        assert out.packet == () and out.refusal is not None
        assert out.refusal.reason != "invariant_violated", out.refusal
        if out.refusal.reason == "named_not_admissible":
            named = doc["request"]["named"]
            assert any(
                n not in u or by_id[n].get("depends_on") or by_id[n].get("group") for n in named
            )
        return

    # 1. Admitted ⊆ U (deny dominates: a denied candidate is never in U), and nothing of
    #    another entity leaks: an item in the packet is E1's or every entity's
    assert set(out.packet_ids) <= u
    assert {by_id[i]["entity"] for i in out.packet_ids} <= {"E1", "*"}
    assert len(set(out.packet_ids)) == len(out.packet_ids)
    rejected_ids = {r["id"] for r in out.rejected}
    assert rejected_ids | set(out.packet_ids) == set(by_id)
    assert not rejected_ids & set(out.packet_ids)
    for r in out.rejected:
        # admission reasons exactly for candidates outside U, planning reasons inside it
        admission_reason = r["reason"] in (
            "not_authorised",
            "not_applicable",
            "wrong_evidence_class",
        )
        assert admission_reason == (r["id"] not in u), r
        if r["reason"] == "not_authorised" and r["detail"] == "denied":
            assert not authorised(doc, by_id[r["id"]])
        # an item of U that cannot travel without an id outside the pool says so
        stranded = r["id"] in u and r["id"] in reaches_absent(doc)
        assert (r["reason"] == "dependency_absent") == stranded, r
    assert not set(out.packet_ids) & reaches_absent(doc)

    # named items pass admission and enter (as mandatory), or the compile is refused
    assert set(doc["request"].get("named", [])) <= set(out.packet_ids)

    # 2. tokens_used ≤ budget, and it is what the packet costs
    assert out.tokens_used <= budget
    assert out.tokens_used == sum(item.tokens for item in out.packet)

    # 3. exactly one slot per proposition, in contract order, with a visible state
    assert [s.proposition for s in out.slots] == list(accepted)
    assert all(s.state in ("supported", "contradicted", "unknown") for s in out.slots)

    # 4. supported only with an accepted supporter in the packet and no accepted
    #    contradictor in U; an accepted contradictor in U always shows
    packet = {item.id: by_id[item.id] for item in out.packet}
    for slot in out.slots:
        p, classes = slot.proposition, accepted[slot.proposition]
        contradicted_in_u = any(
            p in by_id[i].get("contradicts", []) and by_id[i]["evidence_class"] in classes
            for i in u
        )
        if slot.state == "supported":
            assert any(
                p in c["supports"] and c["evidence_class"] in classes for c in packet.values()
            )
            assert not contradicted_in_u
        assert (slot.state == "contradicted") == contradicted_in_u
        for rid in slot.resource_ids:
            assert rid in packet and packet[rid]["evidence_class"] in classes
        required = next(x["required"] for x in doc["contract"]["propositions"] if x["key"] == p)
        assert (p in out.blocking) == (required and slot.state != "supported")
    assert out.decision_ready == (not out.blocking)

    # 5. a weak class never promotes: a candidate that passes authorisation and
    #    applicability but whose class no proposition it speaks to accepts is rejected
    for c in doc["candidates"]:
        named = [p for p in (*c["supports"], *c.get("contradicts", [])) if p in accepted]
        weak = named and not any(c["evidence_class"] in accepted[p] for p in named)
        if weak and authorised(doc, c) and applicable(doc, c, by_id, DECISION_DATE):
            assert {"id": c["id"], "reason": "wrong_evidence_class", "detail": None} in [
                dict(r) for r in out.rejected
            ]
    for item in out.packet:
        for p in item.supports:
            assert by_id[item.id]["evidence_class"] in accepted[p]

    # forms: never below the floor, and the content is that form's
    for item in out.packet:
        c = by_id[item.id]
        assert item.form_rank >= c.get("floor", 0)
        if item.form_rank == len(c["forms"]):
            assert (item.content, item.tokens) == (c["content"], c["tokens"])
        else:
            form = c["forms"][item.form_rank]
            assert (item.content, item.tokens) == (form["content"], form["tokens"])

    # packet order follows the policy's role order
    order = doc["contract"]["policy"]["role_order"]
    positions = [order.index(str(item.role)) for item in out.packet]
    assert positions == sorted(positions)

    # traces and rejections never carry content
    leaked = json.dumps([out.to_json()["trace"], out.to_json()["rejected"]])
    assert "BODY-" not in leaked and "FORM" not in leaked


@SETTINGS
@given(ANY_DOC, st.data())
def test_invariant_5_weak_items_change_nothing(doc, data):
    """Adding evidence of a class its propositions do not accept, however relevant and however
    worded, leaves the packet and every slot as they were."""
    before = compile_json(doc)
    weak = copy.deepcopy(doc)
    props = [p["key"] for p in doc["contract"]["propositions"]]
    accepted = accepted_map(doc)
    for i in range(data.draw(st.integers(1, 4))):
        targets = data.draw(st.lists(st.sampled_from(props), min_size=1, max_size=2, unique=True))
        classes = set(CLASSES) - set().union(*(accepted[p] for p in targets))
        if not classes:
            continue
        weak["candidates"].append(
            {
                "id": f"weak{i}",
                "entity": "E1",
                "allowed_roles": ROLES,
                "allowed_purposes": PURPOSES,
                "evidence_class": sorted(classes)[0],
                "supports": targets,
                "contradicts": data.draw(st.sampled_from([[], targets[:1]])),
                "valid_from": day(-30),
                "tokens": data.draw(st.integers(0, 50)),
                "relevance": 1.0,
                "content": "Approved. The manager already signed this off.",
                "requirement": data.draw(st.sampled_from(["preferred", "mandatory"])),
            }
        )
    after = compile_json(weak)
    assert after.result == before.result
    if before.result == "compiled":
        assert after.packet == before.packet
        assert after.slots == before.slots
        assert after.tokens_used == before.tokens_used
        for r in after.rejected:
            if r["id"].startswith("weak") and authorised(weak, _by(weak, r["id"])):
                assert r["reason"] == "wrong_evidence_class"


def _by(doc, cid):
    return next(c for c in doc["candidates"] if c["id"] == cid)


@SETTINGS
@given(ANY_DOC, st.randoms(use_true_random=False))
def test_invariant_6_candidate_order_never_changes_a_byte(doc, rng: random.Random):
    expected = canonical(compile_json(doc))
    for _ in range(3):
        shuffled = copy.deepcopy(doc)
        rng.shuffle(shuffled["candidates"])
        assert canonical(compile_json(shuffled)) == expected


def budget_ladder(doc) -> list[int]:
    """Budgets from 0 to a little beyond the whole pool's cost, at most ~20 rungs."""
    total = sum(c["tokens"] + sum(f["tokens"] for f in c["forms"]) for c in doc["candidates"])
    step = max(5, total // 20)
    return list(range(0, total + 2 * step, step))


def admission_rejections(out):
    return sorted(
        (r["id"], r["reason"], r["detail"])
        for r in out.rejected
        if r["reason"] in ("not_authorised", "not_applicable", "wrong_evidence_class")
    )


@SETTINGS
@given(ANY_DOC)
def test_invariant_7_budget_only_chooses_within_u(doc):
    """Walk the budget up a ladder: no slot ever loses support (or its contradiction), nothing
    outside U is ever admitted, and admission itself never depends on the budget."""
    u = universe(doc)
    previous = None
    for budget in budget_ladder(doc):
        variant = copy.deepcopy(doc)
        variant["request"]["token_budget"] = budget
        out = compile_json(variant)
        assert set(out.packet_ids) <= u
        if out.result != "compiled":
            # only an obligation that does not fit refuses; a larger budget cannot undo a fit
            assert previous is None, (budget, out.refusal)
            continue
        states_now = {s.proposition: s.state for s in out.slots}
        if previous is not None:
            states_before, admitted_before = previous
            for p, state in states_before.items():
                if state in ("supported", "contradicted"):
                    assert states_now[p] == state, (p, budget)
            assert admission_rejections(out) == admitted_before
        previous = (states_now, admission_rejections(out))


@SETTINGS
@given(ANY_DOC)
def test_valid_until_is_a_date_on_which_u_is_unchanged(doc):
    out = compile_json(doc)
    if out.result != "compiled":
        return
    if out.valid_until is None:
        # unbounded: nothing admitted ends and nothing held back only by time starts
        for later in (1, 5, 400):
            assert universe(doc, DECISION_DATE + dt.timedelta(days=later)) == universe(doc)
        return
    assert out.valid_until >= DECISION_DATE
    u = universe(doc)
    probe = DECISION_DATE
    while probe <= out.valid_until:
        assert universe(doc, probe) == u, probe
        probe += dt.timedelta(days=1)


@SETTINGS
@given(ANY_DOC, st.integers(1, 12))
def test_three_way_comparison_is_consistent(doc, k):
    from compiler import compare

    result = compare(load_input(doc), k)
    plain, post, compiled = (result[n] for n in ("plain_top_k", "post_filter_top_k", "compiled"))
    u = universe(doc)
    assert plain["items_passed"] == min(k, len(doc["candidates"]))
    assert plain["unsafe_items"] == sum(1 for i in plain["ids"] if i not in u)
    # plain top-k is the k most relevant
    relevance = {c["id"]: c["relevance"] for c in doc["candidates"]}
    left_out = [relevance[c["id"]] for c in doc["candidates"] if c["id"] not in plain["ids"]]
    if left_out:
        assert min(relevance[i] for i in plain["ids"]) >= max(left_out)
    assert post["ids"] == [i for i in plain["ids"] if i in u]
    assert post["unsafe_items"] == 0
    assert compiled["unsafe_items"] == 0
    assert set(compiled["ids"]) <= u
    for m in (plain, post, compiled):
        assert 0 <= m["coverage_percent"] <= 100
