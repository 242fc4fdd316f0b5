"""Settings shared by every environment; whatever differs per machine comes from the environment."""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from dj_database_url import DBConfig
from django.utils.csp import CSP

from workbench.accounts.mapping import parse_group_map

BASE_DIR = Path(__file__).resolve().parent.parent.parent
# A checkout keeps the templates and static files at its root; the wheel carries them inside
# the workbench package (pyproject.toml maps them there), where Django's app finders see them.
FROM_CHECKOUT = (BASE_DIR / "templates").is_dir()
SITE_FILES_DIR = BASE_DIR if FROM_CHECKOUT else Path(__file__).resolve().parent.parent


def env_flag(name: str, default: bool = False) -> bool:
    value = os.environ.get(name)
    if value is None:
        return default
    return value.strip().lower() in {"1", "true", "yes", "on"}


def env_list(name: str, default: str = "") -> list[str]:
    return [item.strip() for item in os.environ.get(name, default).split(",") if item.strip()]


# The default key only exists so a fresh checkout runs locally; dev/test set their own and a
# real deployment must set DJANGO_SECRET_KEY.
# `publishing.checks` refuses to start with it when DEBUG is off: it also encrypts the private
# signing keys.
LOCAL_ONLY_SECRET_KEY = "insecure-local-only-evidence-workbench"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", LOCAL_ONLY_SECRET_KEY)
DEBUG = env_flag("DJANGO_DEBUG")
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost")

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_htmx",
    "guardian",
    # Before django_tasks_db: its `db_worker` command recovers stale work, then runs
    # django_tasks_db's worker (the first app to provide a command wins).
    "workers",
    "contracts",
    "scenarios",
    "django_tasks_db",
    "publishing",
    "workbench",
    "workbench.accounts",
]

# The largest corpus file the import page accepts (bytes); a larger upload is refused before
# it is read. `import_fixtures` and `python -m compiler_tools` read files without this cap.
CORPUS_UPLOAD_MAX_BYTES = int(os.environ.get("CORPUS_UPLOAD_MAX_BYTES", 5 * 1024 * 1024))
# A form's fields (a file aside) may total this much: a corpus pasted instead of uploaded is
# then refused by the import form itself, with the same cap and message as a file, and the
# form kept; a larger post gets the form back with a 413 (`workbench.middleware`).
DATA_UPLOAD_MAX_MEMORY_SIZE = CORPUS_UPLOAD_MAX_BYTES + 256 * 1024
# The body of a call to /api/ may be this large once inflated (`workbench.api_body`).
API_BODY_MAX_BYTES = int(os.environ.get("API_BODY_MAX_BYTES", DATA_UPLOAD_MAX_MEMORY_SIZE))

# Suite runs go to a database queue that `manage.py db_worker` (started by `make run`) drains.
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# A running suite run commits its progress and a heartbeat this often (seconds); one whose
# heartbeat is older than the threshold lost its worker and is requeued (scenarios.services).
SUITE_RUN_HEARTBEAT_SECONDS = float(os.environ.get("SUITE_RUN_HEARTBEAT_SECONDS", "1.0"))
SUITE_RUN_STALE_SECONDS = float(os.environ.get("SUITE_RUN_STALE_SECONDS", "60"))
# The same for an impact report being computed (publishing.impact.stored): its worker beats
# on the row this often, and one computing with an older heartbeat is queued again.
IMPACT_REPORT_HEARTBEAT_SECONDS = float(os.environ.get("IMPACT_REPORT_HEARTBEAT_SECONDS", "10"))
IMPACT_REPORT_STALE_SECONDS = float(os.environ.get("IMPACT_REPORT_STALE_SECONDS", "60"))
# Scenarios per slice of an impact report, one task each (publishing.impact.chunks).
IMPACT_REPORT_CHUNK = int(os.environ.get("IMPACT_REPORT_CHUNK", "250"))
# A replay of recorded decisions is cut into slices of this many receipts, one task each; a
# slice still running this long after a worker claimed it is queued again (publishing.replay).
RECEIPT_REPLAY_CHUNK = int(os.environ.get("RECEIPT_REPLAY_CHUNK", "500"))
RECEIPT_REPLAY_STALE_SECONDS = float(os.environ.get("RECEIPT_REPLAY_STALE_SECONDS", "120"))
# How often each worker looks for runs and impact reports whose worker stopped (and requeues
# them) while it lives, besides as it starts: a fraction of the staleness windows above, so a
# killed worker's run is taken up again soon after it goes stale. Must be more than 0.
STALE_WORK_CHECK_SECONDS = float(os.environ.get("STALE_WORK_CHECK_SECONDS", "15"))
# Scenarios per chunk of a run (one task each; several workers share a run's chunks).
SUITE_RUN_CHUNK_SCENARIOS = int(os.environ.get("SUITE_RUN_CHUNK_SCENARIOS", "50"))
# Runs `prune_runs` keeps per version besides those behind published versions.
RUN_RETENTION_PER_VERSION = int(os.environ.get("RUN_RETENTION_PER_VERSION", "5"))
RUN_PRUNE_EVERY_SECONDS = 86400  # how often a worker prunes old runs (prune_runs)

