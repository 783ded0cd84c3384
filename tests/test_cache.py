"""engine.cache.call_cache: the request key, the LMDB call cache and its group-commit writer."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path

import anyio
import msgspec
import pytest

from engine.cache.call_cache import (
    RESULTS_DB,
    CallCache,
    CommitError,
    GroupCommitWriter,
    decode_result,
    encode_result,
    is_cacheable,
)
from engine.config import parse_config
from engine.contracts import CallRequest, CallResult, Decoding, Message, Usage, request_key
from engine.cache.store import Store

BASE = CallRequest(
    namespace="judge",
    adapter="openai",
    model="gpt-4o-mini-2024-07-18",
    revision="",
    messages=(Message("system", "You rate similarity."), Message("user", "<d1>a</d1><d2>b</d2>")),
    decoding=Decoding(),
)

# One variant per output-relevant field (every CallRequest and Decoding field).
REQUEST_VARIANTS = {
    "namespace": {"namespace": "triples"},
    "adapter": {"adapter": "openai-compatible"},
    "model": {"model": "gpt-4o-2024-08-06"},
    "revision": {"revision": "2024-08-06"},
    "message content": {"messages": (BASE.messages[0], Message("user", "<d1>a</d1><d2>c</d2>"))},
    "message role": {"messages": (Message("user", "You rate similarity."), BASE.messages[1])},
    "message order": {"messages": (BASE.messages[1], BASE.messages[0])},
    "one message fewer": {"messages": BASE.messages[1:]},
    "replicate": {"replicate": 1},
}
DECODING_VARIANTS = {
    "temperature": {"temperature": 0.7},
    "top_p": {"top_p": 0.9},
    "max_tokens": {"max_tokens": 17},
    "seed": {"seed": 0},
    "stop": {"stop": ("\n",)},
    "response_format": {"response_format": "json"},
    "json_schema": {"json_schema": '{"type":"object"}'},
    "guided_regex": {"guided_regex": "[0-9]+"},
}


def test_every_field_of_request_and_decoding_is_covered_by_a_variant() -> None:
    assert set(CallRequest.__struct_fields__) == {"namespace", "adapter", "model", "revision", "messages", "decoding", "replicate"}
    assert set(DECODING_VARIANTS) == set(Decoding.__struct_fields__)


def test_keys_are_those_of_schema_v1_so_earlier_caches_stay_valid() -> None:
    # computed before the simulation-only field `item_tag` left the request
    request = CallRequest(namespace="judge", adapter="openai", model="m", revision="",
                          messages=(Message("system", "s"), Message("user", "u")), decoding=Decoding(seed=1), replicate=2)
    assert request_key(request).hex() == "6f87c6cd0a0b8535c8178d435d06535c7c22cdd1f16d8bca4883fa8c7b207e85"


def test_requests_differing_in_any_output_relevant_field_never_share_a_key() -> None:
    variants = [BASE]
    variants += [msgspec.structs.replace(BASE, **change) for change in REQUEST_VARIANTS.values()]
    variants += [
        msgspec.structs.replace(BASE, decoding=msgspec.structs.replace(BASE.decoding, **change))
        for change in DECODING_VARIANTS.values()
    ]
    keys = [request_key(r) for r in variants]
    assert all(len(k) == 32 for k in keys)
    assert len(set(keys)) == len(keys)
    # and equal requests always share it (rebuilt from scratch, not the same object)
    rebuilt = CallRequest(
        namespace="judge",
        adapter="openai",
        model="gpt-4o-mini-2024-07-18",
        revision="",
        messages=(Message("system", "You rate similarity."), Message("user", "<d1>a</d1><d2>b</d2>")),
        decoding=Decoding(),
    )
    assert request_key(rebuilt) == request_key(BASE)


JUDGE_TOML = """
store = "s"
output = "o"
positions = [[1, 1]]
needles = ["neg"]
hays = ["orig"]
prompts = ["bands"]
[[judges]]
name = "j"
{judge}
"""
REFERENCE_JUDGE = {"adapter": '"openai"', "model": '"gpt-4o-mini-2024-07-18"'}


def _first_key(corpus, tmp_path: Path, **judge: str) -> bytes:  # type: ignore[no-untyped-def]
    from engine.run.design import Design
    from engine.corpus.pairs import document_order
    from engine.prompts import load_prompt

    lines = "\n".join(f"{k} = {v}" for k, v in {**REFERENCE_JUDGE, **judge}.items())
    config = parse_config(JUDGE_TOML.format(judge=lines), base_dir=tmp_path)
    design = Design(config, corpus, {"bands": load_prompt("bands")}, document_order=document_order)
    cell = design.cells[0]
    item = next(it for it in (design.item(cell, d) for d in range(design.doc_limit(cell))) if it is not None)
    return item.keys[0]


IRRELEVANT_JUDGE_SETTINGS = {
    "timeout_s": "5.0",
    "base_url": '"http://127.0.0.1:9999/v1"',
    "concurrency": "3",
    "api_key_env": '"OTHER_KEY"',
    "max_attempts": "2",
    "max_retry_time_s": "10.0",
    "rpm": "100.0",
    "tpm": "100000.0",
    "prices": "{ input = 1.5, output = 6.0 }",
}
RELEVANT_JUDGE_SETTINGS = {
    "model": '"gpt-4o-2024-08-06"',
    "revision": '"r2"',
    "adapter": '"openai-compatible"',
}


def test_irrelevant_judge_settings_never_change_the_key_through_the_real_design(corpus, tmp_path: Path) -> None:
    reference = _first_key(corpus, tmp_path)
    for key, value in IRRELEVANT_JUDGE_SETTINGS.items():
        assert _first_key(corpus, tmp_path, **{key: value}) == reference, key


def test_relevant_judge_settings_change_the_key_through_the_real_design(corpus, tmp_path: Path) -> None:
    keys = {_first_key(corpus, tmp_path)}
    for key, value in RELEVANT_JUDGE_SETTINGS.items():
        new = _first_key(corpus, tmp_path, **{key: value})
        assert new not in keys, key
        keys.add(new)


# ---------------------------------------------------------------------------
# What is cached


def result(status: str = "ok", text: str = "73", **fields) -> CallResult:  # type: ignore[no-untyped-def]
    return CallResult(status=status, text=text, usage=Usage(prompt_tokens=600, completion_tokens=2), cost_usd=1e-4, **fields)  # type: ignore[arg-type]


def test_answers_are_cached_transient_failures_are_not() -> None:
    assert is_cacheable(result("ok"))
    assert is_cacheable(result("refused", "I can't help with that", error_kind="content_filter"))
    assert not is_cacheable(result("error", "HTTP 503", error_kind="server"))
    assert not is_cacheable(result("error", "timed out", error_kind="timeout"))
    original = result("ok", "Score: 73", model_version="fp_1")
    assert decode_result(encode_result(original)) == original


# ---------------------------------------------------------------------------
# Group commit


def test_commit_returns_only_once_readable_and_batches_concurrent_commits(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    cache = CallCache(store)
    keys = [request_key(msgspec.structs.replace(BASE, replicate=r)) for r in range(300)]

    async def main() -> GroupCommitWriter:
        async with GroupCommitWriter(store) as writer:

            async def one(n: int) -> None:
                await writer.commit([(RESULTS_DB, keys[n], encode_result(result(text=str(n))))])
                # reported done => committed: a fresh read transaction sees it
                got = cache.get(keys[n])
                assert got is not None and got.text == str(n)

            async with anyio.create_task_group() as tg:
                for n in range(300):
                    tg.start_soon(one, n)
        return writer

    writer = anyio.run(main)
    assert writer.items_committed == 300
    assert writer.commits < 300  # group commit: several results per transaction
    assert len(cache) == 300
    assert [r.text if r else None for r in cache.get_many(keys[:3] + [b"\0" * 32])] == ["0", "1", "2", None]
    store.close()


def test_submitted_writes_are_flushed_on_exit_and_callbacks_run_after_commit(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    seen: list[bool] = []

    async def main() -> None:
        async with GroupCommitWriter(store, max_pending=4) as writer:
            for n in range(50):  # max_pending=4: the loop waits for room, never an unbounded queue
                key = bytes([n]) * 32
                await writer.submit([("rows", key, b"x")], callback=lambda k=key: seen.append(store.get_raw("rows", k) == b"x"))

    anyio.run(main)
    assert seen == [True] * 50
    assert store.count("rows") == 50
    store.close()


def test_max_pending_bounds_answers_not_the_follow_ups_their_commits_cause(tmp_path: Path) -> None:
    """submit_nowait follow-ups (a committed answer's rows, a cell's state)
    cost nothing to lose: they do not take an answer's room, and only
    max_outstanding caps all submissions together."""
    store = Store(tmp_path / "s")
    counts: dict[str, int] = {}

    def key(n: int) -> bytes:
        return n.to_bytes(32, "big")

    async def main() -> None:
        # a 30 s gather window: nothing commits unless a submission waits for room
        async with GroupCommitWriter(store, max_pending=4, max_outstanding=12, gather_s=30.0) as writer:
            for n in range(8):
                writer.submit_nowait([("rows", key(n), b"follow-up")])
            for n in range(4):
                await writer.submit([("rows", key(100 + n), b"answer")])
            counts["four answers, eight follow-ups"] = store.count("rows")
            await writer.submit([("rows", key(104), b"answer")])  # the fifth answer waits for room
            counts["fifth answer"] = store.count("rows")
        async with GroupCommitWriter(store, max_pending=100, max_outstanding=6, gather_s=30.0) as writer:
            for n in range(6):
                writer.submit_nowait([("rows", key(200 + n), b"follow-up")])
            counts["six follow-ups"] = store.count("rows")
            await writer.submit([("rows", key(300), b"answer")])  # 6 outstanding in all: waits
            counts["answer after six follow-ups"] = store.count("rows")

    anyio.run(main)
    assert counts["four answers, eight follow-ups"] == 0  # 12 uncommitted, no answer waited
    assert counts["fifth answer"] == 12  # the answers and follow-ups before it committed first
    assert counts["six follow-ups"] == 13
    assert counts["answer after six follow-ups"] == 13 + 6
    assert store.count("rows") == 13 + 6 + 1
    store.close()


def test_awaited_commits_and_flushes_do_not_wait_for_the_gather_window(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    timings: dict[str, float] = {}

    async def main() -> GroupCommitWriter:
        # a 30 s gather window: only background submissions may wait for it
        async with GroupCommitWriter(store, gather_s=30.0) as writer:
            t0 = time.monotonic()
            await writer.commit([(RESULTS_DB, b"a" * 32, b"awaited")])
            timings["commit"] = time.monotonic() - t0
            for n in range(100):
                await writer.submit([("rows", n.to_bytes(32, "big"), b"background")])
            await anyio.sleep(0.5)
            assert store.count("rows") == 0  # still gathering
            t0 = time.monotonic()
            await writer.flush()
            timings["flush"] = time.monotonic() - t0
            assert store.count("rows") == 100
        return writer

    writer = anyio.run(main)
    assert timings["commit"] < 10 and timings["flush"] < 10, timings
    assert writer.commits == 2  # the 100 background submissions went over together
    store.close()


def test_a_big_handover_is_committed_in_bounded_transactions_of_whole_submissions(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    seen: list[int] = []

    async def main() -> GroupCommitWriter:
        async with GroupCommitWriter(store, max_batch=10) as writer:
            for n in range(25):  # one loop iteration: one handover of 25 submissions x 3 items
                items = [("rows", bytes([n, k]) * 16, b"x") for k in range(3)]
                writer.submit_nowait(items, callback=lambda keys=[k for _, k, _ in items]: seen.append(sum(store.get_raw("rows", k) is not None for k in keys)))
            writer.submit_nowait([("rows", bytes([99, k]) * 16, b"big") for k in range(15)])  # > max_batch: alone
        return writer

    writer = anyio.run(main)
    # 3 submissions (9 items) per transaction, the 25th alone, then the big one
    assert writer.commits == 10
    assert seen == [3] * 25  # each submission whole when its callback ran
    assert store.count("rows") == 90
    store.close()


def test_a_key_written_twice_in_one_batch_keeps_its_last_value(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")

    async def main() -> None:
        async with GroupCommitWriter(store) as writer:
            for n in range(50):  # same loop iteration: one batch; the commit process sorts it by key
                writer.submit_nowait([("rows", bytes([n % 5]) * 32, b"v%d" % n)])

    anyio.run(main)
    assert [store.get_raw("rows", bytes([k]) * 32) for k in range(5)] == [b"v%d" % (45 + k) for k in range(5)]
    store.close()


def test_a_failed_commit_is_reported_to_the_waiter(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")

    async def main() -> None:
        async with GroupCommitWriter(store) as writer:
            await writer.commit([("no-such-db", b"k" * 32, b"v")])

    with pytest.raises(CommitError, match="commit failed"):
        anyio.run(main)
    store.close()


def test_the_map_grows_when_full(tmp_path: Path) -> None:
    store = Store(tmp_path / "s")
    start = store.env.info()["map_size"]
    blob = b"z" * (1 << 20)

    cache = CallCache(store)
    seen: list[bool] = []

    async def main() -> None:
        # readers on the loop while the commit process grows the map: a read
        # past this process's map adopts the new size (MapResizedError)
        async with GroupCommitWriter(store) as writer:
            for n in range(start // len(blob) + 16):
                await writer.submit([(RESULTS_DB, n.to_bytes(32, "big"), blob)])
                seen.append(cache.contains(max(0, n - 8).to_bytes(32, "big")))
                await anyio.sleep(0)

    anyio.run(main)
    store.adopt_map_size()
    assert store.env.info()["map_size"] > start
    assert len(seen) == start // len(blob) + 16  # every read on the loop succeeded during growth
    assert store.count(RESULTS_DB) == start // len(blob) + 16
    store.close()


def test_two_processes_share_one_store(tmp_path: Path) -> None:
    path = tmp_path / "shared"
    store = Store(path)
    child = textwrap.dedent(
        f"""
        import anyio
        from engine.cache.call_cache import GroupCommitWriter, RESULTS_DB
        from engine.cache.store import Store
        store = Store({str(path)!r})
        async def main():
            async with GroupCommitWriter(store) as writer:
                for n in range(200):
                    await writer.submit([(RESULTS_DB, b"c" + n.to_bytes(31, "big"), b"child")])
        anyio.run(main)
        store.close()
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", child])

    async def main() -> None:
        async with GroupCommitWriter(store) as writer:
            for n in range(200):
                await writer.commit([(RESULTS_DB, b"p" + n.to_bytes(31, "big"), b"parent")])

    anyio.run(main)
    assert proc.wait(timeout=60) == 0
    assert store.count(RESULTS_DB) == 400
    store.close()


