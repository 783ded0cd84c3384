"""The quickstart-shaped design on one vLLM judge, run by `needlejudge run`, and what it measured.

Shared by benchmarks/bench_prefix.py and benchmarks/gpu_check.py: the
experiment config (needles none/neg/con/ner x hays orig/rand x positions,
the `bands` prompt, a fixed number of documents per cell, no check cells),
a store prepared once and copied for every run, one whole CLI process per
run, and from its call cache: each call's start and end, tokens and
prefix-cache hits (vLLM's `num_cached_tokens`), in the order the calls
started; the prompts of those calls tokenized as the engine tokenizes them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
QUICKSTART_POSITIONS = [[i, j] for i in (0, 2, 5, 9) for j in (0, 2, 5, 9)]
TIMING_FIELDS = ("latency_s", "cached_tokens")  # the row fields that depend on timing


@dataclass
class Workload:
    model: str
    options: dict
    docs: int = 8
    concurrency: int = 256
    positions: list = field(default_factory=lambda: list(QUICKSTART_POSITIONS))
    corpus: dict = field(default_factory=lambda: {"inputs": [], "settings": {"min_chars_per_sentence": 100, "model": "en_core_web_sm"}})
    env: dict = field(default_factory=dict)  # for the engine's processes, e.g. VLLM_CPU_KVCACHE_SPACE
    base_urls: list = field(default_factory=list)  # vLLM servers: an openai-compatible judge over them
    judge_options: dict = field(default_factory=dict)  # extra options of that judge (e.g. replica_balance)
    prefix_gate: bool = False  # the judge's `prefix_gate` key (engine.run.prefix_gate)

    def judge(self) -> str:
        if not self.base_urls:
            options = ", ".join(f"{k} = {json.dumps(v)}" for k, v in self.options.items())
            return f'adapter = "vllm"\nmodel = {json.dumps(self.model)}\noptions = {{ {options} }}'
        options = ", ".join(f"{k} = {json.dumps(v)}" for k, v in {"structured_outputs": "structured_outputs", **self.judge_options}.items())
        return (
            f'adapter = "openai-compatible"\nmodel = {json.dumps(self.model)}\nbase_urls = {json.dumps(self.base_urls)}\n'
            f"timeout_s = 600.0\noptions = {{ {options} }}"
        )

    def config(self, store: Path, output: Path) -> str:
        settings = ", ".join(f"{k} = {json.dumps(v)}" for k, v in self.corpus["settings"].items())
        gate = "\nprefix_gate = true" if self.prefix_gate else ""  # only when on: a tree older than the key refuses it
        return f"""# the quickstart-shaped design on one in-process vLLM judge
store = {json.dumps(str(store))}
output = {json.dumps(str(output))}
seed = 1
needles = ["none", "neg", "con", "ner"]
hays = ["orig", "rand"]
positions = {json.dumps(self.positions)}
prompts = ["bands"]
corpus = {{ inputs = {json.dumps([str(p) for p in self.corpus["inputs"]])}, settings = {{ {settings} }} }}

[stopping]
kind = "fixed"
n = {self.docs}

[checks]
order_swap = 0
null_edit = 0
negative = 0

[[judges]]
name = "judge"
concurrency = {self.concurrency}
{self.judge()}{gate}
"""


def prepared_store(workload: Workload, folder: Path) -> Path:
    """A store with the design's corpus prepared (by a dry run), to copy for every run."""
    store = folder / "template-store"
    if not (store / "data.mdb").exists():
        config = folder / "prepare.toml"
        config.write_text(workload.config(store, folder / "unused"))
        subprocess.run([sys.executable, "-m", "engine.cli", "run", "--dry-run", "--json", str(config)], check=True,
                       cwd=ROOT, stdout=subprocess.DEVNULL)  # fmt: skip
    return store


