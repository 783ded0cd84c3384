"""`needlejudge quickstart`: the main job on the bundled defaults.

Prepares the bundled Wikipedia sample, runs a small full design (all needles,
both hay types, the 10×10 position grid, instrument-check items) against
offline baseline judges and a simulated LLM judge served by a fake provider
server started here on 127.0.0.1, and writes the report. No key, no network.
Re-running it answers every call from the cache.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from importlib import resources
from pathlib import Path
from typing import Any

HELP = "Run the bundled demo experiment end to end (no API key, no network) and write its report."

TEMPLATE = "quickstart.toml"
SIMULATED_JUDGE = "simulated"


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--out", default="needlejudge-quickstart", help="output folder (config, store, results, report); default: %(default)s"
    )
    parser.add_argument("--quiet", action="store_true", help="no live progress display (CI)")
    parser.add_argument("--replace", action="store_true",
                        help="replace another run's results in the output folder (e.g. after running an edited quickstart.toml there)")


def template_text() -> str:
    return resources.files("engine").joinpath("data", TEMPLATE).read_text(encoding="utf-8")


SIMULATED_LABELS, SIMULATED_OVERLAP = 200, 40


def write_config(out: Path, base_url: str) -> Path:
    """The bundled template with the fake server's address filled in."""
    text, n = re.subn(r'(?m)^base_url = "[^"]*"', f'base_url = "{base_url}"', template_text(), count=1)
    if n != 1:
        raise RuntimeError(f"engine/data/{TEMPLATE}: no base_url line for the simulated judge")
    path = out / TEMPLATE
    path.write_text(text, encoding="utf-8")
    return path


async def _run_with_fake_server(out: Path, quiet: bool, replace: bool = False):
    from engine.config import load_config
    from engine.corpus.prepare import prepare_corpus
    from engine.run.runner import arun_experiment
    from engine.cache.store import Store
    from simulation.fake_config import FakeConfig
    from simulation.fake_server import serve
    from simulation.items import ItemIndex

    # the simulated judge reads each item back from the prepared corpus, so prepare first
    prepared = load_config(write_config(out, "http://127.0.0.1:0/v1"))
    with Store(prepared.store) as store:
        prepare_corpus([Path(p) for p in prepared.corpus.inputs], store, prepared.corpus.settings, progress=not quiet)
        items = ItemIndex.from_store(store)
    async with serve(FakeConfig(seed=1, keyless_models=("*",)), items=items) as server:
        config = load_config(write_config(out, f"{server.url}/v1"))
        summary = await arun_experiment(config, quiet=quiet, replace=replace)
    return config, summary


def write_simulated_labels(run_dir: Path) -> Path:
    """A label sample of the run rated by simulated people (marked simulated),
    so the report shows its People section; a real run is labelled by people
    with `needlejudge label`."""
    import json

    import msgspec

    from engine.labelling.from_run import load_or_draw_sample
    from simulation.people import simulated_labels

    folder = run_dir / "simulated-labels"
    with (run_dir / "results.jsonl").open(encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle if line.strip()]
    sample = load_or_draw_sample(folder, rows, size=SIMULATED_LABELS, overlap=SIMULATED_OVERLAP, seed=1)
    path = folder / "labels.jsonl"
    text = b"".join(msgspec.json.encode(r) + b"\n" for r in simulated_labels(sample))
    if not path.exists() or _without_times(path.read_bytes()) != _without_times(text):  # unchanged labels keep the report reusable
        path.write_bytes(text)
    return path


def _without_times(text: bytes) -> list[dict[str, Any]]:
    import json

    return [{k: v for k, v in json.loads(line).items() if k != "at"} for line in text.splitlines() if line.strip()]


def calls_sentence(summary: Any) -> str:
    """What the run did for its results, each count with what it counts."""
    if summary.cells_reused == summary.cells and summary.items_judged == 0:
        return (f"every cell had ended in an earlier run, so all {summary.rows:,} results were reused from the store: "
                "0 calls made, none needed")  # fmt: skip
    from engine.run.summary import rows_sentence

    return f"{rows_sentence(summary)}; {summary.calls_network:,} calls made"


def main(args: argparse.Namespace) -> int:
    import anyio

    from analysis.report import build_report

    out = Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    say = (lambda *_: None) if args.quiet else (lambda msg: print(msg, file=sys.stderr, flush=True))
    t0 = time.perf_counter()

    say(f"needlejudge quickstart → {out}")
    say("1/2 preparing the bundled corpus and running the design (baseline judges + a simulated judge on a local fake server)")
    config, summary = anyio.run(_run_with_fake_server, out, args.quiet, args.replace)
    t_run = time.perf_counter() - t0
    print(f"run {summary.run_id}: {summary.rows:,} results in {summary.cells:,} cells; {calls_sentence(summary)}; "
          f"statuses {summary.status_counts}; {t_run:.1f} s")  # fmt: skip

    say("2/2 analysing and writing the report (with SIMULATED human labels: a stand-in, see simulation/people.py)")
    labels = write_simulated_labels(Path(config.output))
    report = build_report(Path(config.output), Path(config.output) / "report", labels=labels, progress=lambda step: say(f"    {step}"))
    total = time.perf_counter() - t0
    if report.reused:
        print("report up to date, reused: its inputs (results, labels, options, report code) are unchanged")

    print(f"results:  {summary.results_jsonl}")
    print(f"report:   {report.html}")
    print(f"summary:  {report.markdown}")
    print(f"tables:   {report.tables_dir}  figures: {report.figures_dir}")
    print(f"done in {total:.1f} s")
    print()
    print(f"The config that ran is {out / TEMPLATE}. To judge with a real model, replace its")
    print(f'"{SIMULATED_JUDGE}" [[judges]] table (examples at the top of the file): an API judge')
    print("reads its key from an environment variable (e.g. OPENAI_API_KEY); a vLLM judge takes")
    print("a model id or folder. Then: needlejudge run --dry-run <config>; needlejudge run <config>;")
    print(f"needlejudge report {config.output}")
    return 0
