"""Several servers behind one openai-compatible judge (adapters/replicas.py),
over real HTTP to fake servers on 127.0.0.1: spreading by calls in flight,
a replica that dies, hangs or answers 503, probing back in, the config."""

from __future__ import annotations

import contextlib
import math

import anyio
import pytest
from http_fixtures import judge_request

from adapters.replicas import ReplicaPool
from engine.contracts import AdapterConfigError, JudgeSpec, request_key
from engine.run.judge_health import is_transient
from engine.registry import create_adapter
from simulation.fake_config import Fault, Latency
from simulation.fake_server import serve_in_thread

pytestmark = [pytest.mark.anyio]
MODEL = "local-replica"  # a keyless model: no API key needed, as with a local vLLM server


def replica_spec(urls: list[str], **overrides) -> JudgeSpec:
    options = {"backoff_base_s": 0.01, "backoff_cap_s": 0.1, "replica_pause_s": 60.0}
    options.update(overrides.pop("options", {}))
    fields = dict(name="replicas", adapter="openai-compatible", model=MODEL, base_urls=tuple(f"{u}/v1" for u in urls),
                  concurrency=8, timeout_s=5.0, max_attempts=4, max_retry_time_s=60.0, options=options)
    fields.update(overrides)
    return JudgeSpec(**fields)


class Fleet:
    """Fake servers each in its own thread; `stop(i)` ends one mid-run, as if its process died."""

    def __init__(self, n: int) -> None:
        self._managers = [serve_in_thread() for _ in range(n)]
        self.servers = [manager.__enter__() for manager in self._managers]
        self.completed_at_stop: dict[int, int] = {}

    def stop(self, i: int) -> None:
        manager, self._managers[i] = self._managers[i], None
        if manager is not None:
            manager.__exit__(None, None, None)
            self.completed_at_stop[i] = self.servers[i].stats()["completed"]

    def restart(self, i: int) -> None:
        """A new server on the stopped one's port (the replica recovered)."""
        port = int(self.servers[i].url.rsplit(":", 1)[1])
        self._managers[i] = serve_in_thread(port=port)
        self.servers[i] = self._managers[i].__enter__()

    def close(self) -> None:
        for i in range(len(self._managers)):
            self.stop(i)


@contextlib.contextmanager
def fake_servers(n: int):
    fleet = Fleet(n)
    try:
        yield fleet
    finally:
        fleet.close()


def configured(servers, latency_s: float = 0.02) -> None:
    for server in servers:
        server.configure(latency=Latency(kind="fixed", value_s=latency_s))


async def judge_all(adapter, requests, *, during=None):
    """Every request through `adapter` at the judge's concurrency; `during`
    (async) runs beside the calls, e.g. to stop a server mid-run."""
    results = [None] * len(requests)
    limit = anyio.Semaphore(adapter.spec.concurrency)

    async def one(i: int) -> None:
        async with limit:
            results[i] = await adapter.complete(requests[i])

    async with anyio.create_task_group() as tg:
        for i in range(len(requests)):
            tg.start_soon(one, i)
        if during is not None:
            tg.start_soon(during)
    return results


async def run_on(servers, requests, **spec_fields):
    """`requests` through a fresh judge over `servers`; its results and pool state after."""
    adapter = create_adapter(replica_spec([s.url for s in servers], **spec_fields))
    try:
        return await judge_all(adapter, requests), adapter.replicas.snapshot()
    finally:
        await adapter.aclose()


def assert_paid_again_only_after_a_failed_attempt(results, stats) -> None:
    """Nothing lost, and a call is paid more than once only when an attempt of
    it failed on the client's side: a healthy replica's answer that arrives
    after `timeout_s` (a loaded box) is paid there and asked again elsewhere,
    which is the timeout's documented cost, not a double payment."""
    completed = sum(s["completed"] for s in stats)
    failed_attempts = sum(r.attempts - 1 for r in results)
    assert len(results) <= completed <= len(results) + failed_attempts, (completed, failed_attempts, stats)


def completed(servers) -> list[int]:
    return [server.stats()["completed"] for server in servers]


# -- choosing a replica -------------------------------------------------------


