"""`needlejudge calls export|import CONFIG ...`: a run's calls out as OpenAI
batch files, one wave at a time, and their answers back into the cache.

    needlejudge calls export exp.toml --judge gemma --out waves/ --shards 8
    # run waves/gemma/wave-0001/calls-*.jsonl anywhere (vllm run-batch, the
    # OpenAI Batch API, a Ray job); put results-NNN.jsonl beside them
    needlejudge calls import exp.toml waves/gemma/wave-0001
    # ... export / import again until export says nothing is left; then
    needlejudge run exp.toml          # 0 calls: writes the results
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

HELP = (
    "Export the calls a run still needs (its next wave) as OpenAI batch JSONL keyed by cache key, "
    "or import a wave's results (OpenAI batch output lines) into the call cache, checked against the wave."
)


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=("export", "import"))
    parser.add_argument("config", help="experiment config (TOML)")
    parser.add_argument("wave", nargs="?", help="import: the wave folder (or its manifest.json) the export wrote")
    parser.add_argument("--judge", help="export: the judge whose calls to write (default: the config's only judge)")
    parser.add_argument("--out", default="waves", help="export: folder for the waves (default: waves); each goes to OUT/JUDGE/wave-NNNN")
    parser.add_argument("--shards", type=int, default=1, help="export: split the wave into this many files (one per engine)")
    parser.add_argument(
        "--results", action="append", default=[], metavar="FILE",
        help="import: a results file (repeatable; default: the results-NNN.jsonl the manifest names, beside it)",
    )


def main(args: argparse.Namespace) -> int:
    from engine.config import load_config
    from engine.contracts import ConfigError

    config = load_config(args.config)
    if args.action == "export":
        if args.wave:
            raise ConfigError(f"calls export takes no wave folder (got {args.wave!r}); it writes the next wave under --out")
        if args.shards < 1:
            raise ConfigError(f"--shards {args.shards}: expected a positive number of files")
        return _export(config, _judge(config, args.judge), Path(args.out), args.shards)
    if not args.wave:
        raise ConfigError("calls import needs the wave folder (or its manifest.json) that `calls export` wrote")
    return _import(config, Path(args.wave), [Path(p) for p in args.results])


def _judge(config: Any, name: str | None) -> str:
    from engine.contracts import ConfigError

    names = [judge.name for judge in config.judges]
    if name is None:
        if len(names) != 1:
            raise ConfigError(f"{config.source}: {len(names)} judges ({', '.join(names)}); name one with --judge")
        return names[0]
    if name not in names:
        raise ConfigError(f"--judge {name!r}: not a judge of {config.source}; expected one of {', '.join(names)}")
    return name


def _export(config: Any, judge: str, out: Path, shards: int) -> int:
    import anyio

    from adapters.executors import FileWaves
    from engine.run.runner import RunStopped, StopRequest, arun_experiment

    stop = StopRequest()
    waves = FileWaves(judge, out, shards, stop.set)
    try:
        anyio.run(lambda: arun_experiment(config, quiet=True, export=False, stop=stop, executor=waves))
    except RunStopped:
        pass
    if waves.pending:
        print(f"needlejudge calls export: judge {judge!r} has an exported wave not imported yet: {waves.pending[0]}; "
              f"import its results first: needlejudge calls import {config.source} {waves.pending[0]}", file=sys.stderr)
        return 1
    if not waves.written:
        print(f"judge {judge!r}: nothing left to ask; every cell has stopped. `needlejudge run {config.source}` writes the results")
        return 0
    manifest, folder = waves.written[0]
    calls = sum(shard.entries for shard in manifest.shards)
    print(f"wave {manifest.wave} of judge {judge!r} (run {manifest.run_id}): {calls:,} calls in {len(manifest.shards)} file(s) in {folder}")
    print(f"then: needlejudge calls import {config.source} {folder}")
    return 0


def _import(config: Any, wave: Path, results: list[Path]) -> int:
    from adapters.batch_files import asked_keys, read_manifest, read_results
    from engine.contracts import ConfigError
    from engine.run.batch.imports import ImportRefused, commit_wave
    from engine.run.experiment import Experiment
    from engine.cache.run_lock import hold_run

    try:
        manifest = read_manifest(wave)
    except ValueError as exc:
        raise ConfigError(str(exc)) from None
    folder = wave if wave.is_dir() else wave.parent
    experiment = Experiment(config)
    try:
        refused = _foreign(config, experiment, manifest)
        if refused:
            return _refuse(wave, refused)
        spec = next(judge for judge in config.judges if judge.name == manifest.judge).spec()
        paths = results or [folder / shard.output for shard in manifest.shards]
        reading = read_results(spec, manifest, asked_keys(folder, manifest), paths)
        if reading.missing_files or reading.refused:
            counts = (f"{reading.lines:,} line(s): {reading.malformed} malformed, {reading.unknown} with a key the wave did not ask, "
                      f"{reading.wrong_model} from another model, {reading.conflicting} answered twice differently"
                      + (f"; missing: {', '.join(reading.missing_files)}" if reading.missing_files else ""))
            return _refuse(wave, counts, reading.examples)
        outcomes = {bytes.fromhex(key): result for key, result in reading.outcomes.items()}
        with hold_run(config.store, None, experiment.run_id):
            try:
                counts = commit_wave(experiment.store, bytes.fromhex(experiment.run_id), manifest.batch_id, spec.name, spec.model, outcomes)
            except ImportRefused as exc:
                return _refuse(wave, str(exc))
    finally:
        experiment.close()
    if counts.already:
        print(f"wave {manifest.wave} of judge {manifest.judge!r}: already imported; nothing written")
        return 0
    print(f"wave {manifest.wave} of judge {manifest.judge!r}: {reading.lines:,} line(s); {counts.answers:,} answer(s) cached, "
          f"{counts.terminal:,} item error(s) recorded, {counts.pending + counts.fatal + reading.not_run:,} call(s) left to ask again; "
          f"{reading.duplicates:,} duplicate line(s) ignored")
    if counts.by_kind:
        print(f"errors by kind: {counts.by_kind}")
    if counts.fatal:
        print(f"needlejudge calls import: {counts.fatal} call(s) rejected: {counts.fatal_example}", file=sys.stderr)
        return 1
    print(f"next: needlejudge calls export {config.source} --judge {manifest.judge}")
    return 0


def _foreign(config: Any, experiment: Any, manifest: Any) -> str:
    """Why the wave is not this run's (empty when it is)."""
    if manifest.run_id != experiment.run_id:
        design = "the same design, other judges or settings" if manifest.design == experiment.design_fingerprint() else "another design"
        return f"the wave belongs to run {manifest.run_id} ({design}); {config.source} is run {experiment.run_id}"
    judge = next((judge for judge in config.judges if judge.name == manifest.judge), None)
    if judge is None:
        return f"the wave is judge {manifest.judge!r}'s, which {config.source} does not have"
    if (judge.adapter, judge.model) != (manifest.adapter, manifest.model):
        return f"the wave asked {manifest.adapter} model {manifest.model!r}; judge {judge.name!r} is {judge.adapter} model {judge.model!r}"
    return ""


def _refuse(wave: Path, why: str, examples: list[str] = ()) -> int:  # type: ignore[assignment]
    print(f"needlejudge calls import: refused {wave}: {why}; nothing written", file=sys.stderr)
    for example in examples:
        print(f"  {example}", file=sys.stderr)
    return 1
