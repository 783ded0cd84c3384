"""Running the real scheduler on an in-memory corpus, real prompts and a real
LMDB store, against any adapters (the fake provider server's HTTP adapters,
or in-process doubles). Shared by the scheduler's tests."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio

from engine.cache.call_cache import CallCache, GroupCommitWriter
from engine.config import ExperimentConfig, parse_config
from engine.run.design import Design
from engine.run.results import iter_rows
from engine.run.scheduler import Scheduler
from engine.cache.store import Store
from memory_corpus import MemoryCorpus, document_order

RUN_ID = "0123456789abcdef"


def design_toml(*, seed: int, stopping: str, window: int, needles: str = '["none", "neg", "con"]',
                positions: str = "[[0, 0], [1, 2], [2, 1]]", cell_documents: str = "balanced") -> str:
    """The design part of a config (hays orig and rand); judges follow."""
    return (
        f'store = "unused"\noutput = "unused"\nseed = {seed}\nneedles = {needles}\nhays = ["orig", "rand"]\n'
        f'positions = {positions}\nwindow = {window}\ncell_documents = "{cell_documents}"\n[stopping]\n{stopping}\n'
    )


SERVER_JUDGE = """
[[judges]]
name = "sim"
adapter = "openai-compatible"
model = "local-sim"  # the fake server asks no key of local-* models
base_url = "{url}/v1"
concurrency = {concurrency}
max_attempts = {max_attempts}
timeout_s = 2.0
options = {{ backoff_base_s = 0.005, backoff_cap_s = 0.02{options} }}
prefix_gate = {prefix_gate}
"""


def server_config(tmp_path: Path, url: str, *, stopping: str = 'kind = "fixed"\nn = 5', concurrency: int = 8, max_attempts: int = 1, options: str = "",
                  prefix_gate: bool = False) -> ExperimentConfig:
    text = design_toml(seed=11, stopping=stopping, window=2) + SERVER_JUDGE.format(
        url=url, concurrency=concurrency, max_attempts=max_attempts, options=options, prefix_gate=str(prefix_gate).lower())
    return parse_config(text, base_dir=tmp_path)


def make_design(config: ExperimentConfig, corpus: Any = None) -> Design:
    from engine.prompts import load_prompt

    names = sorted({name for judge in config.judges for name in config.judge_prompts(judge)})
    prompts = {name: load_prompt(name) for name in names}
    return Design(config, corpus if corpus is not None else MemoryCorpus(), prompts, document_order=document_order)


def run_scheduler(design: Design, store: Store, adapters: dict[str, Any] | None = None, run_id: str = RUN_ID,
                  watch: Callable[[Any], Any] | None = None, **options: Any) -> Scheduler:
    """One run of the scheduler; adapters default to the registry's for each
    judge; `watch` wraps each adapter the scheduler calls (an observer)."""

    async def main() -> Scheduler:
        from engine.registry import create_adapter

        made = adapters if adapters is not None else {name: create_adapter(judge.spec()) for name, judge in design.judges.items()}
        try:
            async with GroupCommitWriter(store) as writer:
                scheduler = Scheduler(
                    design,
                    cache=CallCache(store),
                    writer=writer,
                    adapters={name: watch(adapter) for name, adapter in made.items()} if watch else made,
                    run_id=run_id,
                    prompt_versions={name: p.version for name, p in design.prompts.items()},
                    **options,
                )
                scheduler.restore()
                await scheduler.run()
            return scheduler
        finally:
            if adapters is None:
                for adapter in made.values():
                    await adapter.aclose()

    return anyio.run(main)


def outcomes(store: Store, run_id: str = RUN_ID) -> list[tuple]:
    """Every stored row's identity and outcome, in (cell, document) order."""
    return [
        (r.judge, r.needle, r.hay, r.i, r.j, r.order, r.control, r.doc_index, r.doc_id, r.status, r.score, r.raw_text)
        for r in iter_rows(store, bytes.fromhex(run_id))
    ]


SCRIPTED_JUDGE = """
[[judges]]
name = "sim"
adapter = "scripted"
model = "sim-1"
prompts = ["bands"]
concurrency = {concurrency}
"""


def scripted_design(tmp_path: Path, *, stopping: str = 'kind = "fixed"\nn = 4', concurrency: int = 4, window: int = 2, corpus: Any = None,
                    cell_documents: str = "balanced") -> Design:
    """A one-judge design (8 cells) on the in-memory corpus, for in-process adapter doubles."""
    text = design_toml(seed=5, stopping=stopping, window=window, needles='["none", "neg"]', positions="[[0, 0], [1, 2]]",
                       cell_documents=cell_documents)
    text += SCRIPTED_JUDGE.format(concurrency=concurrency)
    return make_design(parse_config(text, base_dir=tmp_path), corpus)
