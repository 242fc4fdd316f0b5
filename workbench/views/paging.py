"""Every list a page at a time: one helper over Django's `Paginator` and one template,
`workbench/_pager.html`, that shows where the page is and links to its neighbours.

A page holds `PAGE_SIZE` rows: two queries whatever the list's length (the count and the
page's rows). Its links keep every other query parameter, so the filters a list was asked
with hold on every page, and a page with several lists pages each with its own parameter
(`?page=`, `?runs_page=`). A page number that is not a whole number of at least 1 answers
400 naming the parameter (as `parameters.int_parameter` does); a well-formed number past
the last page answers 404, as a version number past the last does.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.core.exceptions import BadRequest
from django.core.paginator import EmptyPage, Page, Paginator
from django.http import Http404

from workbench.http import HtmxRequest

from .parameters import int_parameter

PAGE_SIZE = 50

# Messages tests assert on.
NOT_A_PAGE = "The parameter ‘{name}’ must be a page number, 1 or more; ‘{value}’ is not."
# The 404's reason, for logs and debugging: the site's 404 page shows none.
PAST_THE_END = "There is no page {number} of this list: it has {pages} page(s)."


@dataclass(frozen=True)
class Listing:
    """One page of a list and the query strings of the pages around it (None at either
    end), and their URLs on `path`."""

    page: Page
    parameter: str
    path: str
    previous_query: str | None
    next_query: str | None

    @property
    def previous_url(self) -> str | None:
        return None if self.previous_query is None else self.path + self.previous_query

    @property
    def next_url(self) -> str | None:
        return None if self.next_query is None else self.path + self.next_query

    def __iter__(self) -> Any:
        return iter(self.page.object_list)

    def __bool__(self) -> bool:
        return self.page.paginator.count > 0

    @property
    def count(self) -> int:
        return self.page.paginator.count

    @property
    def rows(self) -> list[Any]:
        return list(self.page.object_list)


def paged(
    request: HtmxRequest,
    items: Any,
    *,
    parameter: str = "page",
    per_page: int = PAGE_SIZE,
    path: str | None = None,
    count: int | None = None,
) -> Listing:
    """The page of `items` (a queryset, ordered, or a sequence) that `?{parameter}=` asks for,
    page 1 without one; its links go to `path` (the request's by default: a panel that htmx
    fetches from its own URL links to the page it sits on). `count`, when the caller read
    it already, is the list's length (no count query then)."""
    number = int_parameter(request.GET, parameter)
    if number is not None and number < 1:
        raise BadRequest(NOT_A_PAGE.format(name=parameter, value=number))
    paginator = Paginator(items, per_page)
    if count is not None:
        paginator.count = count  # a cached property: set, it is not asked of the database
    try:
        page = paginator.page(number or 1)
    except EmptyPage:
        raise Http404(PAST_THE_END.format(number=number, pages=paginator.num_pages)) from None
    # The page's rows, fetched once (the template iterates them and asks whether there are
    # any), and not asked for at all when the count says there are none.
    page.object_list = list(page.object_list) if paginator.count else []

    def query(to: int) -> str:
        parameters = request.GET.copy()
        parameters.pop("partial", None)
        parameters[parameter] = str(to)
        return f"?{parameters.urlencode()}"

    return Listing(
        page=page,
        parameter=parameter,
        path=request.path if path is None else path,
        previous_query=query(page.previous_page_number()) if page.has_previous() else None,
        next_query=query(page.next_page_number()) if page.has_next() else None,
    )
