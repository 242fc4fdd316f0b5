"""Mounted under /suite/ by workbench.urls; every page hangs off a decision type's key."""

from __future__ import annotations

from urllib.parse import quote, unquote

from django.urls import path, register_converter

from .views import archive, corpora, runs, scenario_pages

app_name = "scenarios"


class AnyStringConverter:
    """Any string as one path segment, round-tripped exactly: ids are data.

    Django decodes the path before matching, so an id's own "/" (`invoice/2026/0042`) would
    split it; this converter percent-encodes the whole id first (reverse() then encodes the
    "%" again), and a segment of dots is encoded too, which browsers would otherwise resolve
    as "." or "..". Spaces, "?", "#", "%", new lines and any Unicode come back unchanged.
    """

    regex = "[^/]+"

    def to_python(self, value: str) -> str:
        return unquote(value)

    def to_url(self, value: str) -> str:
        encoded = quote(value, safe="")
        return encoded.replace(".", "%2E") if set(encoded) == {"."} else encoded


register_converter(AnyStringConverter, "anystring")

corpus = "<str:key>/corpora/<int:pk>/"
scenario = "<str:key>/scenarios/<int:pk>/"
run = "<str:key>/runs/<int:pk>/"
result = "<str:key>/runs/<int:run_pk>/results/<int:pk>/"

urlpatterns = [
    path("", runs.index, name="index"),
    path("<str:key>/", runs.suite, name="suite"),
    path("<str:key>/corpora/import/", corpora.corpus_import, name="corpus_import"),
    path(corpus, corpora.corpus_detail, name="corpus_detail"),
    path(corpus + "export.json", corpora.corpus_export, name="corpus_export"),
    path(corpus + "candidates/new/", corpora.candidate_edit, name="candidate_add"),
    path(
        corpus + "candidates/<anystring:candidate_id>/edit/",
        corpora.candidate_edit,
        name="candidate_edit",
    ),
    path(corpus + "archive/", archive.corpus_archive, name="corpus_archive"),
    path(corpus + "restore/", archive.corpus_restore, name="corpus_restore"),
    path(
        corpus + "candidates/<anystring:candidate_id>/archive/",
        archive.candidate_archive,
        name="candidate_archive",
    ),
    path(
        corpus + "candidates/<anystring:candidate_id>/restore/",
        archive.candidate_restore,
        name="candidate_restore",
    ),
    path("<str:key>/scenarios/new/", scenario_pages.scenario_edit, name="scenario_create"),
    path(scenario + "archive/", archive.scenario_archive, name="scenario_archive"),
    path(scenario + "restore/", archive.scenario_restore, name="scenario_restore"),
    path(scenario + "clone/", archive.scenario_clone, name="scenario_clone"),
    path(scenario, scenario_pages.scenario_detail, name="scenario_detail"),
    path(scenario + "edit/", scenario_pages.scenario_edit, name="scenario_edit"),
    path(
        scenario + "expect/",
        scenario_pages.scenario_take_expected,
        name="scenario_take_expected",
    ),
    path(scenario + "compare/", scenario_pages.scenario_compare, name="scenario_compare"),
    path("<str:key>/runs/", runs.run_start, name="run_start"),
    path(run, runs.run_detail, name="run_detail"),
    path(run + "coverage/", runs.run_coverage, name="run_coverage"),
    path(run + "report.json", runs.run_report, name="run_report"),
    path(result, runs.result_packet, name="result_packet"),
    path(result + "diff/", runs.result_diff, name="result_diff"),
]