async def test_pool_picks_fewest_in_flight_and_caps_each_replica():
    pool = ReplicaPool(["a", "b", "c"], per_replica=2)
    first = [await pool.acquire() for _ in range(6)]
    assert sorted(r.url for r in first) == ["a", "a", "b", "b", "c", "c"]
    pool.release(first[2], failed=False)  # "c" now has the fewest
    assert (await pool.acquire()).url == first[2].url
    with anyio.move_on_after(0.2) as scope:  # every replica full: waits for a release
        await pool.acquire()
    assert scope.cancelled_caught


async def test_pool_ejects_after_consecutive_failures_and_probes_back_in():
    pool = ReplicaPool(["a", "b"], per_replica=4, eject_after=2, pause_s=0.2)
    for _ in range(2):
        bad = await pool.acquire()
        while bad.url != "a":  # keep "b" busy, fail "a"
            bad = await pool.acquire()
        pool.release(bad, failed=True, error="connection: refused")
    assert pool.snapshot()[0]["out"] and not pool.snapshot()[1]["out"]
    assert {(await pool.acquire()).url for _ in range(3)} == {"b"}
    await anyio.sleep(0.25)
    probe = await pool.acquire()
    assert probe.url == "a" and probe.probing
    pool.release(probe, failed=False)
    assert not pool.snapshot()[0]["out"]


async def test_calls_spread_by_in_flight_count():
    with fake_servers(4) as fleet:
        servers = fleet.servers
        configured(servers[:3], latency_s=0.01)
        configured(servers[3:], latency_s=0.3)  # the slow one holds its calls longer
        results, _ = await run_on(servers, [judge_request(MODEL) for _ in range(120)])
    assert all(r.status == "ok" for r in results)
    counts = completed(servers)
    assert sum(counts) == 120
    # round robin would give each 30; by calls in flight the slow replica gets far fewer
    assert counts[3] < 20 and min(counts[:3]) > 25, counts


async def test_even_replicas_share_evenly():
    with fake_servers(4) as fleet:
        servers = fleet.servers
        configured(servers, latency_s=0.05)
        results, _ = await run_on(servers, [judge_request(MODEL) for _ in range(80)])
    assert all(r.status == "ok" for r in results)
    assert all(15 <= n <= 25 for n in completed(servers)), completed(servers)


# -- one replica of four fails --------------------------------------------------


async def healthy_texts(requests) -> list[str]:
    with serve_in_thread() as server:
        configured([server], latency_s=0.0)
        results, _ = await run_on([server], requests)
        return [r.text for r in results]


@pytest.mark.parametrize("fault", ["dies", "hangs", "503"])
async def test_one_replica_of_four_fails_and_the_run_finishes_on_the_rest(fault):
    requests = [judge_request(MODEL) for _ in range(160)]
    expected = await healthy_texts(requests)
    with fake_servers(4) as fleet:
        servers = fleet.servers
        configured(servers, latency_s=0.02)
        victim = servers[1]
        adapter = create_adapter(replica_spec([s.url for s in servers], concurrency=8, timeout_s=1.0))

        if fault == "hangs":  # from its 16th request on, it answers after 30 s (timeout_s is 1)
            victim.configure(latency=Latency(kind="fixed", value_s=0.02), faults=(Fault(kind="hang", schedule=tuple(range(15, 10**4)), hang_s=30),))
        elif fault == "503":
            victim.configure(latency=Latency(kind="fixed", value_s=0.02), faults=(Fault(kind="overloaded", schedule=tuple(range(15, 10**4))),))

        async def stop_victim() -> None:
            await anyio.sleep(0.3)
            await anyio.to_thread.run_sync(fleet.stop, 1)

        try:
            results = await judge_all(adapter, requests, during=stop_victim if fault == "dies" else None)
            victim_state = adapter.replicas.snapshot()[1]
        finally:
            await adapter.aclose()
        stats = [s.stats() for s in servers]
    assert [r.status for r in results] == ["ok"] * len(requests)
    assert [r.text for r in results] == expected  # identical to a healthy run
    assert victim_state["answered"] > 0 and victim_state["failures"] > 0, victim_state  # it worked, then failed
    if fault == "dies":
        assert victim_state["out"], victim_state
    else:  # the victim received calls it never answered (a hang is counted only when it ends)
        assert stats[1]["requests"] > stats[1]["completed"], stats[1]
    assert_paid_again_only_after_a_failed_attempt(results, stats)


