"""A wave of calls as a Ray Data job, behind `BatchAdapter`
(`needlejudge run --executor ray --address auto|local|ray://...`).

The engine's batch judge (engine/run/batch/judge.py) plans each wave and
commits its answers; this adapter runs the wave's calls on a Ray cluster:
a dataset of (key, request) rows through a stage of actors, streamed back
to the driver (`iter_batches`), which alone writes the cache.

- API judges: an actor stage over the project's own adapter
  (`engine.registry.create_adapter`: its dialect, parsing, retries and
  error classes), each actor with the judge's concurrency. The account's
  rate limit (`rpm`, `tpm`) is held once for the whole cluster by one named
  actor (`_Gate`) that every call asks before it goes out; the actors'
  own adapters run without a limit of their own.
- vllm judges: ray.data.llm's vLLM processor, `workers` engine replicas
  (adapters/ray_vllm.py: the in-process adapter's rendering, guided
  decoding and answers). Each wave's job starts its engines.
- The provider's key is read from the environment of each node (as by
  any adapter: never shipped by the driver): set it where the workers
  start (`ray start`, or the job's runtime_env). A node without it answers
  every call with a fatal `auth` failure naming the node, which stops the run.
- Blocks are `concurrency` rows: an actor lost mid-wave is restarted by Ray
  Data and its block retried, so at most the calls it had in flight are
  paid twice; nothing the driver received is lost, and a killed driver
  resumes from the cache like any run (the wave's unanswered calls are
  asked again).

`ray[data]` is an optional extra (`pip install "needlejudge[ray]"`);
without it the run stops at once with a message saying so.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import Sequence
from typing import Any

import msgspec

from engine.contracts import (
    AdapterConfigError,
    BatchEntry,
    BatchOutcome,
    BatchStatus,
    CallRequest,
    CallResult,
    Capabilities,
    JudgeSpec,
)

MAX_ENTRIES = 1_000_000_000  # one Ray job per wave
INSTALL_HINT = 'the Ray executor needs Ray Data: pip install "needlejudge[ray]" (or pip install "ray[data]")'
_ENCODE = msgspec.msgpack.Encoder().encode


def import_ray() -> Any:
    try:
        import ray
        import ray.data  # noqa: F401
    except ImportError as exc:
        raise AdapterConfigError(f"{INSTALL_HINT} ({exc})") from None
    return ray


def connect(address: str, cpus: int = 0) -> Any:
    """Join (`auto`, a `ray://` URL) or start (`local`) a Ray instance; a
    local one with at least `cpus` logical CPUs (vLLM engine replicas each
    hold a CPU bundle, beside the render and answer tasks, whatever the cores)."""
    ray = import_ray()
    if not ray.is_initialized():
        import os

        target = None if address == "local" else address
        num_cpus = max(os.cpu_count() or 1, cpus) if address == "local" and cpus else None
        ray.init(address=target, num_cpus=num_cpus, include_dashboard=False, log_to_driver=False, logging_level="WARNING")
    return ray


class _Gate:
    """The account's rate limits, held once for the cluster (a named actor)."""

    def __init__(self, rpm: float | None, tpm: float | None) -> None:
        from adapters.pacing import limiter

        # the windows of the judge's own limiter (adapters.pacing.Pacer): no minute-long burst
        self.requests = limiter(rpm, 1.0) if rpm else None
        self.tokens = limiter(tpm, 6.0) if tpm else None

    async def acquire(self, tokens: int) -> None:
        if self.requests is not None:
            await self.requests.acquire()
        if self.tokens is not None:
            await self.tokens.acquire(min(tokens, self.tokens.max_rate))


class HttpStage:
    """One actor of the stage: the judge's own adapter, without a limit of its own."""

    def __init__(self, spec: bytes, gate: str | None) -> None:
        from engine.registry import create_adapter

        judge = msgspec.msgpack.decode(spec, type=JudgeSpec)
        self.gate = gate
        self.adapter: Any = None
        self.broken = ""
        try:
            self.adapter = create_adapter(msgspec.structs.replace(judge, rpm=None, tpm=None))
        except AdapterConfigError as exc:
            # e.g. the key's variable is not set on this node: every call says so (a fatal
            # failure that stops the run), where a failing actor would be restarted forever
            import socket

            self.broken = f"on Ray node {socket.gethostname()}: {exc}"

    async def __call__(self, batch: dict[str, Any]) -> dict[str, Any]:
        requests = [msgspec.msgpack.decode(raw, type=CallRequest) for raw in batch["request"]]
        results = await asyncio.gather(*(self._one(request) for request in requests))
        return {"key": list(batch["key"]), "result": [_ENCODE(result) for result in results]}

    async def _one(self, request: CallRequest) -> CallResult:
        if self.broken:
            return CallResult(status="error", error_kind="auth", text=self.broken)
        if self.gate is not None:
            import ray

            from adapters.http import estimated_tokens

            await ray.get_actor(self.gate).acquire.remote(estimated_tokens(request))
        return await self.adapter.complete(request)


