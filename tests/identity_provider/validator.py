from __future__ import annotations

from typing import Any

from oauth2_provider.oauth2_validators import OAuth2Validator


class GroupsClaimValidator(OAuth2Validator):
    """ID token and user-info carry the username, e-mail and the person's groups, as a
    provider configured with a group-membership claim does."""

    # Every claim, whatever the scopes: the groups claim is not a standard one.
    oidc_claim_scope = None

    def get_additional_claims(self, request: Any) -> dict[str, Any]:
        user = request.user
        return {
            "preferred_username": user.username,
            "email": user.email,
            "groups": sorted(user.groups.values_list("name", flat=True)),
        }