@pytest.mark.parametrize("fault", ["hangs", "503"])
async def test_a_replica_that_hangs_or_503s_for_a_while_is_ejected_then_probed_back_in(fault, caplog):
    # its 16th to 20th requests fail: three in a row take it out, the calls
    # in flight on it and the first probe fail too, a later probe brings it back
    requests = [judge_request(MODEL) for _ in range(600)]
    expected = await healthy_texts(requests)
    kind = "hang" if fault == "hangs" else "overloaded"
    with fake_servers(4) as fleet:
        servers = fleet.servers
        configured(servers, latency_s=0.03)
        victim = servers[1]
        victim.configure(latency=Latency(kind="fixed", value_s=0.03), faults=(Fault(kind=kind, schedule=tuple(range(15, 20)), hang_s=30),))
        caplog.set_level("WARNING", logger="needlejudge.adapters")
        results, states = await run_on(servers, requests, timeout_s=0.5, options={"replica_pause_s": 0.1})
        stats = [s.stats() for s in servers]
    assert [r.text for r in results] == expected and all(r.status == "ok" for r in results)
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith(f"replica {victim.url}/v1:")]
    out = [i for i, m in enumerate(said) if "out for" in m]
    back = [i for i, m in enumerate(said) if "back in" in m]
    assert out and back and out[0] < back[-1], said  # taken out, then probed back in
    assert "out for 0.1s after 3 failed call(s)" in said[out[0]], said
    assert not states[1]["out"] and stats[1]["completed"] >= 15 + 40, stats[1]  # it takes its share again
    assert_paid_again_only_after_a_failed_attempt(results, stats)


async def test_a_dead_replica_is_probed_back_in_when_it_recovers():
    with fake_servers(2) as fleet:
        configured(fleet.servers, latency_s=0.01)
        adapter = create_adapter(replica_spec([s.url for s in fleet.servers], concurrency=4,
                                              options={"replica_pause_s": 0.3, "replica_eject_after": 1}))
        try:
            fleet.stop(1)
            first = await judge_all(adapter, [judge_request(MODEL) for _ in range(20)])
            assert adapter.replicas.snapshot()[1]["out"]
            fleet.restart(1)
            configured(fleet.servers[1:], latency_s=0.01)
            await anyio.sleep(0.35)
            second = await judge_all(adapter, [judge_request(MODEL) for _ in range(40)])
            state = adapter.replicas.snapshot()[1]
        finally:
            await adapter.aclose()
        back = fleet.servers[1].stats()["completed"]
    assert all(r.status == "ok" for r in first + second)
    assert not state["out"] and back >= 10, (state, back)  # it takes its share again


async def test_all_replicas_down_is_a_transient_failure_never_a_score():
    with fake_servers(2) as fleet:
        urls = [s.url for s in fleet.servers]
        fleet.close()
        adapter = create_adapter(replica_spec(urls, options={"replica_eject_after": 1}))
        try:
            result = await adapter.complete(judge_request(MODEL))
            again = await adapter.complete(judge_request(MODEL))
        finally:
            await adapter.aclose()
    assert result.status == "error" and result.score is None and is_transient(result)
    assert result.attempts == 2  # one request to each replica, then none is left
    assert again.error_kind == "replicas_down" and again.attempts == 0
    assert urls[0] in again.text and urls[1] in again.text


async def test_answers_and_cache_key_do_not_depend_on_the_replica():
    request = judge_request(MODEL)
    with fake_servers(2) as fleet:
        configured(fleet.servers, latency_s=0.0)
        texts, keys = [], []
        for server in fleet.servers:
            adapter = create_adapter(replica_spec([server.url]))
            try:
                texts.append((await adapter.complete(request)).text)
            finally:
                await adapter.aclose()
            keys.append(request_key(request))
        pooled = create_adapter(replica_spec([s.url for s in fleet.servers]))
        try:
            texts.append((await pooled.complete(request)).text)
        finally:
            await pooled.aclose()
    assert texts[0] == texts[1] == texts[2] and texts[0].startswith("Score:")
    assert keys[0] == keys[1] == request_key(request)
    # the request the engine keys carries no URL at all
    assert not any("url" in field or "port" in field for field in type(request).__struct_fields__)


