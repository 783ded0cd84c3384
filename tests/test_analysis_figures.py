"""Figures are drawn to be read: no text outside the image, legends off the
data, labels short enough to leave the plot its width, numbers big enough
to read at 100% zoom. Measured with matplotlib's own renderer."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from matplotlib.legend import Legend
from matplotlib.text import Text

from analysis import figures, hay, length, needles, positionality
from analysis.load import Run, rows_to_table
from analysis.options import AnalysisOptions
from analysis.synthetic import SyntheticJudge, reference_judges, synthetic_rows

OPTIONS = AnalysisOptions(n_bootstrap=100, n_permutations=100)


@pytest.fixture(scope="module")
def scored():
    judges = reference_judges() + [SyntheticJudge(name="a-judge-with-a-rather-long-name")]
    return Run(Path("."), {}, rows_to_table(synthetic_rows(judges, size=10, docs_per_cell=3))).scored()


def _drawn(fig):
    fig.set_dpi(figures.DPI)
    fig.canvas.draw()
    return fig.canvas.get_renderer()


def clipped_texts(fig) -> list[str]:
    """Visible, non-empty texts whose bounding box leaves the figure."""
    renderer = _drawn(fig)
    box = fig.bbox
    tick_labels, drawn = set(), set()
    for axis in (a for ax in fig.axes for a in (ax.xaxis, ax.yaxis)):
        for tick in axis.get_major_ticks() + axis.get_minor_ticks():
            tick_labels.update((id(tick.label1), id(tick.label2)))
        for tick in axis._update_ticks():  # the ticks inside the view: the only ones drawn
            drawn.update((id(tick.label1), id(tick.label2)))
    out = []
    for text in fig.findobj(Text):
        if not text.get_visible() or not text.get_text().strip() or (id(text) in tick_labels and id(text) not in drawn):
            continue
        ext = text.get_window_extent(renderer)
        if ext.x0 < box.x0 - 1 or ext.y0 < box.y0 - 1 or ext.x1 > box.x1 + 1 or ext.y1 > box.y1 + 1:
            out.append(text.get_text())
    return out


def legends_over_axes(fig) -> list[str]:
    """Legends whose box overlaps the data area of any axes or a title."""
    renderer = _drawn(fig)
    hits = []
    for legend in fig.findobj(Legend):
        box = legend.get_window_extent(renderer)
        for ax in fig.axes:
            if ax.get_visible() and box.overlaps(ax.get_window_extent(renderer)):
                hits.append(f"{[t.get_text() for t in legend.get_texts()]} over {ax.get_title()!r}")
        titles = [fig._suptitle] + [t for ax in fig.axes for t in (ax.title, ax._left_title)]
        for title in titles:
            if title is not None and title.get_text() and box.overlaps(title.get_window_extent(renderer)):
                hits.append(f"{[t.get_text() for t in legend.get_texts()]} over title {title.get_text()!r}")
    return hits


def test_bias_figure_of_24_conditions_keeps_its_labels_and_its_width(scored):
    rows = positionality.positionality(scored, OPTIONS)
    assert len(rows) == 24
    fig = figures.bias_figure(rows)
    assert clipped_texts(fig) == []
    renderer = _drawn(fig)
    for ax in fig.axes:
        assert ax.get_window_extent(renderer).width > 0.6 * fig.bbox.width  # the old figure left the plot ~40%
        assert all(len(t.get_text()) <= 28 for t in ax.get_yticklabels())
        assert ax.get_title(loc="left")  # facet title: judge · prompt
    assert legends_over_axes(fig) == []


def test_position_grid_numbers_are_legible_and_small_multiples_have_axes(scored):
    grid = positionality.position_grids(scored)[0]
    fig = figures.position_figure(grid, positionality.mirror_cell_emd(scored, OPTIONS)[:3])
    assert clipped_texts(fig) == []
    renderer = _drawn(fig)
    cell_numbers = [t for t in fig.axes[0].texts if t.get_text().rstrip("*").isdigit()]
    assert len(cell_numbers) == 100
    assert min(t.get_window_extent(renderer).height for t in cell_numbers) >= 10  # pixels at 100%; was ~6
    small = [ax for ax in fig.axes if ax.get_title().startswith("|i − j|")]
    assert len(small) == 9
    for ax in small:
        assert ax.get_xlim() == (0.0, 100.0) and len(ax.get_xticks()) >= 3 and len(ax.get_yticks()) >= 2
        assert "n=" in ax.get_title()
    assert legends_over_axes(fig) == []


def test_constant_scores_give_a_readable_panel_not_a_flat_spike(scored):
    constant = scored.select(scored.mask(judge="planted"))
    grid = positionality.position_grids(constant)[0]
    grid.scores.update({cell: np.full(values.size, 100.0) for cell, values in grid.scores.items()})
    fig = figures.position_figure(grid, [])
    top = max(line.get_ydata().max() for ax in fig.axes if ax.get_title().startswith("|i − j|") for line in ax.lines)
    assert top == 1.0  # every score in one 5-point bin: a full-height step on a labelled axis


def test_legends_stay_off_the_data(scored):
    means, *_ = needles.needle_comparison(scored, OPTIONS)
    rows, _ = length.length_profile(scored)
    _, curves = hay.hay_comparison(scored, OPTIONS)
    planted_length = [r for r in rows if r.judge == "planted"]
    planted_curves = [c for c in curves if c.judge == "planted"]
    for fig in (figures.needle_figure(means), figures.length_figure(planted_length), figures.hay_figure(planted_curves)):
        assert legends_over_axes(fig) == []
        assert clipped_texts(fig) == []


def test_fingerprint_figure_is_not_clipped(scored):
    assert clipped_texts(figures.fingerprint_figure(scored)) == []


def test_heatmap_stars_only_holm_significant_cells_and_colours_the_judges_range(scored):
    import msgspec

    grid = positionality.position_grids(scored)[0]
    base = [r for r in positionality.mirror_cell_emd(scored, OPTIONS) if (r.judge, r.prompt_id, r.prompt_version, r.needle, r.hay) == grid.key]
    corrected = msgspec.structs.replace(base[0], exceeds=True, p_holm=0.01)
    uncorrected = msgspec.structs.replace(base[1], exceeds=True, p_holm=0.40)  # above its null, not after Holm
    fig = figures.position_figure(grid, [corrected, uncorrected], alpha=0.05, vrange=(91.0, 100.0))
    starred = {(round(t.get_position()[1]), round(t.get_position()[0])) for t in fig.axes[0].texts if t.get_text().endswith("*")}
    cell = (corrected.i, corrected.j)
    assert starred == {cell, cell[::-1]}  # the cell and its mirror, nothing for the uncorrected exceedance
    assert "Holm" in fig.axes[0].get_title() and f"n={int(grid.n[grid.n > 0].min())}" in fig.axes[0].get_title()
    image = fig.axes[0].images[0]
    assert image.get_clim() == (91.0, 100.0) and "91–100" in fig.axes[1].get_ylabel()  # the colour bar says its span
    narrow = figures.colour_range([grid])
    assert narrow[0] == np.floor(np.nanmin(grid.mean)) and narrow[1] == np.ceil(np.nanmax(grid.mean))


def test_length_figure_ticks_whole_lengths_and_names_them_L(scored):
    rows, _ = length.length_profile(scored)
    planted = [r for r in rows if r.judge == "planted"]
    fig = figures.length_figure(planted)
    _drawn(fig)
    for ax in fig.axes:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert ticks and all(float(t).is_integer() for t in ticks), ticks
        assert "L = i + j + 1" in ax.get_xlabel() and "per length" in ax.get_title()
        assert " k " not in ax.get_xlabel() and "k = " not in ax.get_xlabel()
