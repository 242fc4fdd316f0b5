"""Selectors say an object is not there (or not visible through the decision type asked for)
with the model's `DoesNotExist`; a page answers that with 404."""

from __future__ import annotations

from collections.abc import Callable

from django.core.exceptions import ObjectDoesNotExist
from django.http import Http404


def or_404[**P, T](lookup: Callable[P, T], *args: P.args, **kwargs: P.kwargs) -> T:
    """`lookup(*args, **kwargs)`, with a missing object turned into a 404 saying which."""
    try:
        return lookup(*args, **kwargs)
    except ObjectDoesNotExist as missing:
        raise Http404(str(missing) or "Not found.") from None
