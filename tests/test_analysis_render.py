"""Values are formatted one way, and tables wrap instead of overflowing."""

from __future__ import annotations

import math

import msgspec

from analysis.render import TableSpec, format_p, format_value, html_table


def test_p_values_have_one_format():
    assert format_p(3.3e-319) == "< 0.001" and format_p(0.0) == "< 0.001"
    assert format_p(0.0123) == "= 0.012" and format_p(1.0) == "= 1.000" and format_p(math.nan) == "–"
    assert format_value(3.3e-319, "p_holm") == "< 0.001" and format_value(0.04, "p_value") == "0.040"
    # other small numbers are never printed in scientific notation
    assert format_value(3.3e-5, "mean") == "0.000" and "e" not in format_value(-2.5e-7, "gap")
    assert format_value(123.456, "mean") == "123.46" and format_value(True, "flagged") == "yes"


class Row(msgspec.Struct):
    judge: str
    top_levels: str
    p_holm: float
    flagged: bool


def test_long_text_cells_wrap_and_p_values_render_alike():
    spec = TableSpec("t", "T", "", Row, [Row("j", "5-point bins 95–100 (96%), 90–95 (3%), 85–90 (0.4%)", 1e-300, True)])
    page = html_table(spec)
    assert '<td class="text">5-point bins' in page and "<td>&lt; 0.001</td>" in page and '<td class="flag">yes</td>' in page
    assert "<th>top levels</th>" in page  # headers wrap at word breaks
