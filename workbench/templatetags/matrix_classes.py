"""The flip matrix's cells: their CSS classes, picked from what the selectors say a cell is
(flipped, failed, its verdict; the look belongs to the pages, not to the data), and their
HTML."""

from __future__ import annotations

from django import template
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString

from scenarios.selectors import Cell, MatrixRow, SummaryCell

register = template.Library()


@register.filter
def cell_classes(cell: Cell) -> str:
    """A matrix cell: `cell`, then `flipped`, `failed` and `verdict-<kind>` as they apply
    (a cell with none of them is plain), then `state-<state>`, which colours it."""
    marks = ""
    if cell.marked:
        marks = (
            (" flipped" if cell.flipped else "")
            + (" failed" if cell.failed else "")
            + (f" verdict-{cell.verdict}" if cell.verdict else "")
        )
    return f"cell{marks} state-{cell.state}"


@register.filter
def summary_cell_classes(cell: SummaryCell) -> str:
    """A verdict summary cell: `verdict-<worst kind>`, or `verdict-none`."""
    return f"verdict-{cell.worst}" if cell.worst else "verdict-none"


@register.simple_tag
def matrix_cells(row: MatrixRow) -> SafeString:
    """A matrix row's cells: each shows its state; one that says more (`Cell.marked`) links to
    the row's compile focused on its proposition, its meaning on hover. Built here rather than
    in the template: a page holds hundreds of cells, and the template's look-ups for each were
    most of the page's time."""
    return format_html_join("", "{}", ((_cell(cell),) for cell in row.cells))


def _cell(cell: Cell) -> SafeString:
    if not cell.marked:
        return format_html('<td class="{}">{}</td>', cell_classes(cell), cell.state)
    expected = (
        format_html('<span class="expected">expected {}</span>', cell.expected)
        if cell.expected
        else ""
    )
    return format_html(
        '<td class="{}" data-proposition="{}"><a href="{}" hx-get="{}" title="{}">{}{}</a></td>',
        cell_classes(cell), cell.proposition, cell.url, cell.url, cell.title, cell.state, expected,
    )  # fmt: skip
