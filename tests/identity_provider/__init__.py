"""A real OpenID Connect provider for the single sign-on tests: django-oauth-toolkit in its
OIDC mode, a small Django project of its own run in its own process on 127.0.0.1 (`serve`),
with its own SQLite file and an RS256 key made for the test session. `harness` starts it."""
