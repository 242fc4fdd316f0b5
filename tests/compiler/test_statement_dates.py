"""A signature's date must fall within its key's life: never before the key was registered
(the key set's `valid_from`), never in the future beyond the clock skew a signer may have.
`verify_bundle` checks both, `verify-bundle` with the clock of the machine it runs on.

The domain: a hospital pharmacy's generic-substitution rule, published by the formulary
pharmacist (ines) and approved by the ward's clinical pharmacist (tomas)."""

from __future__ import annotations

import datetime as dt
import io

import pytest
from pharmacy_bundle import INES, PUBLISHED, REGISTERED, TOMAS, TYPE, bundle, keys

from compiler_tools import _cli as cli
from compiler_trust import (
    MAX_CLOCK_SKEW,
    BundleInvalid,
    Problem,
    key_id,
    key_set_json,
    parse_key_set,
    public_key_pem,
    signing_date_problem,
    verify_bundle,
)


def _iso(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).replace(microsecond=0).isoformat()


# --------------------------------------------------------------------------- the library


def test_an_approval_dated_before_its_key_was_registered_is_refused():
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle(bundle(approved_at="2026-03-09T23:59:59+00:00"), keys())
    error = caught.value
    assert error.problem is Problem.DATED
    assert "signatures[1] by 'tomas' (approver" in error.reason
    assert "dated 2026-03-09T23:59:59+00:00, before key " + key_id(TOMAS) in error.reason
    assert f"registered {REGISTERED}" in error.reason


def test_a_statement_dated_the_second_its_key_was_registered_is_accepted():
    verified = verify_bundle(bundle(approved_at=REGISTERED), keys())
    assert list(verified.manifest.approver_names) == ["tomas"]


def test_a_key_set_without_registration_dates_does_not_check_them():
    verify_bundle(bundle(approved_at="2020-01-01T00:00:00+00:00"), keys(valid_from=None))


def test_a_statement_dated_in_the_future_beyond_the_skew_is_refused():
    now = dt.datetime(2026, 4, 1, 12, 0, tzinfo=dt.UTC)
    late = _iso(now + MAX_CLOCK_SKEW + dt.timedelta(seconds=1))
    with pytest.raises(BundleInvalid) as caught:
        verify_bundle(bundle(approved_at=late), keys(), now=now)
    assert caught.value.problem is Problem.DATED
    assert f"dated {late}, in the future: later than now (2026-04-01T12:00:00+00:00)" in (
        caught.value.reason
    )
    assert "5 minutes" in caught.value.reason


def test_a_statement_a_little_ahead_of_the_verifiers_clock_is_accepted():
    now = dt.datetime(2026, 4, 1, 12, 0, tzinfo=dt.UTC)
    verify_bundle(bundle(approved_at=_iso(now + MAX_CLOCK_SKEW)), keys(), now=now)


def test_signing_date_problem_names_nothing_for_a_date_within_the_keys_life():
    assert (
        signing_date_problem(
            PUBLISHED,
            key_id=key_id(TOMAS),
            valid_from="2026-03-10T09:00:00.750000+00:00",
            now=dt.datetime(2026, 4, 2, tzinfo=dt.UTC),
        )
        is None
    )


def test_a_key_set_carries_the_registration_date_and_refuses_a_bad_one():
    entry = {"person": "tomas", "roles": ["approve"], "origin": "cli",
             "valid_from": REGISTERED, "public_key": public_key_pem(TOMAS)}  # fmt: skip
    parsed = parse_key_set(key_set_json([entry]))
    assert parsed[key_id(TOMAS)].valid_from == REGISTERED
    with pytest.raises(ValueError, match=r"keys\[0\]\.valid_from: an ISO 8601"):
        parse_key_set(key_set_json([{**entry, "valid_from": "last spring"}]))


# --------------------------------------------------------------------------- the command


def _verify(tmp_path, data: bytes) -> tuple[int, str]:
    entries = [
        {"person": "ines", "roles": ["publish"], "origin": "cli", "valid_from": REGISTERED,
         "publish_types": [TYPE], "public_key": public_key_pem(INES)},
        {"person": "tomas", "roles": ["approve"], "origin": "cli", "valid_from": REGISTERED,
         "approve_types": [TYPE], "public_key": public_key_pem(TOMAS)},
    ]  # fmt: skip
    (tmp_path / "keys.json").write_bytes(key_set_json(entries))
    (tmp_path / "bundle.json").write_bytes(data)
    out, err = io.StringIO(), io.StringIO()
    code = cli.main(
        ["verify-bundle", str(tmp_path / "bundle.json"), "--public-key", str(tmp_path)],
        stdout=out,
        stderr=err,
    )
    return code, out.getvalue() + err.getvalue()


def test_verify_bundle_refuses_an_approval_dated_before_its_key(tmp_path):
    code, said = _verify(tmp_path, bundle(approved_at="2026-02-01T08:00:00+00:00"))
    assert code == 1
    assert "invalid: badly dated: signatures[1] by 'tomas'" in said
    assert f"registered {REGISTERED}" in said


def test_verify_bundle_refuses_a_statement_from_the_future_by_its_own_clock(tmp_path):
    ahead = _iso(dt.datetime.now(dt.UTC) + dt.timedelta(days=2))
    code, said = _verify(tmp_path, bundle(approved_at=ahead))
    assert code == 1 and f"dated {ahead}, in the future" in said


def test_verify_bundle_accepts_statements_within_the_keys_life(tmp_path):
    code, said = _verify(tmp_path, bundle())
    assert code == 0, said
    assert "valid: pharmacy.generic_substitution version 3" in said