MIDDLEWARE = [
    # /healthz and /readyz answer before host validation, redirects and sessions: a load
    # balancer's probe carries neither an allowed Host nor TLS (workbench.health).
    "workbench.health.HealthMiddleware",
    "workbench.observability.RequestLogMiddleware",
    "django.middleware.security.SecurityMiddleware",
    # Compresses what every middleware below answered (so it sees the final body); answers
    # carrying a one-time secret stay plain (workbench.compression, docs/deployment.md).
    "workbench.compression.CompressionMiddleware",
    "django.middleware.csp.ContentSecurityPolicyMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # Reads, inflates and bounds the body of an /api/ call before anything else reads it.
    "workbench.api_body.ApiBodyMiddleware",
    # Before the CSRF check, which is the first to read a form's fields.
    "workbench.middleware.RequestTooLargeMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "workbench.middleware.LoginRequiredMiddleware",
    "workbench.accounts.middleware.IdleSessionMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    # Last: its 304s need the resolved URL, the user and the CSRF secret (workbench.conditional).
    "workbench.conditional.ConditionalPagesMiddleware",
]

ROOT_URLCONF = "workbench.urls"
WSGI_APPLICATION = "workbench.wsgi.application"
ASGI_APPLICATION = "workbench.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [SITE_FILES_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.csp",
            ],
            "builtins": ["django_htmx.templatetags.django_htmx"],
        },
    },
]

# An embedded SQLite file at the repository root (gitignored) unless DATABASE_URL names another
# database: PostgreSQL in CI and in production.
SQLITE_PATH = BASE_DIR / "workbench.sqlite3"
# SQLite (the embedded default, and `make serve`'s) is set up for a web process and a worker
# that write at once: write-ahead logging, so pages read while a run commits its results and a
# commit syncs one file once; transactions that take the write lock as they begin, so two
# writers never deadlock upgrading their locks; and up to 20 s of waiting for that lock before
# "database is locked". `synchronous` stays FULL: a commit is on disk when it returns.
SQLITE_OPTIONS: dict[str, object] = {
    "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;",
    "transaction_mode": "IMMEDIATE",
    "timeout": 20,
}


def with_sqlite_options(database: DBConfig) -> DBConfig:
    """`database` with `SQLITE_OPTIONS` added if it is SQLite (options it names win)."""
    if database.get("ENGINE") == "django.db.backends.sqlite3":
        options = database.get("OPTIONS") or {}
        database["OPTIONS"] = {**SQLITE_OPTIONS, **options}
    return database


DATABASES = {
    "default": with_sqlite_options(
        dj_database_url.config(
            default=f"sqlite:///{SQLITE_PATH}",
            conn_max_age=int(os.environ.get("DATABASE_CONN_MAX_AGE", "0")),
        )
    )
}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTHENTICATION_BACKENDS = [
    # Django's password backend, narrowed to the break-glass account when single sign-on is on.
    "workbench.accounts.backends.LocalPasswordBackend",
    "guardian.backends.ObjectPermissionBackend",
]
# Single sign-on through an OpenID Connect provider (workbench.accounts, docs/deployment.md):
# off unless the production profile's environment configures it
# (workbench.settings.single_sign_on adds the rest). Off, every local account signs in with
# its password, as the demo's do.
SSO_ENABLED = False
LOCAL_SIGN_IN_USERNAMES: list[str] | None = None
OIDC_PROVIDER_NAME = "your organisation's sign-in"
SSO_ACCESS_CONTACT = "an administrator"
SSO_GROUP_MAP = parse_group_map("{}")
OIDC_OP_ISSUER = ""
OIDC_RP_CLIENT_ID = ""
OIDC_OP_LOGOUT_ENDPOINT = ""
OIDC_USERNAME_CLAIM = "preferred_username"
OIDC_GROUPS_CLAIM = "groups"
OIDC_OP_LOGOUT_URL_METHOD = "workbench.accounts.views.provider_logout_url"
# A session ends after this long without a request (workbench.accounts.middleware), and one
# opened through the identity provider after the second however busy, so the provider's
# current groups are applied again at least that often.
SESSION_COOKIE_AGE = int(os.environ.get("SESSION_IDLE_MINUTES", "480")) * 60
SSO_SESSION_MAX_SECONDS = 12 * 3600
# Object permissions are for signed-in people only; anonymous users are sent to sign in.
ANONYMOUS_USER_NAME = None
GUARDIAN_MONKEY_PATCH_USER = False

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "dashboard"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-gb"
TIME_ZONE = os.environ.get("DJANGO_TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"] if FROM_CHECKOUT else []
STATIC_ROOT = BASE_DIR / "var" / "static"

# A strict policy everywhere, so the browser tests run under the one production enforces:
# scripts and styles only from the app's own static files (htmx's script tag carries the
# nonce), no inline styles, handlers or eval (docs/deployment.md).
SECURE_CSP = {
    "default-src": [CSP.SELF],
    "script-src": [CSP.SELF, CSP.NONCE],
    "style-src": [CSP.SELF],
    "img-src": [CSP.SELF, "data:"],
    "connect-src": [CSP.SELF],
    "form-action": [CSP.SELF],
    "frame-ancestors": [CSP.NONE],
    "base-uri": [CSP.NONE],
    "object-src": [CSP.NONE],
}

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_SECURE = env_flag("DJANGO_SECURE_COOKIES")
SESSION_COOKIE_SECURE = env_flag("DJANGO_SECURE_COOKIES")
X_FRAME_OPTIONS = "DENY"

# How the pages and docs print a management command so it runs as shown: from a checkout
# (`make run` made .venv), manage.py needs the development profile named, for it defaults to
# production (docs/deployment.md); the production profile prints `django-admin`, run where
# its environment is set.
MANAGEMENT_COMMAND = "DJANGO_SETTINGS_MODULE=workbench.settings.dev .venv/bin/python manage.py"
# Where load_demo keeps the demo people's key files (default: var/demo-keys in the checkout).
DEMO_KEYS_DIR = os.environ.get("WORKBENCH_DEMO_KEYS_DIR") or None
