"""engine/run/prefix_gate.py: an item waits while the sibling that owns its
prefix is in flight, alone and inside the real scheduler (in-memory corpus,
real prompts, real LMDB, an in-process judge double); and the judge's
`prefix_gate` key that turns it on, through `needlejudge run` against the
fake server (same rows, each call paid once, bad values refused in one line)."""

from __future__ import annotations

import itertools
import json
import random
from pathlib import Path

import anyio
import pytest

from engine.cache.store import Store
from engine.contracts import CallRequest, CallResult, Capabilities, Usage
from engine.prompts.prefix import prefix_chunks
from engine.run.prefix_gate import HOLD_CHUNKS, PrefixGate
from engine.config import parse_config
from engine.run.results import MANIFEST_JSON, RESULTS_JSONL
from reliability_fixtures import RunProcess, fresh_experiment, results, server_fixture
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
        self.calls: list[tuple[tuple[int, ...], int, int]] = []  # (prefix chunks, started, ended)
        self.in_flight = self.max_in_flight = 0

    async def complete(self, request: CallRequest) -> CallResult:
        started = next(self.clock)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        await anyio.sleep(self.rng.random() * 0.01)
        self.in_flight -= 1
        self.calls.append((tuple(prefix_chunks(request.messages)), started, next(self.clock)))
        score = 50 + len(request.messages[-1].content) % 50  # a function of the request alone
        return CallResult(status="ok", text=str(score), usage=Usage(prompt_tokens=100, completion_tokens=2))

    async def aclose(self) -> None:
        pass


def run_with(tmp_path, name: str, *, prefix_gate: bool, prompt_caching: bool = True) -> tuple[PrefixJudge, list[tuple]]:
    # positions whose windows are 4 sentences: siblings share Document 1 and more beyond the instructions
    text = design_toml(seed=5, stopping='kind = "fixed"\nn = 4', window=3, needles='["none", "neg"]', positions="[[1, 2], [2, 1]]")
    judge_table = SCRIPTED_JUDGE.format(concurrency=6) + f"prefix_gate = {str(prefix_gate).lower()}\n"
    design = make_design(parse_config(text + judge_table, base_dir=tmp_path))
    judge = PrefixJudge(prompt_caching=prompt_caching, concurrency=6)
    with Store(tmp_path / name / "store") as store:
        run_scheduler(design, store, {"sim": judge})
        return judge, outcomes(store)


def shared_depth(a: tuple[int, ...], b: tuple[int, ...]) -> int:
    depth = 0
    for x, y in zip(a, b):
        if x != y:
            break
        depth += 1
    return depth


def early_siblings(calls: list[tuple[tuple[int, ...], int, int]]) -> int:
    """Calls that started while a call in flight shared at least HOLD_CHUNKS
    more prefix chunks with them than any ended call did (what the gate
    promises not to send; a call identical in prefix to one in flight is the
    same request and is not held). Document order and sibling keys are not
    the measure: two items whose prefix keys match may share less than
    HOLD_CHUNKS beyond what is warm, and then the gate rightly sends both."""
    early = 0
    for chunks, started, _ in calls:
        warm = max((shared_depth(chunks, c) for c, _, e in calls if e < started), default=0)
        out = max((shared_depth(chunks, c) for c, s, e in calls if s < started < e), default=0)
        early += warm + HOLD_CHUNKS <= out < len(chunks)
    return early


def test_the_scheduler_holds_siblings_without_changing_a_row_or_idling_the_judge(tmp_path):
    ungated, rows_ungated = run_with(tmp_path, "ungated", prefix_gate=False)
    gated, rows_gated = run_with(tmp_path, "gated", prefix_gate=True)
    uncacheable, _ = run_with(tmp_path, "uncacheable", prefix_gate=True, prompt_caching=False)
    assert early_siblings(ungated.calls) > 0  # without the gate siblings overlap their owner
    assert early_siblings(uncacheable.calls) > 0  # nor on a backend that caches no prefixes
    assert early_siblings(gated.calls) == 0
    assert rows_gated == rows_ungated and len(rows_gated) == 8 * 4  # same documents, same rows
    assert gated.max_in_flight == 6  # other items went ahead while siblings waited


# ---------------------------------------------------------------------------
# The judge's `prefix_gate` key, as a user meets it: `needlejudge run` in its
# own process, with its progress display on, against the fake server's process.

