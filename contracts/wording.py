"""Sentences that name what people and services typed, said two ways from one template.

A scenario's name, a candidate's id, a receipt's decision id, a username or a justification
may hold any character, among them the bidirectional controls (U+202E RIGHT-TO-LEFT
OVERRIDE and the like) that reorder the text after them on a page. A sentence that names
them is written once, as a `str.format` template of our own words with a placeholder per
name, and said by one of two `Words`:

* `PLAIN` — the text stored in reports and shown on the command line: each name in single
  quotes, nothing escaped;
* `HTML` — for pages: everything escaped (as `format_html` does), each name in its own `<bdi>`
  inside the quotes, so no name can reorder the words around it.

Templates never contain a name, only placeholders: the name is always a value, so the HTML
form always escapes and isolates it. Values that are our own words (a state, a number) are
passed as they are; `Words.name` / `Words.names` mark the ones to isolate.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from html import escape
from typing import Any

from django.utils.safestring import SafeString


class Words:
    """The plain way of saying a sentence (`PLAIN`); `Html` says it for a page."""

    def name(self, value: Any) -> str:
        """One name, quoted."""
        return f"'{value}'"

    def names(self, values: Iterable[Any], *, empty: str = "nothing") -> str:
        """Names as a list in words: 'a', 'b' and 'c' (`empty` for none)."""
        return self.listed([self.name(v) for v in values], empty=empty)

    def listed(self, parts: list[Any], *, empty: str = "nothing", last: str = " and ") -> str:
        """Parts already said (names, clauses) as a list in words."""
        if not parts:
            return empty
        if len(parts) == 1:
            return parts[0]
        return self.joined(parts[:-1], ", ") + last + parts[-1]

    def joined(self, parts: Iterable[Any], separator: str) -> str:
        return separator.join(str(part) for part in parts)

    def say(self, template: str, /, **values: Any) -> str:
        """`template` (our words; never a name) with its placeholders filled."""
        return template.format(**values)

    def text(self, value: Any) -> str:
        """A whole text someone else wrote (a compiler message, a justification), as is."""
        return str(value)


def _escaped(value: Any) -> str:
    """`conditional_escape` without its lazy-string wrapper: a safe string as it is, anything
    else through `html.escape`, which Django's `escape` calls. An impact page says a few
    thousand sentences, and the wrapper was most of their cost."""
    html = getattr(value, "__html__", None)
    return html() if html is not None else escape(str(value))


def _format(template: str, /, *args: Any, **values: Any) -> SafeString:
    """`format_html`: the template (our words) with its values escaped."""
    escaped = {key: _escaped(value) for key, value in values.items()}
    return SafeString(template.format(*map(_escaped, args), **escaped))


class Html(Words):
    """Escaped, each name (and each text someone else wrote) in its own `<bdi>`."""

    def name(self, value: Any) -> SafeString:
        return _format("'<bdi>{}</bdi>'", value)

    def listed(
        self, parts: list[Any], *, empty: str = "nothing", last: str = " and "
    ) -> SafeString:
        if not parts:
            return _format("{}", empty)
        if len(parts) == 1:
            return _format("{}", parts[0])
        return _format("{}{}{}", self.joined(parts[:-1], ", "), last, parts[-1])

    def joined(self, parts: Iterable[Any], separator: str) -> SafeString:
        return SafeString(_escaped(separator).join(_escaped(part) for part in parts))

    def say(self, template: str, /, **values: Any) -> SafeString:
        return _format(template, **values)

    def text(self, value: Any) -> SafeString:
        return _format("<bdi>{}</bdi>", value)


PLAIN = Words()
HTML = Html()


def isolated(value: Any) -> SafeString:
    """`value` escaped in a `<bdi>` of its own: for a text printed whole."""
    return HTML.text(value)


def said_again(stored: Any, say: Callable[..., Any]) -> SafeString:
    """A stored sentence for a page: `say(HTML)` when `say(PLAIN)` is exactly `stored` (the
    same words and names), else `stored` escaped and isolated whole (a sentence stored by an
    older release, or from facts of another shape). `say(words)` gives the sentence in those
    words; it is typed loosely so that a lambda may bind loop variables as defaults."""
    try:
        if say(PLAIN) == stored:
            return say(HTML)
    except (KeyError, TypeError, ValueError, IndexError):
        pass
    return isolated(stored)


__all__ = ["HTML", "PLAIN", "Html", "Words", "isolated", "said_again"]
