"""A scenario list's expected slots, one badge per proposition, written in one call: a list
of 50 scenarios of six expectations each was 1,200 template variables, most of the suite
page's time. Keys and states are escaped as the template escapes them (`html.escape`, which
Django's `escape` calls)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape

from django import template
from django.utils.safestring import SafeString

register = template.Library()

BADGE = '<span class="state state-{}" title="{}">{}: {}</span>'


@register.filter
def expected_badges(slots: Mapping[str, str] | None) -> SafeString:
    if not slots:
        return SafeString('<span class="none">nothing</span>')
    badges = []
    for key, state in slots.items():
        key, state = escape(str(key)), escape(str(state))  # what the template's escaping does
        badges.append(BADGE.format(state, key, key, state))
    return SafeString(" ".join(badges))