def test_config_errors_name_the_judge_and_the_problem():
    one = "http://127.0.0.1:8000/v1"
    two = "http://127.0.0.1:8001/v1"
    cases = [
        (dict(base_url=one, base_urls=(two,)), "not both"),
        (dict(base_urls=(one, one + "/")), "twice"),
        (dict(base_urls=(one, "127.0.0.1:9/v1")), "not an http"),
        (dict(base_urls=(one, two), options={"replica_concurrency": 0}), "replica_concurrency must be a positive integer"),
        (dict(base_urls=(one, two), options={"replica_pause_s": "soon"}), "replica_pause_s must be a positive number"),
        (dict(), "needs base_url"),
    ]
    for fields, message in cases:
        spec = JudgeSpec(name="j", adapter="openai-compatible", model=MODEL, **fields)
        with pytest.raises(AdapterConfigError, match=message) as info:
            create_adapter(spec)
        assert "'j'" in str(info.value)
    with pytest.raises(AdapterConfigError, match="only"):
        create_adapter(JudgeSpec(name="j", adapter="anthropic", model="m", base_urls=(one, two), api_key_env="PATH"))
    single = create_adapter(JudgeSpec(name="j", adapter="openai-compatible", model=MODEL, base_url=one))
    assert single.replicas is None  # one base_url keeps the old single-server path
    pooled = create_adapter(JudgeSpec(name="j", adapter="openai-compatible", model=MODEL, base_urls=(one, two), concurrency=5))
    assert pooled.replicas.per_replica == 3  # 1.1 x the judge's concurrency split, rounded up


async def test_at_full_concurrency_a_sibling_follows_its_key_past_the_even_split():
    # with at most the even split (128) on each replica, a full judge's calls go wherever a call
    # just ended, and a sibling to the other replica, which prefills its document again
    urls = ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8001/v1")
    pool = create_adapter(JudgeSpec(name="j", adapter="openai-compatible", model=MODEL, base_urls=urls, concurrency=256)).replicas
    others = [await pool.acquire() for _ in range(254)]  # the judge's other calls, spread evenly
    key = b"one document"
    owner = await pool.acquire(key)
    assert owner.in_flight == 128
    sibling = await pool.acquire(key)  # the judge's last free slot
    assert sibling is owner and owner.in_flight == 129 <= math.ceil(0.55 * 256)
    for replica in [*others, owner, sibling]:
        pool.release(replica, failed=False)


# -- prefix affinity, load bounds, fair ties ------------------------------------


async def test_ties_alternate_so_calls_that_never_overlap_spread_evenly():
    pool = ReplicaPool(["a", "b", "c"], per_replica=4)
    for _ in range(90):  # one call at a time: every choice is a tie on calls in flight
        pool.release(await pool.acquire(), failed=False)
    assert [r["sent"] for r in pool.snapshot()] == [30, 30, 30]


async def test_siblings_follow_their_prefix_key_within_the_load_bound():
    pool = ReplicaPool(["a", "b"], per_replica=8, balance=0.1)
    placed: dict[bytes, set[str]] = {}
    for group in range(60):
        key = f"document {group}".encode()
        for _ in range(4):  # a document's four needles, one after the other
            replica = await pool.acquire(key)
            placed.setdefault(key, set()).add(replica.url)
            pool.release(replica, failed=False)
    together = sum(len(urls) == 1 for urls in placed.values())
    assert together >= 50, f"only {together} of 60 sibling groups stayed on one replica"
    sent = [r["sent"] for r in pool.snapshot()]
    assert max(sent) <= 0.55 * sum(sent), sent  # (1 + balance) x the fair share, exactly


async def test_calls_in_flight_on_one_key_stay_within_the_bound():
    pool = ReplicaPool(["a", "b"], per_replica=100, balance=0.1)
    for _ in range(40):  # some history, so that the bound on calls sent does not bind
        pool.release(await pool.acquire(), failed=False)
    key = b"one document"
    held = [await pool.acquire(key) for _ in range(20)]  # all in flight at once
    in_flight = sorted(r["in_flight"] for r in pool.snapshot())
    # the key's replica takes what the bound allows, ceil(0.55 x 20) = 11; the rest overflow
    assert in_flight == [9, 11], in_flight
    for replica in held:
        pool.release(replica, failed=False)


async def test_a_paced_judge_spreads_its_calls_over_two_replicas():
    with fake_servers(2) as fleet:
        servers = fleet.servers
        configured(servers, latency_s=0.002)
        requests = [judge_request(MODEL, seed=n) for n in range(150)]
        results, pool = await run_on(servers, requests, rpm=3000)  # 50 calls/s: they never overlap
    assert all(r.status == "ok" for r in results)
    counts = completed(servers)
    assert sum(counts) == 150 and all(0.45 * 150 <= n <= 0.55 * 150 for n in counts), counts
