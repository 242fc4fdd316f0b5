"""Single sign-on in Chromium against a real OpenID provider (django-oauth-toolkit in its own
process, tests/identity_provider): roles come from the provider's groups at every sign-in, a
group taken away there takes the role away here, a person no group maps is refused with a page
naming whom to ask, sign-out ends the provider's session too, and with single sign-on on only
the break-glass account signs in with a local password."""

from __future__ import annotations

import pytest
from identity_provider.harness import ACCESS_CONTACT, PROVIDER_NAME, password_of

pytestmark = pytest.mark.browser


@pytest.fixture
def single_sign_on(settings, identity_provider):
    for name, value in identity_provider.settings.items():
        setattr(settings, name, value)
    return identity_provider


def provider_sign_in(page, live_server, username: str) -> None:
    """From the workbench's sign-in page through the provider's own sign-in form."""
    page.goto(live_server.url + "/sign-in/")
    page.get_by_role("link", name=f"Sign in with {PROVIDER_NAME}").click()
    page.get_by_label("Provider username").fill(username)
    page.get_by_label("Provider password").fill(password_of(username))
    page.get_by_role("button", name="Continue").click()


def sign_out(page, live_server) -> None:
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(live_server.url + "/sign-in/")


def site_groups(username: str) -> set[str]:
    from django.contrib.auth.models import User

    return set(User.objects.get(username=username).groups.values_list("name", flat=True))


def atlas_role(username: str, atlas):
    from django.contrib.auth.models import User

    from contracts import roles

    return roles.role_of(User.objects.get(username=username), atlas)


def test_roles_follow_the_providers_groups_at_every_sign_in(
    live_server, new_page, single_sign_on, atlas
):
    from playwright.sync_api import expect

    from contracts import roles
    from contracts.models import AuditAction, AuditEvent

    page = new_page()
    provider_sign_in(page, live_server, "priya")
    page.wait_for_url(live_server.url + "/")
    expect(page.get_by_text("Signed in as")).to_contain_text("priya")
    assert site_groups("priya") == {roles.POLICY_OWNERS, roles.RISK_REVIEWERS}
    assert atlas_role("priya", atlas) == roles.Role.REVIEWER
    page.goto(f"{live_server.url}/types/{atlas.key}/")
    expect(page.get_by_role("heading", level=1)).to_be_visible()
    granted = AuditEvent.objects.get(action=AuditAction.SIGN_IN_ROLE_SET, decision_type=atlas)
    assert granted.changes["user"] == "priya"
    assert granted.changes["role"] == "reviewer"
    assert (
        AuditEvent.objects.filter(
            action=AuditAction.SIGN_IN_GROUP_ADDED, changes__user="priya"
        ).count()
        == 2
    )

    # Signing out ends the provider's session: signing in again asks for the password there.
    sign_out(page, live_server)
    single_sign_on.set_groups("priya", ["wb-policy-owners"])
    provider_sign_in(page, live_server, "priya")
    page.wait_for_url(live_server.url + "/")
    assert site_groups("priya") == {roles.POLICY_OWNERS}
    assert atlas_role("priya", atlas) is None
    removed = AuditEvent.objects.get(action=AuditAction.SIGN_IN_ROLE_REMOVED, decision_type=atlas)
    assert removed.changes == {
        "user": "priya",
        "before": "reviewer",
        "role": None,
        "provider_groups": ["wb-policy-owners"],
    }
    assert AuditEvent.objects.filter(
        action=AuditAction.SIGN_IN_GROUP_REMOVED, changes__site_group=roles.RISK_REVIEWERS
    ).exists()
    page.goto(f"{live_server.url}/types/{atlas.key}/")
    expect(page.get_by_role("heading", name="Not found")).to_be_visible()


def test_a_person_no_group_maps_gets_no_access_and_is_told_whom_to_ask(
    live_server, new_page, single_sign_on, atlas
):
    from django.contrib.auth.models import User
    from playwright.sync_api import expect

    page = new_page()
    provider_sign_in(page, live_server, "una")
    expect(page.get_by_role("heading", name="Not signed in")).to_be_visible()
    expect(page.get_by_role("alert")).to_contain_text(ACCESS_CONTACT)
    assert not User.objects.filter(username="una").exists()
    page.goto(live_server.url + "/")
    assert page.url.startswith(live_server.url + "/sign-in/")

    # Someone who had access and whose groups were all taken away at the provider: refused,
    # and the role they had is gone. (Another browser: the provider still knows una in this one.)
    page = new_page()
    provider_sign_in(page, live_server, "ravi")
    page.wait_for_url(live_server.url + "/")
    assert atlas_role("ravi", atlas) == "reviewer"
    sign_out(page, live_server)
    single_sign_on.set_groups("ravi", [])
    provider_sign_in(page, live_server, "ravi")
    expect(page.get_by_role("alert")).to_contain_text(ACCESS_CONTACT)
    assert atlas_role("ravi", atlas) is None
    assert site_groups("ravi") == set()


def test_only_the_break_glass_account_signs_in_with_a_local_password(
    live_server, new_page, single_sign_on, make_user, sign_in
):
    from playwright.sync_api import expect

    from workbench.accounts.views import LOCAL_SIGN_IN_REFUSED

    make_user("breakglass", superuser=True)
    make_user("olivia")
    page = new_page()
    page.goto(live_server.url + "/sign-in/")
    page.get_by_label("Username").fill("olivia")
    page.get_by_label("Password").fill("olivia-password")
    page.get_by_role("button", name="Sign in", exact=True).click()
    expect(page.get_by_role("alert")).to_have_text(
        LOCAL_SIGN_IN_REFUSED.format(provider=PROVIDER_NAME)
    )
    assert page.url.startswith(live_server.url + "/sign-in/")

    sign_in(page, "breakglass")
    expect(page.get_by_text("Signed in as")).to_contain_text("breakglass")
