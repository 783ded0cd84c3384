"""The dry run (`needlejudge run --dry-run`): the design's size, the calls
the cache already answers and upper bounds on calls and cost, without any
call and without writing to the store."""

from __future__ import annotations

import math

import msgspec

from engine.cache.call_cache import CallCache
from engine.run.capacity import JudgeCapacity, estimate, judge_gpus, measured_rate, observed_intervals
from engine.run.cell_policy import CellRun
from engine.config import ExperimentConfig, JudgeConfig
from engine.run.experiment import Experiment
from engine.run.resume import restore_runs
from engine.run.summary import check_output


class BatchPlan(msgspec.Struct, kw_only=True):
    price_factor: float  # the judge's prices.batch_discount (already applied to the cost bound)
    waves: int  # estimated waves, the widest cell (engine.run.batch.wave_planner.estimate_waves)
    poll_s: float


class PlanReport(msgspec.Struct, kw_only=True):
    run_id: str
    cells: int
    cells_ended: int  # ended in an earlier run of this experiment
    documents: int  # documents in the prepared corpus
    document_lines: list[str]  # which of them the cells draw from (engine.run.document_set.DocumentCoverage.lines)
    # seconds this dry run spent preparing the corpus again (its inputs, settings, rules or
    # model packages changed since the store was prepared: spaCy loaded and every document
    # parsed); 0 when the store's corpus was reused
    corpus_prepared_s: float = 0.0
    calls_per_item: dict[str, int]  # per prompt
    upper_bound_items: int  # items still to judge at most (sum over open cells of min(cap, documents))
    upper_bound_calls: int
    cache_answered_calls: int  # of the first-window items of each open cell (see plan_experiment)
    cache_checked_calls: int
    upper_bound_cost_usd: float
    est_tokens_per_call: dict[str, int]  # per judge/prompt: ceil(prompt chars / 3) + max_tokens
    capacity: list[JudgeCapacity] = []  # per judge: wall time and GPU-hours (engine.run.capacity)
    # busy judges a provider bills per token with no prices: not in the cost bound, their cost is unknown
    unpriced_judges: list[str] = []
    # per batch judge (mode = "batch"): its price factor and an estimate of its waves (engine.run.batch.wave_planner)
    batch: dict[str, BatchPlan] = {}


def plan_capacity(
    config: ExperimentConfig, calls_by_judge: dict[str, int], intervals: dict[str, list[tuple[float, float]]]
) -> list[JudgeCapacity]:
    """Per configured judge: the calls still to make over its configured or measured calls/s."""
    plans = []
    for judge in config.judges:
        observed = intervals.get(judge.name, [])
        plans.append(
            estimate(
                judge.name,
                calls_by_judge.get(judge.name, 0),
                configured=judge.capacity.calls_per_s if judge.capacity else None,
                measured=measured_rate(observed),
                measured_calls=len(observed),
                gpus=judge_gpus(judge.adapter, judge.options, judge.capacity),
            )
        )
    return plans


def check_judges(config: ExperimentConfig, busy: set[str]) -> list[str]:
    """Every check a run makes of its judges before the first call, without
    any call: each judge with work left gets its adapter made and dropped
    (the factories check the adapter name, the model where it is known
    offline, the options and the API key in the environment, and open
    nothing), as the run's wiring does (engine.run.runner), and a judge
    without a batch API in mode = "batch" fails as there. Returns the busy
    judges a provider bills whose prices are missing (their cost is unknown)."""
    from engine.contracts import AdapterConfigError
    from engine.registry import billed, create_judge_adapter, free_answers, in_config

    unpriced = []
    # a busy panel needs its members' adapters, busy or not (engine.run.runner)
    needed = busy | {m for judge in config.judges if judge.panel is not None and judge.name in busy for m in judge.panel.members}
    for judge in config.judges:
        if judge.panel is not None or judge.name not in needed:  # a panel's members are checked as judges
            continue
        try:
            spec = judge.spec()
            create_judge_adapter(spec)
            free_answers(spec)  # the run's commit bound asks it
            if billed(spec) and judge.prices.input == 0 and judge.prices.output == 0:
                unpriced.append(judge.name)
        except AdapterConfigError as exc:
            raise in_config(config.source, exc) from None
    return unpriced


def _plan_batch(batch: dict[str, BatchPlan], judge: JudgeConfig, run: CellRun) -> None:
    """Widen the batch judge's wave estimate with this open cell's."""
    from engine.run.batch.wave_planner import estimate_waves

    spec = run.rule.spec  # type: ignore[attr-defined]
    waves = estimate_waves(run.rule.kind, min_docs=run.min_docs, cap=min(run.cap, run.limit), window=getattr(spec, "window", 10))
    known = batch.get(judge.name)
    if known is None:
        batch[judge.name] = BatchPlan(price_factor=judge.prices.batch_discount, waves=waves, poll_s=judge.batch_poll_s)
    else:
        known.waves = max(known.waves, waves)


