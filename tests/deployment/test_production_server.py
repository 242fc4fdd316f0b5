"""gunicorn serving the production profile: static files, security headers, structured logs,
health and readiness, sign-in behind a TLS proxy, login throttling, the admin and the 500."""

from __future__ import annotations

import http.cookiejar
import json
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

import pytest


class Browserless:
    """A cookie-keeping HTTP client that does not follow redirects (so tests see them)."""

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args, **kwargs):
            return None

    def __init__(self, base: str) -> None:
        self.base = base
        self.cookies = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(
            urllib.request.HTTPCookieProcessor(self.cookies), self.NoRedirect()
        )

    def request(self, path: str, data: dict | None = None, headers: dict | None = None):
        body = urllib.parse.urlencode(data).encode() if data is not None else None
        request = urllib.request.Request(self.base + path, data=body, headers=headers or {})
        try:
            response = self.opener.open(request, timeout=20)
        except urllib.error.HTTPError as error:
            response = error
        with response:
            return response.status, dict(response.headers), response.read().decode(errors="replace")

    def cookie(self, name: str) -> str:
        return next(c.value for c in self.cookies if c.name == name)


def sign_in(client: Browserless, username: str, password: str, **headers: str):
    client.request("/sign-in/")
    form = {
        "username": username,
        "password": password,
        "csrfmiddlewaretoken": client.cookie("csrftoken"),
    }
    return client.request("/sign-in/", form, headers)


PROXIED = {"X-Forwarded-Proto": "https"}


def test_pages_are_styled_by_hashed_compressed_static_files(production_server):
    client = Browserless(production_server.url)
    status, headers, html = client.request("/sign-in/")
    assert status == 200
    stylesheet = re.search(r'href="(/static/workbench/workbench\.[0-9a-f]{12}\.css)"', html)
    assert stylesheet, "the page links the hashed stylesheet collectstatic wrote"
    status, headers, css = client.request(stylesheet[1], headers={"Accept-Encoding": "gzip"})
    assert status == 200
    assert headers["Content-Encoding"] == "gzip"
    assert "immutable" in headers["Cache-Control"]
    htmx = re.search(r'src="(/static/django_htmx/htmx-2\.min\.[0-9a-f]{12}\.js)"', html)
    assert htmx and client.request(htmx[1])[0] == 200


def test_pages_carry_a_strict_content_security_policy_and_hsts_is_configurable(
    production_server,
):
    status, headers, html = Browserless(production_server.url).request("/sign-in/")
    policy = headers["Content-Security-Policy"]
    script_src = re.search(r"script-src ([^;]*)", policy)[1]
    style_src = re.search(r"style-src ([^;]*)", policy)[1]
    assert "'unsafe-inline'" not in policy and "'unsafe-eval'" not in policy
    nonce = re.search(r"'nonce-([^']+)'", script_src)[1]
    assert f'nonce="{nonce}"' in html  # htmx's script tag
    assert style_src == "'self'"
    assert "<script>" not in html and "style=" not in html


def test_health_answers_any_host_and_readiness_sees_the_database_and_the_worker(
    production_server,
):
    client = Browserless(production_server.url)
    status, _, body = client.request("/healthz", headers={"Host": "10.0.0.7:8000"})
    assert (status, json.loads(body)) == (200, {"status": "ok"})
    deadline = time.monotonic() + 60
    while True:  # the worker beats as it starts; wait for its first beat
        status, _, body = client.request("/readyz")
        if status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert (status, json.loads(body)) == (
        200,
        {"status": "ok", "checks": {"database": "ok", "worker": "ok"}},
    )


def test_sign_in_behind_a_tls_proxy_passes_the_origin_check(production_server):
    client = Browserless(production_server.url)
    origin = production_server.url.replace("http://", "https://")
    status, headers, _ = sign_in(
        client,
        "olivia",
        "olivia-local-demo",
        Origin=origin,
        Referer=origin + "/sign-in/",
        **PROXIED,
    )
    assert status == 302 and headers["Location"] == "/"
    status, _, html = client.request("/", headers=PROXIED)
    assert status == 200 and "Signed in as <strong>olivia</strong>" in html


def test_each_request_is_one_json_line_with_its_id_user_view_status_and_duration(
    production_server,
):
    client = Browserless(production_server.url)
    sign_in(client, "vera", "vera-local-demo")
    request_id = uuid.uuid4().hex
    status, headers, _ = client.request("/", headers={"X-Request-ID": request_id})
    assert status == 200 and headers["X-Request-ID"] == request_id
    lines = [line for line in production_server.log_lines() if line.get("request_id") == request_id]
    assert len(lines) == 1
    line = lines[0]
    assert (line["logger"], line["user"], line["view"], line["status"], line["path"]) == (
        "workbench.requests",
        "vera",
        "dashboard",
        200,
        "/",
    )
    assert isinstance(line["duration_ms"], float) and line["duration_ms"] >= 0


def test_a_500_shows_the_branded_page_and_logs_its_traceback_with_the_request_id(
    production_server,
):
    request_id = uuid.uuid4().hex
    status, _, html = Browserless(production_server.url).request(
        "/fail/", headers={"X-Request-ID": request_id}
    )
    assert status == 500
    assert "Something went wrong" in html
    assert re.search(r'href="/static/workbench/workbench\.[0-9a-f]{12}\.css"', html)
    assert "deliberate failure" not in html and "Traceback" not in html
    lines = [line for line in production_server.log_lines() if line.get("request_id") == request_id]
    errors = [line for line in lines if line["logger"] == "django.request"]
    assert len(errors) == 1 and errors[0]["level"] == "ERROR"
    assert "RuntimeError: a deliberate failure for the log test" in errors[0]["exception"]
    assert [line["status"] for line in lines if line["logger"] == "workbench.requests"] == [500]


def test_repeated_failed_sign_ins_are_locked_out_even_with_the_right_password(
    production_server,
):
    for _ in range(3):  # LOGIN_FAILURE_LIMIT in the test environment
        status, _, html = sign_in(Browserless(production_server.url), "rafael", "wrong")
        assert status in (200, 429)
    status, _, html = sign_in(Browserless(production_server.url), "rafael", "rafael-local-demo")
    assert status == 429 and "Sign-in paused" in html
    # Another person is not locked out by rafael's failures.
    status, _, _ = sign_in(Browserless(production_server.url), "cora", "cora-local-demo")
    assert status == 302


@pytest.mark.parametrize("path", ["/admin/", "/admin/auth/user/", "/admin/django_tasks_db/"])
def test_the_admin_is_for_staff_only(production_server, path):
    client = Browserless(production_server.url)
    sign_in(client, "olivia", "olivia-local-demo")
    status, headers, _ = client.request(path)
    assert status == 302 and headers["Location"].startswith("/admin/login/")
