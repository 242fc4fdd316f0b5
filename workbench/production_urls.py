"""What production uses and what manages it: the machine API under `api/v1/`, service tokens,
the replay of recorded decisions and the contract-test files (included from `urls.py`)."""

from __future__ import annotations

from django.urls import include, path

from .views import tokens as views

urlpatterns = [
    path("api/v1/", include("workbench.api")),
    path("tokens/", views.token_list, name="token_list"),
    path("tokens/<int:pk>/revoke/", views.token_revoke, name="token_revoke"),
    path(
        "types/<str:key>/v<int:number>/recorded-decisions/replay/",
        views.recorded_decisions_replay,
        name="recorded_decisions_replay",
    ),
    path("types/<str:key>/contract-tests.zip", views.contract_tests_zip, name="contract_tests_zip"),
    path(
        "types/<str:key>/contract-tests/import/",
        views.contract_tests_import,
        name="contract_tests_import",
    ),
]
