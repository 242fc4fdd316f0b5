"""Pages and API answers travel gzipped and decompress to what was asked; the answer that shows a
new service token stays plain; the heavy read-only pages (a published bundle, a ready impact
report, a finished run) answer a repeat with 304, and a new ETag as soon as what they show,
who asks or what that person may do changes."""

from __future__ import annotations

import gzip
import re

import pytest
from django.test import Client
from django.urls import reverse

from contracts import roles, services
from publishing import tokens
from scenarios import services as scenario_services

pytestmark = pytest.mark.django_db

GZIP = {"Accept-Encoding": "gzip, deflate, br"}
# What differs between two renderings of the same page: the masked CSRF token, the CSP nonce.
PER_REQUEST = re.compile(rb"\"[A-Za-z0-9_\-+/=]{20,}\"")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def version_url(version, name: str) -> str:
    return reverse(name, kwargs={"key": version.decision_type.key, "number": version.number})


@pytest.fixture
def finished_run(published, owner):
    return scenario_services.run_start(actor=owner, version=published.version, background=False)


def etag_of(client: Client, url: str) -> str:
    """The page's ETag once the client holds its CSRF cookie (the first answer sets it)."""
    client.get(url)
    response = client.get(url)
    assert response.status_code == 200
    return response["ETag"]


# --------------------------------------------------------------------------- compression