class _Wave:
    """One wave's job, driven by a thread that streams its answers in."""

    def __init__(self) -> None:
        self.outcomes: list[BatchOutcome] = []
        self.error = ""
        self.done = threading.Event()


class RayExecutor:
    """Each wave of a judge as one Ray Data job."""

    max_entries = MAX_ENTRIES

    def __init__(self, spec: JudgeSpec, *, address: str = "local", workers: int = 1) -> None:
        from engine.registry import capabilities

        cpus = 0  # logical CPUs a local instance needs (0: its cores)
        if spec.adapter == "vllm":
            from adapters.ray_vllm import local_cpus
            from adapters.vllm import check_model

            check_model(spec)
            cpus = local_cpus(spec, max(1, workers))  # validates the options
            try:
                import ray.data.llm  # noqa: F401
            except ImportError as exc:
                raise AdapterConfigError(f"judge {spec.name!r}: a vllm judge on Ray needs ray.data.llm ({exc}); {INSTALL_HINT}") from None
        self.spec = spec
        self.capabilities: Capabilities = msgspec.structs.replace(capabilities(spec), batch_api=True)
        self.address = address
        self.workers = max(1, workers)
        self.ray = connect(address, cpus)
        self.gate: str | None = None
        if spec.rpm or spec.tpm:
            self.gate = f"needlejudge-gate-{spec.name}-{uuid.uuid4().hex[:8]}"
            self._gate = self.ray.remote(_Gate).options(name=self.gate, num_cpus=0).remote(spec.rpm, spec.tpm)
        self._waves: dict[str, _Wave] = {}
        self._processor: Any = None  # a vllm judge's ray.data.llm processor (adapters/ray_vllm.py), built by the first wave

    async def submit(self, entries: Sequence[BatchEntry]) -> str:
        batch_id = f"ray-{uuid.uuid4().hex}"
        wave = self._waves[batch_id] = _Wave()
        rows = [{"key": e.custom_id, "request": _ENCODE(e.request)} for e in entries]
        threading.Thread(target=self._drive, args=(wave, rows), name=batch_id, daemon=True).start()
        return batch_id

    def _drive(self, wave: _Wave, rows: list[dict[str, Any]]) -> None:
        try:
            if self.spec.adapter == "vllm":
                from adapters import ray_vllm

                dataset = self._vllm_stage(self.ray.data.from_items(rows, override_num_blocks=ray_vllm.blocks(len(rows), self.spec)))
            else:
                dataset = self._http_stage(self.ray.data.from_items(rows, override_num_blocks=max(1, len(rows) // max(1, self.spec.concurrency))))
            for batch in dataset.iter_batches(batch_size=None, batch_format="numpy"):
                for key, raw in zip(batch["key"], batch["result"]):
                    wave.outcomes.append(BatchOutcome(custom_id=str(key), result=msgspec.msgpack.decode(bytes(raw), type=CallResult)))
        except Exception as exc:  # the job failed as a whole: the wave is asked again
            wave.error = f"{type(exc).__name__}: {str(exc)[:1500]}"
        finally:
            wave.done.set()

    def _http_stage(self, dataset: Any) -> Any:
        return dataset.map_batches(
            HttpStage, fn_constructor_args=(_ENCODE(self.spec), self.gate), batch_size=self.spec.concurrency,
            # one block (= the calls in flight) per actor: a lost actor pays at most those twice
            compute=self.ray.data.ActorPoolStrategy(size=self.workers, max_tasks_in_flight_per_actor=1), num_cpus=0.5,
        )

    def _vllm_stage(self, dataset: Any) -> Any:
        from adapters import ray_vllm

        if self._processor is None:
            gpus = self.ray.cluster_resources().get("GPU", 0) > 0
            self._processor = ray_vllm.build(self.spec, workers=self.workers, gpus=gpus)
        return ray_vllm.pipeline(self._processor, dataset)

    async def status(self, batch_id: str) -> BatchStatus:
        import anyio

        wave = self._waves.get(batch_id)
        if wave is None:  # a wave of an earlier driver: its answers went with it
            return BatchStatus(batch_id=batch_id, state="failed", detail="a Ray wave of an earlier run: asked again")
        while not wave.done.is_set():
            await anyio.sleep(0.1)
        state = "failed" if wave.error and not wave.outcomes else "ended"
        return BatchStatus(batch_id=batch_id, state=state, total=len(wave.outcomes), detail=wave.error)  # type: ignore[arg-type]

    async def results(self, batch_id: str) -> list[BatchOutcome]:
        wave = self._waves.pop(batch_id, None)
        return wave.outcomes if wave is not None else []

    async def cancel(self, batch_id: str) -> None:
        self._waves.pop(batch_id, None)

    async def aclose(self) -> None:
        if self.gate is not None:
            import contextlib

            with contextlib.suppress(Exception):
                self.ray.kill(self.ray.get_actor(self.gate))
