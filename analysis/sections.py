"""The sections of the report: each runs its analyses and turns their rows
into tables, figures and findings. Instrument checks come first. Every
finding names its judge, prompt id and version and the n it rests on.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import msgspec

from analysis import agreement, checks, figures, fingerprint, hay, length, needles, positionality, prompts, stability
from analysis.load import Run, Table
from analysis.options import AnalysisOptions
from analysis.render import FigureSpec, Section, TableSpec, format_p

def rater(row: Any) -> str:
    return f"{row.judge} ({row.prompt_id}@{row.prompt_version})"


def _ci(est: float, low: float, high: float, confidence: float) -> str:
    return f"{est:+.2f} [{low:+.2f}, {high:+.2f}] ({confidence:.0%} CI)"


# ---------------------------------------------------------------------------
# Sections


def checks_section(run: Run, options: AnalysisOptions, pairs: Sequence[agreement.PairAgreementRow]) -> Section:
    rows = run.rows
    scored = run.scored()
    oracle = checks.oracle_pass_rates(rows, options)
    failures = checks.failure_rates(rows, options)
    swaps = checks.order_swap_symmetry(rows, options)
    nulls, negatives = checks.control_checks(rows, options)
    res = checks.resolution(scored, options)
    sec = Section(
        title="Instrument checks",
        intro="Read these before any statistic. A flagged judge or condition is not fit for analysis as it stands.",
    )
    verdicts = checks.judge_verdicts(rows, failures, swaps, nulls, negatives, res)
    for v in verdicts:
        if v.fit:
            sec.findings.append(f"{rater(v)}: passes every instrument check run here ({v.n} experimental rows).")
        else:
            sec.findings.append(f"FLAG: {rater(v)} is not fit for analysis as it stands: {v.reasons}.")
    sec.tables += [
        TableSpec("check_verdicts", "Verdict per judge", "A judge is fit when no instrument check below flags it.",
                  checks.JudgeVerdict, verdicts),  # fmt: skip
        TableSpec("check_oracle", "Item-oracle pass rate", "Per needle × hay over distinct (document, position) pairs; "
                  "judge-independent (the pairs every judge saw).", checks.OracleRow, oracle),  # fmt: skip
        TableSpec("check_failures", "Failures and output length per condition",
                  f"Conditions with failure rate > {options.thresholds.max_failure_rate:.0%} are not fit for analysis.",
                  checks.FailureRow, failures),  # fmt: skip
        TableSpec("check_order_swap", "Order-swap symmetry", "Same pair with Document 1 and 2 swapped; diff = score(21) − score(12). "
                  f"Flagged: a shift whose CI excludes 0 and exceeds {options.thresholds.order_swap_shift_tolerance:g} points, "
                  f"or a mean |diff| more than {options.thresholds.order_swap_tolerance:g} points above the retest noise "
                  "(replicates of the same items; without replicates only the shift is judged).",
                  checks.OrderSwapRow, swaps),  # fmt: skip
        TableSpec("check_null_edit", "Null-edit control", "Whitespace / line-break / formatting-only edits should score like identical text.",
                  checks.NullEditRow, nulls),  # fmt: skip
        TableSpec("check_negative", "Negative control", "Two unrelated documents of the same length must land at the bottom of the scale.",
                  checks.NegativeRow, negatives),  # fmt: skip
        TableSpec("check_resolution", "Resolution", "Share of scores on the two adjacent levels holding the most.",
                  checks.ResolutionRow, res),  # fmt: skip
    ]
    counts = checks.manifest_oracle_counts(run.manifest)
    if counts:
        sec.findings.append("Pair generation recorded oracle counts: " + ", ".join(f"{k} = {v}" for k, v in counts.items()) + ".")
    for r in oracle:
        if r.flagged:
            sec.findings.append(f"FLAG: item oracle passed for only {r.pass_rate:.1%} of {r.needle}/{r.hay} pairs (n={r.n_pairs}).")
    for r in failures:
        if not r.fit_for_analysis:
            sec.findings.append(
                f"FLAG: {rater(r)} {r.needle}/{r.hay} control={r.control or 'none'} order={r.order}: failure rate "
                f"{r.failure_rate:.1%} (refused {r.refused_rate:.1%}, unparseable {r.unparseable_rate:.1%}, "
                f"error {r.error_rate:.1%}; n={r.n}) — not fit for analysis."
            )
    for r in swaps:
        sec.findings.append(
            f"{'FLAG: ' if r.flagged else ''}{rater(r)} order swap: mean |diff| {r.mean_abs_diff:.2f} "
            + (f"against retest noise {r.retest_abs_diff:.2f} (n={r.n_retest_pairs}), " if r.n_retest_pairs
               else "(no replicates to tell it from noise), ")
            + f"signed {_ci(r.mean_signed_diff, r.low, r.high, r.confidence)}, n={r.n_pairs} pairs."
        )
    for r in nulls:
        sec.findings.append(
            f"{'FLAG: ' if r.flagged else ''}{rater(r)} null edits score {r.mean:.1f} vs identical text "
            f"{r.mean_identical:.1f} (gap {r.gap:+.1f}; n={r.n}, n_identical={r.n_identical})."
        )
    for r in negatives:
        sec.findings.append(
            f"{'FLAG: ' if r.flagged else ''}{rater(r)} negative controls: mean {r.mean:.1f}, "
            f"{r.share_at_bottom:.0%} at or below {r.ceiling:g} (n={r.n})."
        )
    for r in res:
        if r.flagged:
            sec.findings.append(
                f"FLAG: {rater(r)} puts {r.adjacent_share:.0%} of scores on {r.level_low:g} and {r.level_high:g} (n={r.n}): too coarse."
            )
    for r in pairs:  # the table is the agreement section's (judge_agreement_ci)
        sec.findings.append(
            f"{r.judge_a} ({r.prompt_a_id}@{r.prompt_a_version}) vs {r.judge_b} ({r.prompt_b_id}@{r.prompt_b_version}): "
            f"Krippendorff's α ({r.level}) {r.alpha:.3f} [{r.alpha_low:.3f}, {r.alpha_high:.3f}] ({r.confidence:.0%} CI) "
            f"over n={r.n} items both scored; {agreement.alpha_sentence(r.alpha)}"
        )
    return sec


def positionality_section(scored: Table, options: AnalysisOptions, make_figures: bool) -> Section:
    pos = positionality.positionality(scored, options)
    emd = positionality.mirror_cell_emd(scored, options)
    sec = Section(
        title="Positionality",
        intro="KS test needles in the first half (i < j) vs the second half (i > j), Holm-corrected over all tests of the run. "
        "Early-positionality bias = mean(second half) − mean(first half): positive means early needles lower the score "
        "more. EMD between each cell (i, j) and its mirror (j, i) against a label-permutation null "
        f"({options.n_permutations} permutations).",
    )
    sec.tables.append(TableSpec("positionality", "First vs second half", "", positionality.PositionalityRow, pos))
    exceeding = [r for r in emd if r.exceeds]
    sec.tables.append(TableSpec("positionality_emd_exceeding", "Cells whose EMD exceeds the permutation null (95th percentile, uncorrected; p_holm is the corrected test)",
                                "All cells are in positionality_emd_cells.csv.", positionality.CellEmdRow, exceeding))  # fmt: skip
    sec.tables.append(TableSpec("positionality_emd_cells", "EMD per mirror cell pair", "", positionality.CellEmdRow, emd))
    for r in pos:
        verdict = "significant after Holm" if r.significant else "not significant after Holm"
        sec.findings.append(
            f"{rater(r)} {r.needle}/{r.hay}: early-positionality bias {_ci(r.bias, r.bias_low, r.bias_high, r.confidence)}, "
            f"KS D={r.ks_statistic:.3f}, p_Holm {format_p(r.p_holm)} — {verdict} (n={r.n_first}+{r.n_second})."
        )
    for key, cells in _group_rows(emd, 3).items():
        hits = sum(r.exceeds for r in cells)
        n_rows = sum(r.n_ij + r.n_ji for r in cells)
        sec.findings.append(
            f"{key[0]} ({key[1]}@{key[2]}): {hits} of {len(cells)} mirror cell pairs exceed the 95th percentile of their "
            f"EMD permutation null ({sum(r.p_holm <= options.alpha for r in cells)} after Holm within each grid; n={n_rows})."
        )
    if make_figures and pos:
        sec.figures.append(FigureSpec("positionality_bias", "Early-positionality bias per condition", figures.figure_bytes(figures.bias_figure(pos))))
    if make_figures:
        by_grid: dict[tuple, list] = {}
        for r in emd:
            by_grid.setdefault((r.judge, r.prompt_id, r.prompt_version, r.needle, r.hay), []).append(r)
        grids = positionality.position_grids(scored)
        ranges = {rater_key: figures.colour_range([g for g in grids if g.key[:3] == rater_key]) for rater_key in {g.key[:3] for g in grids}}
        for grid in grids:
            name = "position_" + "_".join(file_slug(v) for v in grid.key)
            fig = figures.position_figure(grid, by_grid.get(grid.key, []), alpha=options.alpha, vrange=ranges[grid.key[:3]])
            sec.figures.append(FigureSpec(name, "Position grid " + " · ".join(grid.key), figures.figure_bytes(fig)))
    return sec


def length_section(scored: Table, make_figures: bool) -> Section:
    rows, summaries = length.length_profile(scored)
    sec = Section(title="Document length", intro="Mean and sd of scores by document length L = i + j + 1 sentences (the table's "
                  "column k) against the 100·(L−1)/L sentence-overlap reference. (The config's k is the largest position i, j.)")  # fmt: skip
    sec.tables.append(TableSpec("length_summary", "Share of lengths above the reference", "", length.LengthSummary, summaries))
    sec.tables.append(TableSpec("length_by_k", "Scores by length", "", length.LengthRow, rows))
    for s in summaries:
        if s.needle == length.POOLED:
            sec.findings.append(
                f"{rater(s)} hay {s.hay}: mean score above 100·(L−1)/L at {s.n_above} of {s.n_lengths} lengths (n={s.n})."
            )
    if make_figures:
        for key, group in _group_rows(rows, 3).items():
            sec.figures.append(FigureSpec("length_" + "_".join(file_slug(v) for v in key), "Length " + " · ".join(key),
                                          figures.figure_bytes(figures.length_figure(group))))  # fmt: skip
    return sec


def needle_section(scored: Table, options: AnalysisOptions, make_figures: bool) -> Section:
    means, orderings, pairs, gaps = needles.needle_comparison(scored, options)
    sec = Section(title="Needle type", intro="Mean score per needle type, pairwise two-sample KS tests (Bonferroni within judge × prompt × hay) "
                  "and the con − neg gap. In an ordering, a > b says the corrected KS test of the neighbours a and b is "
                  "significant; a ≈ b says it is not.")  # fmt: skip
    sec.tables += [
        TableSpec("needle_ordering", "Ordering of mean scores", "", needles.NeedleOrdering, orderings),
        TableSpec("needle_means", "Mean score per needle", "", needles.NeedleMean, means),
        TableSpec("needle_pairs_ks", "Pairwise KS tests", "", needles.NeedlePairKs, pairs),
        TableSpec("needle_con_neg_gap", "con − neg gap", "", needles.ConNegGap, gaps),
    ]
    for o in orderings:
        sec.findings.append(f"{rater(o)} hay {o.hay}: {o.ordering} (n={o.n}).")
    for g in gaps:
        sec.findings.append(f"{rater(g)} hay {g.hay}: con − neg gap {_ci(g.gap, g.low, g.high, g.confidence)} (n={g.n_con}+{g.n_neg}).")
    if make_figures and means:
        sec.figures.append(FigureSpec("needle_means", "Mean score by needle type", figures.figure_bytes(figures.needle_figure(means))))
    return sec


def hay_section(scored: Table, options: AnalysisOptions, make_figures: bool) -> Section:
    shifts, curves = hay.hay_comparison(scored, options)
    sec = Section(title="Hay type", intro="Mean difference rand − orig per needle (positive: more lenient with random hay) and the percentile shift curve.")
    sec.tables += [
        TableSpec("hay_shift", "rand − orig mean difference", "", hay.HayShift, shifts),
        TableSpec("hay_percentile_shift", "Percentile shift orig → rand", "", hay.PercentileShift, curves),
    ]
    for s in shifts:
        sec.findings.append(f"{rater(s)} {s.needle}: rand − orig {_ci(s.shift, s.low, s.high, s.confidence)} (n={s.n_orig}+{s.n_rand}).")
    if make_figures:
        for key, group in _group_rows(curves, 3).items():
            sec.figures.append(FigureSpec("hay_shift_" + "_".join(file_slug(v) for v in key), "Percentile shift " + " · ".join(key),
                                          figures.figure_bytes(figures.hay_figure(group))))  # fmt: skip
    return sec


def prompt_section(scored: Table, options: AnalysisOptions) -> Section:
    pairs = prompts.prompt_comparison(scored, options)
    nulls = prompts.null_experiment(scored, options)
    sec = Section(title="Prompts and the null experiment", intro="Prompt families compared for the same judge (mean difference b − a, KS, "
                  "Bonferroni within judge); identical documents (needle none) should score 100.")  # fmt: skip
    sec.tables += [
        TableSpec("prompt_comparison", "Prompt families for one judge", "Empty when no judge ran under two prompts.", prompts.PromptPair, pairs),
        TableSpec("null_experiment", "Null experiment", "", prompts.NullExperiment, nulls),
    ]
    for r in nulls:
        sec.findings.append(
            f"{rater(r)} hay {r.hay}: identical documents score {r.mean:.2f} [{r.low:.2f}, {r.high:.2f}], "
            f"{r.share_100:.0%} exactly 100 (n={r.n})."
        )
    for p in pairs:
        if p.significant:
            sec.findings.append(
                f"{p.judge} {p.needle}/{p.hay}: {p.prompt_b_id}@{p.prompt_b_version} − {p.prompt_a_id}@{p.prompt_a_version} = "
                f"{p.difference:+.2f} [{p.low:+.2f}, {p.high:+.2f}] (n={p.n_a}+{p.n_b}), significant after Bonferroni."
            )
    return sec


def stability_section(scored: Table, options: AnalysisOptions) -> Section:
    rows = stability.score_stability(scored, options)
    sec = Section(
        title="Score stability",
        intro="At (0, 0) the document is the needle sentence alone, so orig and rand hay show the judge the same sentences "
        f"for the deterministic needles ({', '.join(options.stability_needles)}). Compared: the orig and the rand score of "
        "the same document and replicate there. The requests are byte-identical only when nothing else in the prompt "
        "differs (per-item metadata, for one, makes them differ); the table counts the pairs whose requests had the same "
        "cache key. A deterministic judge scores byte-identical requests identically.",
    )
    sec.tables.append(TableSpec("stability", "orig vs rand at (0, 0)", "", stability.StabilityRow, rows))
    for r in rows:
        sec.findings.append(
            f"{rater(r)} {r.needle}: exact agreement {r.exact_agreement:.0%}, mean |diff| {r.mean_abs_diff:.2f} "
            f"(n={r.n_pairs} pairs); {stability.comparison_sentence(r)}."
        )
    return sec


def fingerprint_section(run: Run, scored: Table, make_figures: bool) -> Section:
    rows = fingerprint.scoring_fingerprint(scored, run.manifest)
    sec = Section(title="Scoring fingerprint", intro="Share of scores on the rubric's band boundaries and on round numbers; score histogram.")
    sec.tables.append(TableSpec("fingerprint", "Scoring fingerprint", "", fingerprint.FingerprintRow, rows))
    for r in rows:
        sec.findings.append(
            f"{rater(r)}: {r.share_on_boundaries:.0%} of scores on band boundaries ({r.boundaries}), "
            f"{r.share_multiple_of_10:.0%} on multiples of 10; most frequent: {r.top_levels} (n={r.n})."
        )
    if make_figures and len(scored):
        sec.figures.append(FigureSpec("fingerprint_histogram", "Score histograms", figures.figure_bytes(figures.fingerprint_figure(scored))))
    return sec


def _group_rows(rows: Sequence[Any], n_keys: int) -> dict[tuple, list]:
    grouped: dict[tuple, list] = {}
    for r in rows:
        grouped.setdefault(msgspec.structs.astuple(r)[:n_keys], []).append(r)
    return grouped


def file_slug(value: object) -> str:
    """A file-name part for `value`: its letters, digits, "-" and "." kept,
    any other character as "-", then, if one was replaced, 6 hex digits of
    the value's hash, so that two values never share a file: judges "a/b"
    and "a-b" are two judges and get two figures (issue 33)."""
    text = str(value)
    slug = "".join(c if c.isalnum() or c in "-." else "-" for c in text)
    if slug != text:
        slug += "-" + hashlib.blake2b(text.encode(), digest_size=3).hexdigest()
    return slug




def people_section(run: Run, scored: Table, labels: Table, options: AnalysisOptions, flags: list[str]) -> Section:
    from analysis import people

    agreement = people.agreement_rows(scored, labels, seed=options.seed)
    ceiling = people.ceiling_rows(labels, seed=options.seed)
    ppi = people.ppi_rows(scored, labels)
    cards = people.judge_cards(scored, labels, agreement, ceiling, run.manifest, flags)
    simulated = bool(labels["simulated"].any()) if "simulated" in labels else False
    sec = Section(
        "People: agreement, judge cards, prediction-powered estimates",
        ("These labels are SIMULATED (a stand-in for people, shipped with the quickstart): every figure below shows "
         "what the analysis does, not how good a judge is. " if simulated else "")
        + f"{len(labels)} labels of {len(people.consensus(labels))} items by {len(set(labels['labeller'].tolist()))} labeller(s). "
        "A judge's accuracy is its agreement with people; the ceiling is people's agreement with each other.",
    )
    sec.tables.append(TableSpec("people_agreement", "Agreement of each judge with people",
                                f"Quadratic-weighted κ (the judge snapped to the label values people used) and Krippendorff's α with "
                                f"bootstrap {0.95:.0%} intervals; pass = a score of at least {people.PASS_THRESHOLD:g}: false pass = the "
                                "judge passes an item people failed.", people.PeopleAgreementRow, agreement))  # fmt: skip
    sec.tables.append(TableSpec("people_ceiling", "People against people (the ceiling)",
                                "Krippendorff's α (interval) and quadratic κ on the items two labellers both rated.",
                                people.CeilingRow, ceiling))  # fmt: skip
    sec.tables.append(TableSpec("judge_cards", "Judge cards",
                                "One card per judge and prompt, to publish beside its scores (also judge_cards.json).",
                                people.JudgeCard, cards, also_json=True))  # fmt: skip
    sec.tables.append(TableSpec("people_ppi", "Prediction-powered estimates",
                                f"PPI++ (ppi-python) from the judge's scores of every item and the labels of the labelled ones, "
                                f"weighted by each label's sampling probability, beside the judge-only 95% interval; groups with "
                                f"fewer than {people.MIN_LABELS} labels are left out.", people.PpiRow, ppi))  # fmt: skip
    for r in agreement:
        sec.findings.append(f"{rater(r)} vs people: α_interval {r.alpha_interval:.3f} [{r.alpha_low:.3f}, {r.alpha_high:.3f}], "
                            f"κ_quadratic {r.kappa_quadratic:.3f}, false-pass rate {r.false_pass_rate:.0%}, n={r.n}.")
    for c in ceiling:
        sec.findings.append(f"People ceiling ({c.labeller_a} vs {c.labeller_b}): α_interval {c.alpha_interval:.3f}, n={c.n}.")
    changed = [r for r in ppi if r.conclusion_changed]
    sec.findings.append(
        f"The correction changes {len(changed)} conclusion(s): " + "; ".join(
            f"{rater(r)} {r.quantity}: judge-only [{r.judge_low:+.1f}, {r.judge_high:+.1f}], PPI [{r.ppi_low:+.1f}, {r.ppi_high:+.1f}]"
            for r in changed) if changed else f"The correction changes no conclusion ({len(ppi)} estimates).")
    return sec
