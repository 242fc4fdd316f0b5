"""The production profile's parts in-process: the environment's errors, readiness, the
request log line, grant_role."""

from __future__ import annotations

import json
import logging
from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import CommandError, call_command
from django.utils import timezone

from workbench.observability import JsonFormatter, RequestContextFilter
from workbench.settings.environment import load_environment

GOOD = {
    "DJANGO_SECRET_KEY": "k" * 40 + "abcdefghij",
    "DJANGO_ALLOWED_HOSTS": "workbench.example.org, admin.example.org",
    "DATABASE_URL": "postgres://db/workbench",
}


def test_a_complete_environment_is_typed():
    env = load_environment(
        {
            **GOOD,
            "DJANGO_SECURE_HSTS_SECONDS": "600",
            "DJANGO_SECURE_PROXY_SSL_HEADER": "X-Forwarded-Proto",
        }
    )
    assert env.DJANGO_ALLOWED_HOSTS == ["workbench.example.org", "admin.example.org"]
    assert env.DJANGO_SECURE_HSTS_SECONDS == 600
    assert env.DJANGO_SECURE_PROXY_SSL_HEADER == "HTTP_X_FORWARDED_PROTO"


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"DATABASE_URL": None}, "DATABASE_URL: missing"),
        ({"DJANGO_SECRET_KEY": "short"}, "DJANGO_SECRET_KEY: must be at least 50 characters"),
        ({"DJANGO_SECURE_HSTS_SECONDS": "a year"}, "DJANGO_SECURE_HSTS_SECONDS: Input should"),
        ({"DJANGO_SECURE_SSL_REDIRECT": "maybe"}, "DJANGO_SECURE_SSL_REDIRECT: Input should"),
        (
            {"DJANGO_CSRF_TRUSTED_ORIGINS": "workbench.example.org"},
            "DJANGO_CSRF_TRUSTED_ORIGINS: each origin needs its scheme",
        ),
    ],
)
def test_a_missing_or_malformed_variable_is_named_and_its_value_is_not(change, expected):
    environ = {**GOOD, **{k: v for k, v in change.items() if v is not None}}
    for name in [k for k, v in change.items() if v is None]:
        environ.pop(name)
    with pytest.raises(ImproperlyConfigured) as raised:
        load_environment(environ)
    assert expected in str(raised.value)
    assert "short" not in str(raised.value).replace("shortly", "")


def test_every_missing_variable_is_named_at_once():
    with pytest.raises(ImproperlyConfigured) as raised:
        load_environment({})
    for name in ("DJANGO_SECRET_KEY", "DJANGO_ALLOWED_HOSTS", "DATABASE_URL"):
        assert f"{name}: missing" in str(raised.value)


@pytest.mark.django_db
def test_readiness_fails_without_a_recent_worker_heartbeat(client, settings):
    from workers.models import WorkerHeartbeat

    settings.WORKER_STALE_SECONDS = 60
    response = client.get("/readyz")
    assert response.status_code == 503
    assert "no task worker has ever reported" in response.json()["checks"]["worker"]
    WorkerHeartbeat.objects.create(worker="old", seen_at=timezone.now() - timedelta(minutes=5))
    assert client.get("/readyz").status_code == 503
    WorkerHeartbeat.objects.create(worker="live", seen_at=timezone.now())
    assert client.get("/readyz").json() == {
        "status": "ok",
        "checks": {"database": "ok", "worker": "ok"},
    }


@pytest.mark.django_db
def test_the_request_line_carries_id_user_view_and_status(client, owner, caplog):
    client.force_login(owner)
    with caplog.at_level(logging.INFO, logger="workbench.requests"):
        response = client.get("/", headers={"X-Request-ID": "abc-123"})
    assert response["X-Request-ID"] == "abc-123"
    (record,) = [r for r in caplog.records if r.name == "workbench.requests"]
    line = json.loads(JsonFormatter().format(record))
    assert (line["request_id"], line["user"], line["view"], line["status"]) == (
        "abc-123",
        owner.username,
        "dashboard",
        200,
    )


def test_an_unusable_request_id_is_replaced_and_records_outside_a_request_have_none():
    from django.test import RequestFactory

    from workbench.observability import request_id_from

    request = RequestFactory().get("/", headers={"X-Request-ID": "evil\nforged line"})
    assert request_id_from(request) != "evil\nforged line"
    record = logging.LogRecord("x", logging.ERROR, __file__, 1, "m", (), None)
    RequestContextFilter().filter(record)
    assert json.loads(JsonFormatter().format(record))["request_id"] is None


@pytest.mark.django_db
def test_grant_role_gives_a_role_through_the_audited_action(owner, stranger, atlas):
    from contracts import roles
    from contracts.models import AuditEvent

    call_command("grant_role", stranger.username, atlas.key, "reviewer", actor=owner.username)
    assert roles.role_of(stranger, atlas) == roles.Role.REVIEWER
    assert AuditEvent.objects.filter(action="access.granted", actor=owner).exists()


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["nobody", "credit.review.continuation", "viewer"], "No user named 'nobody'."),
        (["sam", "no.such.type", "viewer"], "No decision type with key 'no.such.type'."),
        (["sam", "credit.review.continuation", "viewer"], "No superuser to record"),
    ],
)
def test_grant_role_refuses_with_a_clear_error(stranger, atlas, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("grant_role", *arguments)


@pytest.mark.django_db
def test_grant_role_refuses_an_actor_who_may_not_grant(stranger, viewer, atlas):
    with pytest.raises(CommandError, match="may not grant roles"):
        call_command("grant_role", stranger.username, atlas.key, "owner", actor=viewer.username)


def test_a_sqlite_database_is_set_up_for_a_web_process_and_a_worker(tmp_path, django_db_blocker):
    """Write-ahead logging (pages read while a run commits), commits durable when they return,
    and transactions that take the write lock as they begin; options a URL names still win."""
    import dj_database_url
    from django.db.backends.sqlite3.base import DatabaseWrapper
    from django.db.utils import ConnectionHandler

    from workbench.settings.base import with_sqlite_options

    def opened(database):
        wrapper = DatabaseWrapper(
            ConnectionHandler({"default": database}).settings["default"], alias="probe"
        )
        with django_db_blocker.unblock(), wrapper.cursor() as cursor:
            cursor.execute("PRAGMA journal_mode")
            journal = cursor.fetchone()[0]
            cursor.execute("PRAGMA synchronous")
            synchronous = cursor.fetchone()[0]
        wrapper.close()
        return journal, synchronous, wrapper.transaction_mode

    database = with_sqlite_options(dj_database_url.parse(f"sqlite:///{tmp_path}/a.sqlite3"))
    assert opened(database) == ("wal", 2, "IMMEDIATE")  # 2 is FULL
    mine = dj_database_url.parse(f"sqlite:///{tmp_path}/b.sqlite3")
    mine["OPTIONS"] = {"transaction_mode": "EXCLUSIVE"}
    assert opened(with_sqlite_options(mine))[2] == "EXCLUSIVE"
    postgres = with_sqlite_options(dj_database_url.parse("postgres://u@h/db"))
    assert "init_command" not in postgres.get("OPTIONS", {})
