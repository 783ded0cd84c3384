"""The executors a run can hand its calls to (engine/run/executor.py):

- `FileWaves` (`needlejudge calls export`): one judge's next wave written
  as OpenAI batch files, then the run stops;
- `RunBatch` (`needlejudge run --executor run-batch`): every `vllm` judge's
  waves through `vllm run-batch` processes, one per shard / GPU;
- `RayData` (`needlejudge run --executor ray --address ...`): every API
  and vllm judge's waves as Ray Data jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from adapters.batch_files import WaveManifest
from engine.contracts import BatchAdapter, JudgeSpec
from engine.run.executor import RunContext


class FileWaves:
    """Export: the named judge's next wave to files; `stop` once written (or
    when a wave exported earlier is still waiting for its import)."""

    def __init__(self, judge: str, root: Path, shards: int, stop: Callable[[], None]) -> None:
        self.judges = frozenset({judge})
        self.root = root
        self.shards = shards
        self.stop = stop
        self.written: list[tuple[WaveManifest, Path]] = []
        self.pending: list[str] = []

    def takes(self, spec: JudgeSpec) -> bool:
        return spec.name in self.judges

    def create(self, spec: JudgeSpec, run: RunContext) -> BatchAdapter:
        from adapters.vllm_run_batch import WaveContext, WaveExport

        def written(manifest: WaveManifest, folder: Path) -> None:
            self.written.append((manifest, folder))
            self.stop()

        def pending(batch_id: str) -> None:
            self.pending.append(batch_id)
            self.stop()

        context = WaveContext(run_id=run.run_id, design=run.design, root=str(self.root))
        return WaveExport(spec, context, shards=self.shards, on_written=written, on_pending=pending)


class RunBatch:
    """Every vllm judge through `vllm run-batch`: `shards` processes a wave,
    the i-th with CUDA_VISIBLE_DEVICES = devices[i] when devices are given; a
    shard with more than `max_shard_errors` of its calls failed stops the run."""

    judges = None

    def __init__(self, *, shards: int = 1, devices: Sequence[str] = (), work_dir: str | None = None,
                 max_shard_errors: float | None = None) -> None:
        from adapters.vllm_run_batch import MAX_SHARD_ERRORS

        self.shards = max(1, shards, len(devices))
        self.devices = list(devices)
        self.work_dir = work_dir
        self.max_shard_errors = MAX_SHARD_ERRORS if max_shard_errors is None else max_shard_errors

    def takes(self, spec: JudgeSpec) -> bool:
        return spec.adapter == "vllm"

    def create(self, spec: JudgeSpec, run: RunContext) -> BatchAdapter:
        from adapters.vllm_run_batch import RunBatchExecutor, WaveContext, check_max_tokens

        root = self.work_dir or str(Path(run.store) / "waves")
        context = WaveContext(run_id=run.run_id, design=run.design, root=root)
        check_max_tokens(spec, run.max_tokens)
        return RunBatchExecutor(spec, context, shards=self.shards, devices=self.devices, max_shard_errors=self.max_shard_errors)


class RayData:
    """Every judge's waves (but the baseline's) as Ray Data jobs on the cluster at
    `address`: an API judge's through its own adapter, a vllm judge's through
    ray.data.llm's vLLM processor (`workers` engine replicas)."""

    judges = None

    def __init__(self, *, address: str = "local", workers: int = 1) -> None:
        self.address = address
        self.workers = workers

    def takes(self, spec: JudgeSpec) -> bool:
        return spec.adapter != "baseline"

    def create(self, spec: JudgeSpec, run: RunContext) -> BatchAdapter:
        from adapters.ray_executor import RayExecutor

        return RayExecutor(spec, address=self.address, workers=self.workers)