def grow_in_another_process(path: Path, start: int) -> None:
    """Write 32 MB more than a `start`-byte map holds into the store, from a child process."""
    child = textwrap.dedent(
        f"""
        from engine.cache.store import Store
        store = Store({str(path)!r})
        blob = b"g" * (1 << 20)
        store.put_many_raw("results", [(b"c" + n.to_bytes(31, "big"), blob) for n in range({start >> 20} + 32)])
        assert store.env.info()["map_size"] > {start}
        store.close()
        """
    )
    subprocess.run([sys.executable, "-c", child], check=True, timeout=120)


def test_a_store_another_process_grew_is_adopted_for_reads_and_writes(tmp_path: Path) -> None:
    # LMDB answers MapResizedError when another process wrote beyond this
    # process's map; the store takes the new size and goes on
    path = tmp_path / "shared"
    store = Store(path)
    store.put_many_raw(RESULTS_DB, [(b"p" + bytes(31), b"parent")])
    start = store.env.info()["map_size"]
    grow_in_another_process(path, start)
    cache = CallCache(store)
    assert store.get_raw(RESULTS_DB, b"c" + (5).to_bytes(31, "big")) == b"g" * (1 << 20)  # a read adopts
    assert store.count(RESULTS_DB) == (start >> 20) + 32 + 1
    assert cache.contains(b"p" + bytes(31))

    async def main() -> None:
        async with GroupCommitWriter(store) as writer:
            await writer.commit([(RESULTS_DB, b"q" + bytes(31), b"after")])

    anyio.run(main)
    assert store.get_raw(RESULTS_DB, b"q" + bytes(31)) == b"after"
    store.close()


def test_the_group_writer_adopts_a_store_another_process_grew(tmp_path: Path) -> None:
    path = tmp_path / "shared"
    store = Store(path)
    start = store.env.info()["map_size"]
    grow_in_another_process(path, start)

    async def main() -> None:  # the first touch of the grown store is the writer thread's
        async with GroupCommitWriter(store) as writer:
            await writer.commit([(RESULTS_DB, b"q" + bytes(31), b"after")])

    anyio.run(main)
    assert store.get_raw(RESULTS_DB, b"q" + bytes(31)) == b"after"
    assert store.count(RESULTS_DB) == (start >> 20) + 32 + 1
    store.close()