def plan_experiment(config: ExperimentConfig, *, window_docs: int | None = None, replace: bool = False) -> PlanReport:
    """The `--dry-run` report, without any network call, after every check
    the run makes before its first call: the judges with work left
    (`check_judges`) and the output folder (`check_output`: another run's
    results there stop the run unless `replace`).

    - upper bound: each open cell consumes at most min(its rule's document
      cap, the documents at its position) items, minus what it already
      consumed; times the calls per item of its prompt.
    - cache answered: for each open cell, the items of its first window —
      the `window_docs` documents from where it stands (default: the rule's
      minimum documents, which any run must judge) — are built and their
      calls looked up in the cache; reported as answered / checked calls.
    - cost bound: per call ceil(prompt characters / 3) input tokens (English
      runs ~4 characters per token, so this overestimates) plus the prompt's
      max_tokens output, at the judge's prices, for every call of the upper
      bound (cached calls are not subtracted: it stays a bound); a batch
      judge's at its prices times `batch_discount`.
      Judges a provider bills that have no prices are named in
      `unpriced_judges` (their calls are in the bound at $0).
    - waves (batch judges): engine.run.batch.wave_planner.estimate_waves of its widest
      open cell, before any score is known.
    """
    experiment = Experiment(config)
    try:
        design = experiment.design
        cache = CallCache(experiment.store)
        runs = restore_runs(design, experiment.store, bytes.fromhex(experiment.run_id)).runs
        unpriced = check_judges(config, {run.cell.judge for run in runs if not run.done})
        check_output(config.output, experiment.run_id, replace=replace)
        calls_per_item: dict[str, int] = {}
        est_tokens: dict[str, int] = {}
        answered = checked = items_bound = calls_bound = 0
        calls_by_judge: dict[str, int] = {}
        batch: dict[str, BatchPlan] = {}
        cost = 0.0
        for run in runs:
            if run.done:
                continue
            cell = run.cell
            judge = design.judges[cell.judge]
            remaining = max(0, min(run.cap, run.limit) - run.rule.n)
            items_bound += remaining
            probe_docs = window_docs if window_docs is not None else max(1, run.min_docs - run.rule.n)
            first = None
            probed = 0
            doc = run.next_doc
            while probed < probe_docs and doc < run.limit:
                item = design.item(cell, doc)
                doc += 1
                if item is None:
                    continue
                probed += 1
                first = first or item
                hits = cache.get_many(item.keys)
                checked += len(hits)
                answered += sum(hit is not None for hit in hits)
            if first is None:
                continue
            per_item = len(first.requests)
            calls_per_item[cell.prompt] = per_item
            calls = remaining * per_item
            calls_bound += calls
            calls_by_judge[cell.judge] = calls_by_judge.get(cell.judge, 0) + calls
            tokens_in = [math.ceil(sum(len(m.content) for m in r.messages) / 3) for r in first.requests]
            tokens_out = [r.decoding.max_tokens for r in first.requests]
            est_tokens[f"{cell.judge}/{cell.prompt}"] = (sum(tokens_in) + sum(tokens_out)) // per_item
            # a panel's calls are its members': each at its member's prices
            prices = [design.request_prices(cell.judge, r) for r in first.requests]
            per_item_cost = sum(n * p.input + m * p.output for n, m, p in zip(tokens_in, tokens_out, prices)) / 1e6
            if judge.mode == "batch":
                per_item_cost *= judge.prices.batch_discount
                _plan_batch(batch, judge, run)
            cost += per_item_cost * remaining
        return PlanReport(
            run_id=experiment.run_id,
            cells=len(runs),
            cells_ended=sum(run.done for run in runs),
            documents=len(experiment.corpus.doc_ids),
            document_lines=design.coverage.lines(),
            corpus_prepared_s=0.0 if experiment.corpus_summary.reused else experiment.corpus_summary.seconds,
            calls_per_item=calls_per_item,
            upper_bound_items=items_bound,
            upper_bound_calls=calls_bound,
            cache_answered_calls=answered,
            cache_checked_calls=checked,
            upper_bound_cost_usd=cost,
            est_tokens_per_call=est_tokens,
            batch=batch,
            unpriced_judges=unpriced,
            capacity=plan_capacity(config, calls_by_judge, observed_intervals(experiment.store, bytes.fromhex(experiment.run_id), cache)),
        )
    finally:
        experiment.close()
