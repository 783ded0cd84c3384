"""The fake server's batch APIs: what the three providers' batch endpoints
share (simulation/batch_openai.py, batch_anthropic.py, batch_gemini.py
speak the wire formats).

A batch is processed lazily and deterministically by the clock and the
current `BatchSim` (a new configuration applies to pending batches): it ends
`delay_s` after its creation (the first status or results request after
that runs its entries), or expires at `expire_after_s` (when that comes
first) with only the first `expire_after_s / delay_s` of its entries done.
Each entry is answered by the same simulated judge, with the same body, as
a synchronous call of the same request (`FakeServer.answer`,
`WireDialect.success_body`), so batch == sync; an entry whose custom_id
(and run number) hashes under `failure_rate` gets the provider's error body with
`failure_status`; a batch whose creation index is in `fail_batches` is
rejected whole. Faults of the control calls themselves (upload, create,
status, results, cancel) come from `BatchSim.faults`.

Counters (in `FakeServer.stats()["batch"]`): batches created, control
requests by operation, and entries processed per custom_id, so a test can
prove no entry was run (paid) twice.
"""

from __future__ import annotations

import fnmatch
import hashlib
import itertools
import threading
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any, Protocol

import msgspec
from aiohttp import web

from simulation.fake_config import BatchFault, BatchSim, FakeConfig
from simulation.faults import drop
from simulation.wire import Call, Reject, WireDialect
from simulation.wires import wire_of


class FakeServer(Protocol):
    """What the batch endpoints use of simulation.fake_server.FakeServer
    (a protocol, so that the server imports its batch routes one way)."""

    config: FakeConfig

    def answer(self, call: Call) -> tuple[str, str]: ...

    def cached_prefix_tokens(self, call: Call) -> int: ...


class EntryAnswer(msgspec.Struct, frozen=True):
    """One processed entry: the HTTP status and body a synchronous call would have got."""

    status: int
    body: bytes


class Job:
    """One simulated batch."""

    def __init__(self, batch_id: str, provider: str, index: int, entries: list[tuple[str, Call | Reject]], **extra: Any) -> None:
        self.id, self.provider, self.index = batch_id, provider, index
        self.entries = entries
        self.created = time.monotonic()
        self.created_at = time.time()
        self.state = "in_progress"  # in_progress | ended | expired | failed | cancelled
        self.ended_at = 0.0
        self.detail = ""  # why a failed batch failed
        self.answers: dict[str, EntryAnswer] = {}
        self.extra = extra  # per-dialect bits (file ids, model, display name)

    @property
    def done(self) -> bool:
        return self.state != "in_progress"

    def counts(self) -> tuple[int, int, int]:
        """(total, succeeded, errored)."""
        ok = sum(1 for a in self.answers.values() if 200 <= a.status < 300)
        return len(self.entries), ok, len(self.answers) - ok


