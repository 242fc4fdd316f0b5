"""The production profile: DEBUG off, every machine-specific value typed from the environment.

`load_environment` stops the process at start naming each missing or malformed variable;
docs/deployment.md lists them all. gunicorn serves `workbench.wsgi`, WhiteNoise the static
files (compressed, with hashed names, after `collectstatic`), django-axes throttles sign-in.
"""

from __future__ import annotations

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from .base import *  # noqa: F403
from .base import FROM_CHECKOUT, INSTALLED_APPS, MIDDLEWARE, SECURE_CSP, with_sqlite_options
from .environment import load_environment
from .single_sign_on import single_sign_on

env = load_environment()

DEBUG = False
SECRET_KEY = env.DJANGO_SECRET_KEY.get_secret_value()
if env.SIGNING_KEY_SECRET is not None:
    SIGNING_KEY_SECRET = env.SIGNING_KEY_SECRET.get_secret_value()
ALLOWED_HOSTS = env.DJANGO_ALLOWED_HOSTS
DATABASES = {
    "default": with_sqlite_options(
        dj_database_url.parse(env.DATABASE_URL, conn_max_age=env.DATABASE_CONN_MAX_AGE)
    )
}
TIME_ZONE = env.DJANGO_TIME_ZONE

# Behind a TLS-terminating proxy Django sees plain HTTP; trusting the proxy's header makes
# request.is_secure() true, so the CSRF origin check compares https:// with https://.
if env.DJANGO_SECURE_PROXY_SSL_HEADER:
    SECURE_PROXY_SSL_HEADER = (env.DJANGO_SECURE_PROXY_SSL_HEADER, "https")
CSRF_TRUSTED_ORIGINS = env.DJANGO_CSRF_TRUSTED_ORIGINS
SECURE_SSL_REDIRECT = env.DJANGO_SECURE_SSL_REDIRECT
SECURE_HSTS_SECONDS = env.DJANGO_SECURE_HSTS_SECONDS
SECURE_HSTS_INCLUDE_SUBDOMAINS = env.DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS
SECURE_HSTS_PRELOAD = env.DJANGO_SECURE_HSTS_PRELOAD
SESSION_COOKIE_SECURE = env.DJANGO_SECURE_COOKIES
CSRF_COOKIE_SECURE = env.DJANGO_SECURE_COOKIES

if env.DJANGO_STATIC_ROOT is not None:
    STATIC_ROOT = env.DJANGO_STATIC_ROOT
elif not FROM_CHECKOUT:
    raise ImproperlyConfigured(
        "The production settings cannot start; fix these environment variables:\n"
        "  DJANGO_STATIC_ROOT: missing (installed from the wheel there is no checkout to "
        "default to; collectstatic writes there and WhiteNoise serves from it)"
    )
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

INSTALLED_APPS = [*INSTALLED_APPS, "axes"]
_SECURITY = MIDDLEWARE.index("django.middleware.security.SecurityMiddleware")
MIDDLEWARE = [
    *MIDDLEWARE[: _SECURITY + 1],
    "whitenoise.middleware.WhiteNoiseMiddleware",
    *MIDDLEWARE[_SECURITY + 1 :],
    # Last, as django-axes asks: it turns a locked-out sign-in into its 429 response.
    "axes.middleware.AxesMiddleware",
]
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "workbench.accounts.backends.LocalPasswordBackend",
    "guardian.backends.ObjectPermissionBackend",
]
# Lock a username tried from one address: locking by address alone would lock out everyone
# behind the same proxy or office NAT (sign-ins through the provider are not counted).
AXES_LOCKOUT_PARAMETERS = "workbench.accounts.backends.axes_lockout_parameters"
AXES_FAILURE_LIMIT = env.LOGIN_FAILURE_LIMIT
AXES_COOLOFF_TIME = env.LOGIN_COOLOFF_MINUTES / 60  # hours
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"
if env.DJANGO_SECURE_PROXY_SSL_HEADER:
    # The address of the client as the (one) proxy in front saw it.
    AXES_IPWARE_PROXY_COUNT = 1
    AXES_IPWARE_META_PRECEDENCE_ORDER = ["HTTP_X_FORWARDED_FOR", "REMOTE_ADDR"]

WORKER_STALE_SECONDS = env.WORKER_STALE_SECONDS
SESSION_COOKIE_AGE = env.SESSION_IDLE_MINUTES * 60
SSO_SESSION_MAX_SECONDS = int(env.SSO_SESSION_MAX_HOURS * 3600)

if env.OIDC_RP_CLIENT_ID:
    globals().update(
        single_sign_on(
            issuer=env.OIDC_OP_ISSUER,
            client_id=env.OIDC_RP_CLIENT_ID,
            client_secret=env.OIDC_RP_CLIENT_SECRET.get_secret_value()
            if env.OIDC_RP_CLIENT_SECRET
            else "",
            authorization_endpoint=env.OIDC_OP_AUTHORIZATION_ENDPOINT,
            token_endpoint=env.OIDC_OP_TOKEN_ENDPOINT,
            userinfo_endpoint=env.OIDC_OP_USER_ENDPOINT,
            jwks_endpoint=env.OIDC_OP_JWKS_ENDPOINT,
            logout_endpoint=env.OIDC_OP_LOGOUT_ENDPOINT,
            group_map=env.WORKBENCH_SSO_GROUP_MAP,
            provider_name=env.OIDC_PROVIDER_NAME,
            access_contact=env.WORKBENCH_SSO_ACCESS_CONTACT,
            break_glass_username=env.WORKBENCH_BREAK_GLASS_USERNAME,
            backends=AUTHENTICATION_BACKENDS,
            csp=SECURE_CSP,
            scopes=env.OIDC_RP_SCOPES,
            username_claim=env.OIDC_USERNAME_CLAIM,
            groups_claim=env.OIDC_GROUPS_CLAIM,
        )
    )

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"request_context": {"()": "workbench.observability.RequestContextFilter"}},
    "formatters": {"json": {"()": "workbench.observability.JsonFormatter"}},
    "handlers": {
        "stdout": {
            "class": "logging.StreamHandler",
            "stream": "ext://sys.stdout",
            "formatter": "json",
            "filters": ["request_context"],
        }
    },
    "root": {"handlers": ["stdout"], "level": env.DJANGO_LOG_LEVEL},
    "loggers": {
        # Every 500 with its traceback (django.request logs it with exc_info); the request
        # line itself comes from workbench.requests, so Django's own 4xx warnings are noise.
        "django.request": {"level": "ERROR"},
        "django.server": {"level": "WARNING"},
        # Its start-up banner on every command would bury what a command prints.
        "axes": {"level": "WARNING"},
        # Each token check's outcome is logged by workbench.accounts; the library's own
        # debug lines would repeat them.
        "mozilla_django_oidc": {"level": "WARNING"},
    },
}

MANAGEMENT_COMMAND = "django-admin"  # with the environment above set (docs/deployment.md)
