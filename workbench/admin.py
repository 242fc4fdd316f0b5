"""Django's admin, for operators (staff only, as the admin always is): people and site groups
(django.contrib.auth's own admin), the task queue (django-tasks-db's), and the workbench's
records read-only. Contracts, reviews and roles change only through the workbench's actions,
which check permissions and write the audit trail; the admin must not be a way around them.
"""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from contracts.models import AuditEvent, DecisionType
from scenarios.models import SuiteRun
from workers.models import WorkerHeartbeat

admin.site.site_header = "Evidence Workbench administration"
admin.site.site_title = "Evidence Workbench admin"
admin.site.index_title = "Operations"


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["created_at", "actor", "action", "decision_type", "summary"]
    list_filter = ["action"]
    search_fields = ["summary", "actor__username", "decision_type__key"]
    list_select_related = ["actor", "decision_type"]
    date_hierarchy = "created_at"


@admin.register(DecisionType)
class DecisionTypeAdmin(ReadOnlyAdmin):
    list_display = ["key", "title"]
    search_fields = ["key", "title"]


@admin.register(SuiteRun)
class SuiteRunAdmin(ReadOnlyAdmin):
    list_display = ["pk", "decision_type", "version", "status", "done", "total"]
    list_filter = ["status"]
    list_select_related = ["decision_type", "version"]


@admin.register(WorkerHeartbeat)
class WorkerHeartbeatAdmin(ReadOnlyAdmin):
    list_display = ["worker", "seen_at"]
