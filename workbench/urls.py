from __future__ import annotations

from django.contrib import admin
from django.urls import include, path

from .accounts import views as account_views
from .views import catalogue, dashboard
from .views import editor as views
from .views import impact as impact_views
from .views import keys as key_views
from .views import review as review_views
from .views import strength as strength_views
from .views import versions as version_views
from .views.editor import people, propositions

version = "types/<str:key>/v<int:number>/"
proposition = version + "propositions/<int:pk>/"

urlpatterns = [
    path("", dashboard.dashboard, name="dashboard"),
    path("suite/", include("workbench.scenario_urls")),
    path("admin/", admin.site.urls),
    path("", include("workbench.production_urls")),
    path("sign-in/", account_views.SignInView.as_view(), name="login"),
    path("sign-in/provider/", account_views.sso_start, name="sso_start"),
    path("sign-in/provider/done/", account_views.SsoCallbackView.as_view(), name="sso_callback"),
    path("sign-out/", account_views.sign_out, name="logout"),
    path("source-classes/", catalogue.source_class_list, name="source_class_list"),
    path("source-classes/new/", catalogue.source_class_create, name="source_class_create"),
    path("source-classes/<str:key>/edit/", catalogue.source_class_edit, name="source_class_edit"),
    path(
        "source-classes/propose/", catalogue.source_class_propose, name="source_class_propose_new"
    ),
    path(
        "source-classes/<str:key>/propose/",
        catalogue.source_class_propose,
        name="source_class_propose",
    ),
    path(
        "source-classes/proposals/<int:pk>/",
        catalogue.source_class_proposal,
        name="source_class_proposal",
    ),
    path(
        "source-classes/proposals/<int:pk>/accept/",
        catalogue.source_class_proposal_accept,
        name="source_class_proposal_accept",
    ),
    path(
        "source-classes/proposals/<int:pk>/reject/",
        catalogue.source_class_proposal_reject,
        name="source_class_proposal_reject",
    ),
    path("new-decision-type/", dashboard.decision_type_create, name="decision_type_create"),
    path("types/<str:key>/", views.decision_type_detail, name="decision_type_detail"),
    path("types/<str:key>/people/", people.decision_type_access, name="decision_type_access"),
    path(
        "types/<str:key>/people/remove/",
        people.decision_type_access_revoke,
        name="decision_type_access_revoke",
    ),
    path("signing-keys/", key_views.signing_keys, name="signing_keys"),
    path("signing-keys/new/", key_views.signing_key_create, name="signing_key_create"),
    path("signing-keys/revoke/", key_views.signing_key_revoke, name="signing_key_revoke"),
    path(
        "types/<str:key>/versions/",
        version_views.decision_type_versions,
        name="decision_type_versions",
    ),
    path("types/<str:key>/diff/", version_views.version_diff, name="version_diff"),
    path(
        "types/<str:key>/new-draft/",
        version_views.version_start_draft,
        name="version_start_draft",
    ),
    path(version + "review/", review_views.version_review, name="version_review"),
    path(version + "impact/", impact_views.version_impact, name="version_impact"),
    path(version + "impact/retry/", impact_views.version_impact_retry, name="version_impact_retry"),
    path(version + "strength/", strength_views.version_strength, name="version_strength"),
    path(
        version + "strength/start/",
        strength_views.version_strength_start,
        name="version_strength_start",
    ),
    path(
        version + "strength/add/", strength_views.version_strength_add, name="version_strength_add"
    ),
    path(version + "bundle.json", key_views.version_bundle, name="version_bundle"),
    path(version + "keys.json", key_views.version_key_set, name="version_key_set"),
    path(version + "submit/", review_views.version_submit, name="version_submit"),
    path(version + "withdraw/", review_views.version_withdraw, name="version_withdraw"),
    path(version + "approve/", review_views.version_approve, name="version_approve"),
    path(version + "justify/", impact_views.version_justify, name="version_justify"),
    path(
        version + "request-changes/",
        review_views.version_request_changes,
        name="version_request_changes",
    ),
    path(version + "publish/", review_views.version_publish, name="version_publish"),
    path(version + "retire/", review_views.version_retire, name="version_retire"),
    path(version, views.version_detail, name="version_detail"),
    path(version + "lint/", views.version_panel, {"panel": "lint"}, name="version_lint"),
    path(version + "preview/", views.version_panel, {"panel": "preview"}, name="version_preview"),
    path(version + "history/", views.version_panel, {"panel": "history"}, name="version_history"),
    path(version + "contract.json", views.version_contract_json, name="version_contract_json"),
    path(version + "settings/", views.version_settings, name="version_settings"),
    path(version + "propositions/", propositions.proposition_add, name="proposition_add"),
    path(proposition, propositions.proposition_row, name="proposition_row"),
    path(proposition + "edit/", propositions.proposition_edit, name="proposition_edit"),
    path(proposition + "delete/", propositions.proposition_delete, name="proposition_delete"),
    path(proposition + "move/", propositions.proposition_move, name="proposition_move"),
    path(proposition + "classes/", propositions.accepted_class_add, name="accepted_class_add"),
    path(
        proposition + "classes/move/",
        propositions.accepted_class_move,
        name="accepted_class_move",
    ),
    path(
        proposition + "classes/remove/",
        propositions.accepted_class_remove,
        name="accepted_class_remove",
    ),
]

handler400 = "workbench.views.helpers.bad_request"