class BatchBook:
    """Every batch and uploaded file of one fake server, and their counters."""

    def __init__(self, server: FakeServer) -> None:
        self.server = server
        self._lock = threading.Lock()
        # Batches and files live as long as the server: a reset or a new
        # configuration (which apply to pending batches too) keeps them, so a
        # client can pick up a pending batch after either.
        self.jobs: dict[str, Job] = {}
        self.files: dict[str, tuple[str, bytes]] = {}  # id -> (purpose, content)
        self._ids = itertools.count()
        self.reset()

    def reset(self) -> None:
        """Zero the counters (the creation index `fail_batches` counts too)."""
        with self._lock:
            self._created = 0
            self._by_operation: Counter[str] = Counter()
            self._processed: Counter[str] = Counter()
            self._runs = 0
            self._failed = 0
            self._fault_counters = [0] * len(self.server.config.batch.faults)

    @property
    def sim(self) -> BatchSim:
        return self.server.config.batch

    def new_id(self, prefix: str) -> str:
        with self._lock:
            return f"{prefix}{next(self._ids):06d}fake"

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return {
                "created": self._created,
                "by_operation": dict(self._by_operation),
                "entries_processed": self._runs,
                "entries_failed": self._failed,
                "processed": dict(self._processed),  # custom_id -> times run
                "repeated": {cid: n for cid, n in self._processed.items() if n > 1},
            }

    # -- control calls -----------------------------------------------------

    def control(self, request: web.Request, wire: WireDialect, operation: str) -> web.Response | None:
        """Count a control call, check its key, inject a configured fault:
        the error answer, or None to go on."""
        config = self.server.config
        with self._lock:
            self._by_operation[operation] += 1
        if not any(pattern == "*" for pattern in config.keyless_models):
            key = wire.key(request)
            if not key:
                return wire.error_response(wire.missing_key())
            if config.valid_keys and key not in config.valid_keys:
                return wire.error_response(wire.invalid_key())
        fault = self._fault_for(operation)
        if fault is None:
            return None
        if fault.kind == "rate_limit":
            return wire.rate_limit_response(fault.retry_after_s, {}, bare=False)
        if fault.kind == "reset":
            drop(request)
            return web.Response(status=500)
        status = fault.status or 500
        return wire.error_response(Reject(status, wire.kind_for_status(status), f"Injected HTTP {status} on batch {operation}."))

    def _fault_for(self, operation: str) -> BatchFault | None:
        chosen = None
        with self._lock:
            faults = self.server.config.batch.faults
            if len(self._fault_counters) != len(faults):
                self._fault_counters = [0] * len(faults)
            for number, fault in enumerate(faults):
                if not fnmatch.fnmatchcase(operation, fault.operation):
                    continue
                nth = self._fault_counters[number]
                self._fault_counters[number] += 1
                hit = nth in fault.schedule or (fault.rate > 0 and _uniform(self.server.config.seed, "batch-fault", number, nth) < fault.rate)
                if hit and chosen is None:
                    chosen = fault
        return chosen

    def job_handler(
        self, wire: WireDialect, operation: str, render: Callable[[Job, web.Request], web.Response], *,
        act: Callable[[Job], None] | None = None, id_prefix: str = "",
    ) -> Callable[[web.Request], Awaitable[web.Response]]:
        """A route answering about one batch (`{batch_id}` in the path, after
        `id_prefix`): checked like every control call, 404 when unknown, then
        `act` (e.g. cancel) and `render`."""

        async def handle(request: web.Request) -> web.Response:
            refused = self.control(request, wire, operation)
            if refused is not None:
                return refused
            batch_id = id_prefix + request.match_info["batch_id"]
            job = self.get(batch_id)
            if job is None or job.provider != wire.provider:
                return wire.error_response(Reject(404, wire.kind_for_status(404), f"No batch found with id '{batch_id}'."))
            if act is not None:
                act(job)
            return render(job, request)

        return handle

    # -- batches -----------------------------------------------------------

    def create(self, provider: str, batch_id: str, entries: list[tuple[str, Call | Reject]], **extra: Any) -> Job:
        """A new batch; rejected whole (state failed) when its creation index is in `fail_batches`."""
        with self._lock:
            index = self._created
            self._created += 1
            job = self.jobs[batch_id] = Job(batch_id, provider, index, entries, **extra)
        if index in self.sim.fail_batches:
            job.state, job.ended_at = "failed", time.time()
            job.detail = f"batch {index} rejected (fail_batches)"
        return job

    def rejected_whole(self) -> bool:
        """Whether the next batch to be created is to be rejected (for APIs that refuse it at creation)."""
        with self._lock:
            index = self._created
            if index in self.sim.fail_batches:
                self._created += 1
                return True
        return False

    def get(self, batch_id: str) -> Job | None:
        """The batch, advanced to the present: its entries run once it is due."""
        with self._lock:
            job = self.jobs.get(batch_id)
        if job is not None and not job.done:
            self._advance(job)
        return job

    def cancel(self, job: Job) -> None:
        """Cancel a running batch: entries not yet run never will be."""
        if not job.done:
            self._advance(job)
        if not job.done:
            job.state, job.ended_at = "cancelled", time.time()

    def _advance(self, job: Job) -> None:
        elapsed = time.monotonic() - job.created
        sim = self.sim
        expire = sim.expire_after_s
        if expire is not None and expire < sim.delay_s and elapsed >= expire:
            done = int(len(job.entries) * expire / sim.delay_s) if sim.delay_s else 0
            self._run(job, job.entries[:done])
            job.state = "expired"
        elif elapsed >= sim.delay_s:
            self._run(job, job.entries)
            job.state = "ended"
        else:
            return
        job.ended_at = time.time()

    def _run(self, job: Job, entries: list[tuple[str, Call | Reject]]) -> None:
        wire = wire_of(job.provider)
        for custom_id, call in entries:
            if custom_id in job.answers:
                continue
            job.answers[custom_id] = self._answer(wire, custom_id, call, self.sim)

    def _answer(self, wire: WireDialect, custom_id: str, call: Call | Reject, sim: BatchSim) -> EntryAnswer:
        seed = self.server.config.seed
        with self._lock:
            runs = self._processed[custom_id]  # runs before this one: a re-asked entry draws afresh
            self._processed[custom_id] += 1
            self._runs += 1
            index = self._runs
        if isinstance(call, Reject):
            answer = EntryAnswer(call.status, wire.error_body(call))
        elif sim.failure_rate > 0 and entry_fails(seed, custom_id, runs, sim.failure_rate):
            status = sim.failure_status
            answer = EntryAnswer(status, wire.error_body(Reject(status, wire.kind_for_status(status), "The server had an error processing this request (injected).")))
        else:
            text, finish = self.server.answer(call)
            body = wire.success_body(call, text, finish, self.server.cached_prefix_tokens(call), seed + index)
            answer = EntryAnswer(200, body)
        if not 200 <= answer.status < 300:
            with self._lock:
                self._failed += 1
        return answer


def validate_entry(
    wire: WireDialect, server: FakeServer, body: Any, *, headers: Any = None, match_info: dict[str, str] | None = None,
    query: dict[str, str] | None = None,
) -> Call | Reject:
    """One entry's request body validated as the synchronous endpoint would
    (`match_info` / `query` / `headers` stand for what its URL and headers
    would carry); a Reject is the entry's error answer."""
    if not isinstance(body, dict):
        return Reject(400, wire.bad_request_kind, "The request body must be a JSON object.")
    shim = SimpleNamespace(headers=headers or {}, match_info=match_info or {}, query=query or {}, path="")
    try:
        call = wire.validate(shim, body)  # type: ignore[arg-type]
    except Reject as reject:
        return reject
    if any(fnmatch.fnmatchcase(call.model, pattern) for pattern in server.config.missing_models):
        return wire.not_found(call.model)
    return call


def entry_fails(seed: int, custom_id: str, runs: int, rate: float) -> bool:
    """Whether the entry's run number `runs` (0 = first) fails: a hash of the
    custom_id and the run, so a failed entry asked again may succeed."""
    return _uniform(seed, "batch-entry", custom_id, runs) < rate


def _uniform(*parts: object) -> float:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64
