"""The production profile's environment, read and typed by pydantic-settings.

Every variable the production settings read is a field here, named exactly as it is set, so a
missing or malformed one stops the process at start with that name (`load_environment`).
docs/deployment.md lists them with their defaults.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from django.core.exceptions import ImproperlyConfigured
from pydantic import Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from workbench.accounts.mapping import GroupMap, parse_group_map

CommaList = Annotated[list[str], NoDecode]

DEV_HINT = (
    "For local development use DJANGO_SETTINGS_MODULE=workbench.settings.dev "
    "(`make run` sets it); docs/deployment.md lists every production variable."
)


class ProductionEnvironment(BaseSettings):
    model_config = SettingsConfigDict(case_sensitive=True, extra="ignore")

    # Required: no production default is safe.
    DJANGO_SECRET_KEY: SecretStr
    DJANGO_ALLOWED_HOSTS: CommaList = Field(min_length=1)
    DATABASE_URL: str = Field(min_length=1)

    # Optional, with production defaults.
    SIGNING_KEY_SECRET: SecretStr | None = None
    DATABASE_CONN_MAX_AGE: int = Field(default=60, ge=0)
    DJANGO_CSRF_TRUSTED_ORIGINS: CommaList = []
    # The header a TLS-terminating proxy sets, as it arrives (`X-Forwarded-Proto`); empty when
    # nothing sits in front of gunicorn.
    DJANGO_SECURE_PROXY_SSL_HEADER: str = ""
    DJANGO_SECURE_SSL_REDIRECT: bool = True
    DJANGO_SECURE_HSTS_SECONDS: int = Field(default=31_536_000, ge=0)
    DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS: bool = True
    DJANGO_SECURE_HSTS_PRELOAD: bool = True
    DJANGO_SECURE_COOKIES: bool = True
    DJANGO_STATIC_ROOT: Path | None = None
    DJANGO_LOG_LEVEL: str = Field(default="INFO", pattern=r"^(DEBUG|INFO|WARNING|ERROR)$")
    DJANGO_TIME_ZONE: str = "UTC"
    LOGIN_FAILURE_LIMIT: int = Field(default=5, ge=1)
    LOGIN_COOLOFF_MINUTES: int = Field(default=15, ge=1)
    WORKER_STALE_SECONDS: float = Field(default=60.0, gt=0)
    SESSION_IDLE_MINUTES: int = Field(default=480, ge=1)
    SSO_SESSION_MAX_HOURS: float = Field(default=12.0, gt=0)

    # Single sign-on (workbench.accounts): on when OIDC_RP_CLIENT_ID is set, and then the
    # provider's values below are required (`single_sign_on_complete`).
    OIDC_RP_CLIENT_ID: str = ""
    OIDC_RP_CLIENT_SECRET: SecretStr | None = None
    OIDC_OP_ISSUER: str = ""
    OIDC_OP_AUTHORIZATION_ENDPOINT: str = ""
    OIDC_OP_TOKEN_ENDPOINT: str = ""
    OIDC_OP_USER_ENDPOINT: str = ""
    OIDC_OP_JWKS_ENDPOINT: str = ""
    OIDC_OP_LOGOUT_ENDPOINT: str = ""
    OIDC_RP_SCOPES: str = "openid email profile"
    OIDC_USERNAME_CLAIM: str = "preferred_username"
    OIDC_GROUPS_CLAIM: str = "groups"
    OIDC_PROVIDER_NAME: str = "your organisation's sign-in"
    # JSON (workbench.accounts.mapping); NoDecode: parsed by its own validator, which names
    # the group and field that are wrong.
    WORKBENCH_SSO_GROUP_MAP: Annotated[GroupMap, NoDecode] = GroupMap({})
    WORKBENCH_SSO_ACCESS_CONTACT: str = ""
    WORKBENCH_BREAK_GLASS_USERNAME: str = ""

    @field_validator("DJANGO_SECRET_KEY")
    @classmethod
    def secret_is_strong(cls, value: SecretStr) -> SecretStr:
        secret = value.get_secret_value()
        # check --deploy's own bar (security.W009).
        if len(secret) < 50 or len(set(secret)) < 5 or secret.startswith("django-insecure-"):
            raise ValueError(
                "must be at least 50 characters with 5 different ones, for example from "
                "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
            )
        return value

    @field_validator("WORKBENCH_SSO_GROUP_MAP", mode="before")
    @classmethod
    def group_map_from_json(cls, value: object) -> object:
        return parse_group_map(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def single_sign_on_complete(self) -> ProductionEnvironment:
        if not self.OIDC_RP_CLIENT_ID:
            return self
        needed = [
            "OIDC_RP_CLIENT_SECRET",
            "OIDC_OP_ISSUER",
            "OIDC_OP_AUTHORIZATION_ENDPOINT",
            "OIDC_OP_TOKEN_ENDPOINT",
            "OIDC_OP_USER_ENDPOINT",
            "OIDC_OP_JWKS_ENDPOINT",
            "WORKBENCH_SSO_ACCESS_CONTACT",
        ]
        missing = [name for name in needed if not getattr(self, name)]
        if not self.WORKBENCH_SSO_GROUP_MAP.root:
            missing.append("WORKBENCH_SSO_GROUP_MAP")
        if missing:
            raise ValueError(
                f"{', '.join(missing)}: missing (single sign-on is on: OIDC_RP_CLIENT_ID is set)"
            )
        return self

    @field_validator("DJANGO_ALLOWED_HOSTS", "DJANGO_CSRF_TRUSTED_ORIGINS", mode="before")
    @classmethod
    def split_commas(cls, value: object) -> object:
        if isinstance(value, str):
            return [item.strip() for item in value.split(",") if item.strip()]
        return value

    @field_validator("DJANGO_CSRF_TRUSTED_ORIGINS")
    @classmethod
    def origins_have_a_scheme(cls, value: list[str]) -> list[str]:
        bare = [origin for origin in value if "://" not in origin]
        if bare:
            raise ValueError(f"each origin needs its scheme (https://host): {', '.join(bare)}")
        return value

    @field_validator("DJANGO_SECURE_PROXY_SSL_HEADER")
    @classmethod
    def header_as_wsgi_key(cls, value: str) -> str:
        return "HTTP_" + value.strip().upper().replace("-", "_") if value.strip() else ""


def describe(error: ValidationError) -> str:
    """One line per bad variable: its name and what is wrong (never its value)."""
    lines = []
    for problem in error.errors():
        name = ".".join(str(part) for part in problem["loc"])
        what = "missing" if problem["type"] == "missing" else problem["msg"]
        what = what.removeprefix("Value error, ")
        # A check across several variables names them in its message.
        lines.append(f"  {name}: {what}" if name else f"  {what}")
    return "\n".join(lines)


class _GivenEnvironment(ProductionEnvironment):
    """The same variables read from a mapping alone, never from the process environment (a
    provisioning script's or a test's own mapping must not be completed by os.environ)."""

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: Any, *others: Any, **named: Any
    ) -> tuple[Any, ...]:
        return (init_settings,)


def load_environment(environ: dict[str, str] | None = None) -> ProductionEnvironment:
    """The typed environment, or ImproperlyConfigured naming every missing or bad variable."""
    try:
        if environ is None:
            return ProductionEnvironment()
        return _GivenEnvironment(**_only_fields(environ))
    except ValidationError as error:
        raise ImproperlyConfigured(
            "The production settings cannot start; fix these environment variables:\n"
            f"{describe(error)}\n{DEV_HINT}"
        ) from None


def _only_fields(environ: dict[str, str]) -> dict[str, Any]:
    # Any: the model's fields validate the strings, as they would the process environment's.
    return {k: v for k, v in environ.items() if k in ProductionEnvironment.model_fields}
