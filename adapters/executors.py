"""The executors a run can hand its calls to (engine/run/executor.py):

- `FileWaves` (`needlejudge calls export`): one judge's next wave written
  as OpenAI batch files, then the run stops;
- `RunBatch` (`needlejudge run --executor run-batch`): every `vllm` judge's
  waves through `vllm run-batch` processes, one per shard / GPU;
- `RayData` (`needlejudge run --executor ray --address ...`): every API
  judge's waves as Ray Data jobs.
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
    the i-th with CUDA_VISIBLE_DEVICES = devices[i] when devices are given."""

    judges = None

    def __init__(self, *, shards: int = 1, devices: Sequence[str] = (), work_dir: str | None = None) -> None:
        self.shards = max(1, shards, len(devices))
        self.devices = list(devices)
        self.work_dir = work_dir

    def takes(self, spec: JudgeSpec) -> bool:
        return spec.adapter == "vllm"

    def create(self, spec: JudgeSpec, run: RunContext) -> BatchAdapter:
        from adapters.vllm_run_batch import RunBatchExecutor, WaveContext

        root = self.work_dir or str(Path(run.store) / "waves")
        context = WaveContext(run_id=run.run_id, design=run.design, root=root)
        return RunBatchExecutor(spec, context, shards=self.shards, devices=self.devices)


class RayData:
    """Every API judge's waves as Ray Data jobs on the cluster at `address`."""

    judges = None

    def __init__(self, *, address: str = "local", workers: int = 1) -> None:
        self.address = address
        self.workers = workers

    def takes(self, spec: JudgeSpec) -> bool:
        return spec.adapter not in {"vllm", "baseline"}

    def create(self, spec: JudgeSpec, run: RunContext) -> BatchAdapter:
        from adapters.ray_executor import RayExecutor

        return RayExecutor(spec, address=self.address, workers=self.workers)
