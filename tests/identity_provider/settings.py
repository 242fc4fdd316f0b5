"""The test provider's settings; everything machine-specific comes from the harness's
environment (OIDC_PROVIDER_DIR, OIDC_PROVIDER_ISSUER)."""

from __future__ import annotations

import os
from pathlib import Path

HERE = Path(__file__).resolve().parent
STATE = Path(os.environ["OIDC_PROVIDER_DIR"])

SECRET_KEY = "test-provider-only-not-secret"
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oauth2_provider",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "identity_provider.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [HERE / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(STATE / "provider.sqlite3")}
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
USE_TZ = True
LOGIN_URL = "/accounts/login/"
# The workbench under test runs on the same host: cookies are shared across ports, so the
# provider's must not carry the workbench's names.
SESSION_COOKIE_NAME = "provider_session"
CSRF_COOKIE_NAME = "provider_csrftoken"

OAUTH2_PROVIDER = {
    "OIDC_ENABLED": True,
    "OIDC_ISS_ENDPOINT": os.environ["OIDC_PROVIDER_ISSUER"],
    "OIDC_RSA_PRIVATE_KEY": (STATE / "signing-key.pem").read_text(),
    "OIDC_RP_INITIATED_LOGOUT_ENABLED": True,
    "OIDC_RP_INITIATED_LOGOUT_ALWAYS_PROMPT": False,
    "PKCE_REQUIRED": True,
    "OAUTH2_VALIDATOR_CLASS": "identity_provider.validator.GroupsClaimValidator",
    "SCOPES": {"openid": "OpenID Connect", "profile": "Profile", "email": "E-mail"},
}