def run_engine(workload: Workload, tree: Path, folder: Path, template: Path) -> dict:
    """One `needlejudge run` of the design (code of `tree`) on a fresh copy of `template`."""
    run_dir = Path(tempfile.mkdtemp(dir=folder, prefix="run-"))
    store, output = run_dir / "store", run_dir / "out"
    shutil.copytree(template, store)
    config = run_dir / "exp.toml"
    config.write_text(workload.config(store, output))
    env = {**os.environ, **workload.env, "PYTHONPATH": str(tree)}
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "engine.cli", "run", "--quiet", "--json", str(config)], cwd=tree, env=env,
                          capture_output=True, text=True)  # fmt: skip
    wall = time.perf_counter() - started
    try:
        if done.returncode:
            print(done.stderr[-4000:], file=sys.stderr)
            raise SystemExit(f"needlejudge run ({tree}) failed (exit {done.returncode})")
        if "Traceback (most recent call last)" in done.stderr:  # what the user would have seen under a finished run
            print(done.stderr[-4000:], file=sys.stderr)
            raise SystemExit(f"needlejudge run ({tree}) printed a traceback")
        rows = [json.loads(line) for line in (output / "results.jsonl").read_text().splitlines()]
        summary = printed_summary(done.stdout)
        fresh, calls = call_results(store, rows)
    finally:
        shutil.rmtree(run_dir)
    span = max(c.finished_at for c in calls) - min(c.started_at for c in calls)
    prompt = sum(c.usage.prompt_tokens for c in calls)
    started_order = sorted(range(len(calls)), key=lambda n: calls[n].started_at)
    return {
        "calls": len(calls), "ok": sum(c.status == "ok" for c in calls), "span_s": span, "wall_s": wall,
        "calls_per_s": len(calls) / span, "calls_per_s_process": len(calls) / wall,
        "prompt_tokens": prompt, "output_tokens": sum(c.usage.completion_tokens for c in calls),
        "cached_tokens": sum(c.usage.cached_tokens for c in calls),
        "achieved": sum(c.usage.cached_tokens for c in calls) / prompt,
        "load": [load_before, os.getloadavg()[0]],
        "gate_holds": summary.get("gate_holds", 0),  # absent in trees older than the prefix_gate key
        "rows": [{k: v for k, v in row.items() if k not in TIMING_FIELDS} for row in rows],
        "order": [[fresh[n][k] for k in ("needle", "hay", "i", "j", "doc_index")] for n in started_order],
    }  # fmt: skip


def printed_summary(stdout: str) -> dict:
    """The run's --json summary: the last object printed from a line "{" on (vLLM logs to stdout too)."""
    text = "\n" + stdout
    return json.JSONDecoder().raw_decode(text, text.rindex("\n{\n") + 1)[0]


def call_results(store_path: Path, rows: list[dict]) -> tuple[list[dict], list]:
    """The rows answered by a call in this run, and their calls' results (one call per row: `bands`)."""
    from engine.cache.call_cache import CallCache
    from engine.cache.store import Store

    fresh = [row for row in rows if not row.get("cached")]
    with Store(store_path, readonly=True) as store:
        calls = CallCache(store).get_many([bytes.fromhex(row["cache_keys"][0]) for row in fresh])
    missing = sum(c is None for c in calls)
    if missing:
        raise SystemExit(f"{missing} of {len(calls)} calls are not in the call cache")
    return fresh, calls


def prompts_in_order(workload: Workload, template: Path, order: list) -> tuple[list[list[int]], list]:
    """The prompts of the calls in `order` (needle, hay, i, j, doc_index), tokenized
    with the model's chat template as adapters.vllm does, and their decodings."""
    from transformers import AutoTokenizer

    from adapters.vllm import chat_token_ids, template_takes_system
    from engine.config import load_config
    from engine.run.experiment import Experiment

    with tempfile.TemporaryDirectory() as tmp:
        store = Path(tmp) / "store"
        shutil.copytree(template, store)
        config_path = Path(tmp) / "exp.toml"
        config_path.write_text(workload.config(store, Path(tmp) / "out"))
        experiment = Experiment(load_config(config_path))
        try:
            design = experiment.design
            cells = {(c.needle, c.hay, c.i, c.j): c for c in design.cells}
            tokenizer = AutoTokenizer.from_pretrained(workload.model)
            fold = not template_takes_system(tokenizer)
            prompts, decodings = [], []
            for needle, hay, i, j, doc_index in order:
                request = design.item(cells[(needle, hay, i, j)], doc_index).requests[0]
                prompts.append(chat_token_ids(tokenizer, request.messages, fold=fold))
                decodings.append(request.decoding)
            return prompts, decodings
        finally:
            experiment.close()


class Servers:
    """`n` fresh vLLM servers of the workload's model (a fresh prefix cache each), and their counters."""

    def __init__(self, workload: Workload, n: int, folder: Path) -> None:
        from adapters.vllm_server import VllmServer, server_flags

        args = server_flags({"enable_prefix_caching": True, **workload.options})
        self.servers = [VllmServer(workload.model, args=args, env=workload.env, log_path=folder / f"server-{k}.log") for k in range(n)]

    def __enter__(self) -> list[str]:
        try:
            for server in self.servers:
                server.start()
        except BaseException:
            self.__exit__()
            raise
        return [server.base_url for server in self.servers]

    def __exit__(self, *exc: object) -> None:
        for server in self.servers:
            server.stop()

    def counters(self) -> list[dict[str, float]]:
        """Per server: requests answered, prefix-cache queries and hits (tokens), from /metrics."""
        import urllib.request

        wanted = {"vllm:request_success_total": "requests", "vllm:prefix_cache_queries_total": "queries",
                  "vllm:prefix_cache_hits_total": "hits"}  # fmt: skip
        out = []
        for server in self.servers:
            text = urllib.request.urlopen(server.base_url.removesuffix("/v1") + "/metrics", timeout=30).read().decode()
            counts = dict.fromkeys(wanted.values(), 0.0)
            for line in text.splitlines():
                name = line.split("{", 1)[0].split(" ", 1)[0]
                if name in wanted:
                    counts[wanted[name]] += float(line.rsplit(" ", 1)[1])
            out.append(counts)
        return out
