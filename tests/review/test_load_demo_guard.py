"""`load_demo` resets the demo people's passwords to published ones, so it refuses a
database that holds anyone else unless told explicitly."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from contracts.models import DecisionType
from workbench.management.commands import load_demo

pytestmark = pytest.mark.django_db


def test_load_demo_refuses_a_database_with_real_users_and_writes_nothing(make_user):
    users = get_user_model().objects
    make_user("alice")
    olivia = make_user("olivia")
    with pytest.raises(CommandError) as raised:
        call_command("load_demo", stdout=io.StringIO())
    expected = load_demo.REAL_USERS.format(people="alice", demo="olivia, rafael, vera, cora")
    assert str(raised.value) == expected
    olivia.refresh_from_db()
    assert olivia.check_password("olivia-password")
    assert not users.filter(username__in=["rafael", "vera"]).exists()
    assert not DecisionType.objects.exists()


def test_load_demo_on_request_resets_the_demo_users(make_user):
    make_user("alice")
    call_command("load_demo", "--force-demo-users", stdout=io.StringIO())
    assert get_user_model().objects.get(username="olivia").check_password("olivia-local-demo")


def test_load_demo_runs_on_a_fresh_database_and_again(db):
    call_command("load_demo", stdout=io.StringIO())
    call_command("load_demo", stdout=io.StringIO())
    assert DecisionType.objects.count() == 2