# Row fields that depend on when calls were sent: the latency; which of two
# identical requests in flight together is marked `cached`; the fake server's
# simulated prefix-cache hits.
TIMING_FIELDS = ("latency_s", "cached", "cached_tokens")


def gated_config(config: Path, on: bool) -> Path:
    text = config.read_text()
    assert "concurrency = 8\n" in text
    config.write_text(text.replace("concurrency = 8\n", f"concurrency = 8\nprefix_gate = {str(on).lower()}\n", 1))
    return config


def shown_run(config: Path) -> tuple[int, dict | None, str]:
    """`needlejudge run CONFIG`, the display on: (exit code, the manifest's counts and
    run id with the summary printed under `printed`, stderr)."""
    code, out, err = RunProcess(config, quiet=False).wait(180)
    if code:
        return code, None, err
    manifest = json.loads((config.parent / "out" / MANIFEST_JSON).read_text())
    return code, {**manifest["counts"], "run_id": manifest["run_id"], "printed": out}, err


def timeless(path: Path) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in TIMING_FIELDS} for row in results(path)]


gate_server = server_fixture("fixed:0.01")


def test_prefix_gate_true_pays_each_call_once_for_the_rows_of_a_run_without_it(gate_server, prepared_store, corpus_slice_path, corpus_settings, tmp_path):
    def experiment(name: str, on: bool) -> Path:
        config = fresh_experiment(tmp_path / name, prepared_store, corpus_slice_path, corpus_settings.min_chars_per_sentence, gate_server.url)
        return gated_config(config, on)

    runs = {}
    for name, on in (("off", False), ("on", True)):
        gate_server.reset()
        code, summary, err = shown_run(experiment(name, on))
        assert code == 0 and "Traceback" not in err, err
        stats = gate_server.stats()
        runs[name] = summary, stats
        assert stats["repeated_completions"] == 0, stats["repeated"]  # each call paid once
    (off, off_stats), (on, on_stats) = runs["off"], runs["on"]
    assert on["gate_holds"] > 0 and off["gate_holds"] == 0  # the key reached the scheduler, and only when set
    assert f"prefix gate: items held back {on['gate_holds']:,} time(s)" in on["printed"] and "prefix gate" not in off["printed"]
    assert on["run_id"] == off["run_id"]  # the key is in no run id...
    rows_off, rows_on = timeless(tmp_path / "off" / "out" / RESULTS_JSONL), timeless(tmp_path / "on" / "out" / RESULTS_JSONL)
    assert rows_on == rows_off and len(rows_on) > 100  # ...and changes no row: same documents, scores, raw texts, cache keys
    assert on_stats["completed"] == off_stats["completed"] == len({key for row in rows_on for key in row["cache_keys"]})
    gate_server.reset()  # ...nor what resumes: the finished run, asked again with the gate on, makes no call
    config = tmp_path / "off" / "exp.toml"
    config.write_text(config.read_text().replace("prefix_gate = false", "prefix_gate = true", 1))
    code, again, err = shown_run(config)
    assert code == 0 and again["run_id"] == off["run_id"] and again["calls_network"] == 0 and gate_server.stats()["requests"] == 0, err


@pytest.mark.parametrize(
    ("change", "named"),
    [
        (lambda text: text.replace("concurrency = 8\n", 'concurrency = 8\nprefix_gate = "yes"\n', 1),
         ("`judges[0].prefix_gate`", "judge 'sim'", "true or false", "'yes'")),
        (lambda text: text.replace("concurrency = 8\n", "concurrency = 8\nprefix_gate = 1\n", 1),
         ("`judges[0].prefix_gate`", "judge 'sim'", "true or false", ": 1")),
        (lambda text: text.replace('adapter = "openai-compatible"', 'adapter = "gemini"\nprefix_gate = true', 1),
         ("`judges[0]` ('sim')", "`prefix_gate = true`", "'gemini'", "caches no prompt prefixes")),
    ],
    ids=["string", "number", "no prompt caching"],
)
def test_a_bad_prefix_gate_is_one_line_naming_the_file_judge_key_and_value(change, named, prepared_store, corpus_slice_path, corpus_settings, tmp_path):
    config = fresh_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings.min_chars_per_sentence, "http://127.0.0.1:9")
    config.write_text(change(config.read_text()))
    code, _, err = shown_run(config)
    lines = [line for line in err.splitlines() if line.strip()]
    assert code not in (0, None) and "Traceback" not in err and len(lines) == 1, err
    assert str(config) in lines[0] and all(word in lines[0] for word in named), lines[0]
