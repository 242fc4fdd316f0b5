"""The CSS classes of the flip matrix's cells, picked from what the selectors say a cell is
(flipped, failed, its verdict): the look belongs to the pages, not to the data."""

from __future__ import annotations

from django import template

from scenarios.selectors import Cell, SummaryCell

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
