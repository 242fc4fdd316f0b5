"""Mounted under /suite/ by workbench.urls; every page hangs off a decision type's key."""

from __future__ import annotations

from django.urls import path

from . import views

app_name = "scenarios"

corpus = "<str:key>/corpora/<int:pk>/"
scenario = "<str:key>/scenarios/<int:pk>/"
run = "<str:key>/runs/<int:pk>/"
result = "<str:key>/runs/<int:run_pk>/results/<int:pk>/"

urlpatterns = [
    path("", views.index, name="index"),
    path("<str:key>/", views.suite, name="suite"),
    path("<str:key>/corpora/import/", views.corpus_import, name="corpus_import"),
    path(corpus, views.corpus_detail, name="corpus_detail"),
    path(corpus + "export.json", views.corpus_export, name="corpus_export"),
    path(corpus + "candidates/new/", views.candidate_edit, name="candidate_add"),
    path(
        corpus + "candidates/<str:candidate_id>/edit/", views.candidate_edit, name="candidate_edit"
    ),
    path("<str:key>/scenarios/new/", views.scenario_edit, name="scenario_create"),
    path(scenario, views.scenario_detail, name="scenario_detail"),
    path(scenario + "edit/", views.scenario_edit, name="scenario_edit"),
    path(scenario + "expect/", views.scenario_take_expected, name="scenario_take_expected"),
    path(scenario + "compare/", views.scenario_compare, name="scenario_compare"),
    path("<str:key>/runs/", views.run_start, name="run_start"),
    path(run, views.run_detail, name="run_detail"),
    path(run + "coverage/", views.run_coverage, name="run_coverage"),
    path(run + "report.json", views.run_report, name="run_report"),
    path(result, views.result_packet, name="result_packet"),
    path(result + "diff/", views.result_diff, name="result_diff"),
]