def test_a_gzipped_bundle_and_api_answer_decompress_to_the_plain_ones(published, owner):
    client = signed_in(owner)
    url = version_url(published.version, "version_bundle")
    plain, zipped = client.get(url), client.get(url, headers=GZIP)
    assert "Content-Encoding" not in plain
    assert zipped["Content-Encoding"] == "gzip"
    assert "Accept-Encoding" in zipped["Vary"]
    assert len(zipped.content) < len(plain.content)
    assert gzip.decompress(zipped.content) == plain.content == bytes(published.data)

    _token, secret = tokens.token_create(
        actor=owner, name="retrieval", decision_types=[published.decision_type]
    )
    api = Client(headers={"Authorization": f"Bearer {secret}"})
    path = f"/api/v1/types/{published.decision_type.key}/bundle"
    plain, zipped = api.get(path), api.get(path, headers=GZIP)
    assert zipped["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.content) == plain.content == bytes(published.data)


def test_a_gzipped_page_decompresses_to_the_page(published, owner):
    client = signed_in(owner)
    url = version_url(published.version, "version_impact")
    plain, zipped = client.get(url), client.get(url, headers=GZIP)
    assert zipped["Content-Encoding"] == "gzip"
    page = gzip.decompress(zipped.content)
    assert b"csrfmiddlewaretoken" in page
    assert PER_REQUEST.sub(b"", page) == PER_REQUEST.sub(b"", plain.content)


def test_two_gzipped_answers_of_one_page_differ_in_length(published, owner):
    """BREACH reads secrets from lengths: Django pads each gzipped answer at random."""
    client = signed_in(owner)
    url = version_url(published.version, "version_bundle")
    lengths = {len(client.get(url, headers=GZIP).content) for _ in range(8)}
    assert len(lengths) > 1


def test_the_answer_showing_a_new_token_secret_is_not_compressed(published, owner):
    client = signed_in(owner)
    listing = client.get(reverse("token_list"), headers=GZIP)
    assert listing["Content-Encoding"] == "gzip"  # the page without a secret is

    created = client.post(
        reverse("token_list"),
        {"name": "retrieval-eu", "decision_types": [published.decision_type.pk]},
        headers=GZIP,
    )
    assert created.status_code == 200
    assert "no-store" in created["Cache-Control"]
    assert "Content-Encoding" not in created
    secret = re.search(tokens.SECRET_PREFIX.encode() + rb"[A-Za-z0-9_\-]+", created.content)
    assert secret is not None and tokens.authenticate(secret.group().decode()) is not None


# --------------------------------------------------------------------------- ETags


@pytest.mark.parametrize("page", ["bundle", "impact", "run"])
def test_a_repeat_with_the_etag_is_answered_304(page, published, finished_run, owner):
    url = {
        "bundle": version_url(published.version, "version_bundle"),
        "impact": version_url(published.version, "version_impact"),
        "run": reverse("scenarios:run_detail", args=[published.decision_type.key, finished_run.pk]),
    }[page]
    client = signed_in(owner)
    etag = etag_of(client, url)
    again = client.get(url, headers={"If-None-Match": etag})
    assert again.status_code == 304
    assert again.content == b""
    assert again["ETag"] == etag
    assert "private" in again["Cache-Control"] and "no-cache" in again["Cache-Control"]
    # The cached page keeps the policy whose nonce it carries.
    assert "Content-Security-Policy" not in again
    # gzip makes the ETag weak; the weak form names the same page.
    zipped = client.get(url, headers=GZIP)
    assert zipped["ETag"] == "W/" + etag
    assert client.get(url, headers={"If-None-Match": zipped["ETag"]}).status_code == 304


def test_the_bundles_etag_is_its_sha256(published, owner):
    response = signed_in(owner).get(version_url(published.version, "version_bundle"))
    assert response["ETag"] == f'"{published.sha256}"'


def test_a_change_on_the_page_gives_it_a_new_etag(published, owner, viewer):
    url = version_url(published.version, "version_impact")
    client = signed_in(owner)
    before = etag_of(client, url)
    # An audited change: a person granted a role shows on the page's type.
    services.access_grant(
        actor=owner, decision_type=published.decision_type, user=viewer, role=roles.Role.REVIEWER
    )
    response = client.get(url, headers={"If-None-Match": before})
    assert response.status_code == 200
    assert response["ETag"] != before


def test_a_finished_run_is_conditional_and_a_running_one_is_not(published, owner):
    from scenarios.models import SuiteRun
    from scenarios.run_state import RunStatus

    run = scenario_services.run_start(actor=owner, version=published.version, background=False)
    url = reverse("scenarios:run_detail", args=[published.decision_type.key, run.pk])
    client = signed_in(owner)
    etag = etag_of(client, url)
    SuiteRun.objects.filter(pk=run.pk).update(status=RunStatus.RUNNING)
    response = client.get(url, headers={"If-None-Match": etag})
    assert response.status_code == 200
    assert "ETag" not in response


def test_another_person_never_gets_a_304_for_someone_elses_page(published, owner, viewer):
    url = version_url(published.version, "version_impact")
    owners_etag = etag_of(signed_in(owner), url)
    response = signed_in(viewer).get(url, headers={"If-None-Match": owners_etag})
    assert response.status_code == 200
    assert response["ETag"] != owners_etag


def test_a_person_who_lost_access_gets_404_not_304(published, owner, viewer):
    url = version_url(published.version, "version_impact")
    client = signed_in(viewer)
    etag = etag_of(client, url)
    services.access_revoke(actor=owner, decision_type=published.decision_type, user=viewer)
    assert client.get(url, headers={"If-None-Match": etag}).status_code == 404
    bundle = version_url(published.version, "version_bundle")
    assert client.get(bundle, headers={"If-None-Match": f'"{published.sha256}"'}).status_code == 404


def test_signing_in_again_gives_a_new_etag(published, owner):
    """The cached page's forms carry tokens of the old CSRF secret, which signing in rotates."""
    url = version_url(published.version, "version_impact")
    client = signed_in(owner)
    etag = etag_of(client, url)
    client.logout()
    client.force_login(owner)
    client.cookies.pop("csrftoken", None)
    response = client.get(url, headers={"If-None-Match": etag})
    assert response.status_code == 200


def test_an_htmx_fragment_has_an_etag_of_its_own(published, finished_run, owner):
    url = reverse("scenarios:run_detail", args=[published.decision_type.key, finished_run.pk])
    client = signed_in(owner)
    page = etag_of(client, url)
    fragment = client.get(url, headers={"HX-Request": "true", "If-None-Match": page})
    assert fragment.status_code == 200
    assert fragment["ETag"] != page
    assert "HX-Request" in fragment["Vary"] and "Cookie" in fragment["Vary"]
