"""engine/run/prefix_gate.py: an item waits while the sibling that owns its
prefix is in flight, alone and inside the real scheduler (in-memory corpus,
real prompts, real LMDB, an in-process judge double)."""

from __future__ import annotations

import itertools
import random

import anyio

from engine.cache.store import Store
from engine.contracts import CallRequest, CallResult, Capabilities, Usage
from engine.prompts.prefix import prefix_key
from engine.run.prefix_gate import PrefixGate
from engine.config import parse_config
from scheduler_harness import SCRIPTED_JUDGE, design_toml, make_design, outcomes, run_scheduler, scripted_design


def issued(design, needle: str, hay: str, doc: int):
    """The item of cell (needle, hay, position (1, 2)) for document `doc`, as the policy issues it."""
    cell = next(c for c in design.cells if (c.needle, c.hay, c.i, c.j) == (needle, hay, 1, 2))
    item = design.item(cell, doc)
    item.missing = [0]  # what the dispatcher's cache lookup leaves: one call to make
    return item


def test_siblings_wait_for_the_call_they_share_most_with_and_go_first_once_it_ends(tmp_path):
    design = scripted_design(tmp_path)
    gate = PrefixGate()
    first = issued(design, "none", "rand", 2)
    assert gate.admit(first) and not gate.ended(first)  # the instructions are warm from now on
    none, neg, other = issued(design, "none", "orig", 0), issued(design, "neg", "orig", 0), issued(design, "none", "orig", 2)
    assert gate.admit(none)  # shares only the warm instructions: goes, and computes the rest
    assert not gate.admit(neg) and gate.held == 1  # shares Document 1 and more with it: waits
    assert gate.admit(other)  # another document: goes at once
    assert gate.released() is None
    assert not gate.ended(other)  # nobody waited for it
    assert gate.ended(none)  # its sibling is released
    assert gate.released() is neg and gate.released() is None and gate.held == 0
    again = issued(design, "neg", "orig", 0)
    assert gate.admit(again)  # what it shares is warm now: no wait


def test_at_the_start_everyone_waits_for_the_first_call_then_siblings_for_their_owner(tmp_path):
    design = scripted_design(tmp_path)
    gate = PrefixGate()
    first, none, neg = issued(design, "none", "rand", 2), issued(design, "none", "orig", 0), issued(design, "neg", "orig", 0)
    assert gate.admit(first)
    assert not gate.admit(none) and not gate.admit(neg)  # both wait for the instructions
    assert gate.ended(first)
    assert gate.released() is none and gate.admit(none)  # admitted again: it computes Document 1
    assert gate.released() is neg and not gate.admit(neg) and gate.held == 1  # neg now waits for none, not for the first call
    assert gate.released() is None
    assert gate.ended(none) and gate.released() is neg


class PrefixJudge:
    """An in-process double that records when each call starts and ends (event numbers)."""

    def __init__(self, *, prompt_caching: bool, concurrency: int) -> None:
        self.capabilities = Capabilities(prompt_caching=prompt_caching)
        self.rng = random.Random(7)
        self.clock = itertools.count()
        self.calls: list[tuple[bytes | None, int, int]] = []  # (prefix key, started, ended)
        self.in_flight = self.max_in_flight = 0

    async def complete(self, request: CallRequest) -> CallResult:
        started = next(self.clock)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await anyio.sleep(self.rng.random() * 0.01)
        self.in_flight -= 1
        self.calls.append((prefix_key(request.messages), started, next(self.clock)))
        score = 50 + len(request.messages[-1].content) % 50  # a function of the request alone
        return CallResult(status="ok", text=str(score), usage=Usage(prompt_tokens=100, completion_tokens=2))

    async def aclose(self) -> None:
        pass


def run_with(tmp_path, name: str, *, prompt_caching: bool) -> tuple[PrefixJudge, list[tuple]]:
    # positions whose windows are 4 sentences: siblings share Document 1 and more beyond the instructions
    text = design_toml(seed=5, stopping='kind = "fixed"\nn = 4', window=3, needles='["none", "neg"]', positions="[[1, 2], [2, 1]]")
    design = make_design(parse_config(text + SCRIPTED_JUDGE.format(concurrency=6), base_dir=tmp_path))
    judge = PrefixJudge(prompt_caching=prompt_caching, concurrency=6)
    with Store(tmp_path / name / "store") as store:
        run_scheduler(design, store, {"sim": judge}, prefix_gate=True)
        return judge, outcomes(store)


def early_siblings(calls: list[tuple[bytes | None, int, int]]) -> int:
    """Calls that started while the first call of their prefix key (same
    instructions and Document 1) was still out."""
    owners: dict[bytes, tuple[int, int]] = {}
    for key, started, ended in sorted(calls, key=lambda c: c[1]):
        if key is not None:
            owners.setdefault(key, (started, ended))
    return sum(1 for key, started, _ in calls if key is not None and owners[key][0] < started < owners[key][1])


def test_the_scheduler_holds_siblings_without_changing_a_row_or_idling_the_judge(tmp_path):
    ungated, rows_ungated = run_with(tmp_path, "ungated", prompt_caching=False)
    gated, rows_gated = run_with(tmp_path, "gated", prompt_caching=True)
    assert early_siblings(ungated.calls) > 0  # without the gate siblings overlap their owner
    assert early_siblings(gated.calls) == 0
    assert rows_gated == rows_ungated and len(rows_gated) == 8 * 4  # same documents, same rows
    assert gated.max_in_flight == 6  # other items went ahead while siblings waited
