from __future__ import annotations

import json
import os

from django.contrib.auth import views as auth_views
from django.contrib.auth.models import Group, User
from django.http import HttpRequest, HttpResponse, HttpResponseForbidden
from django.urls import include, path
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_POST


@csrf_exempt
@require_POST
def set_groups(request: HttpRequest) -> HttpResponse:
    """The test's hand on the provider's directory: put a person in exactly these groups."""
    if request.headers.get("X-Test-Token") != os.environ["OIDC_PROVIDER_ADMIN_TOKEN"]:
        return HttpResponseForbidden()
    body = json.loads(request.body)
    user = User.objects.get(username=body["username"])
    user.groups.set([Group.objects.get_or_create(name=name)[0] for name in body["groups"]])
    return HttpResponse(status=204)


urlpatterns = [
    path("o/", include("oauth2_provider.urls", namespace="oauth2_provider")),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("test/groups/", set_groups),
]
