"""`needlejudge run --executor ...` (engine/commands/run.py,
adapters/executors.py): which judges an executor takes, and the clear
errors of a bad choice; without Ray (blocked here even where it is
installed) a Ray run stops at once saying what to install."""

from __future__ import annotations

import sys

import pytest
from experiments import write_experiment

from adapters.executors import RayData, RunBatch
from engine.cli import main as cli
from engine.contracts import JudgeSpec

API_JUDGE = """
seed = 3
needles = ["none"]
hays = ["orig"]
positions = [[0, 0]]
prompts = ["bands"]
[stopping]
kind = "fixed"
n = 2
[[judges]]
name = "sim"
adapter = "openai-compatible"
model = "sim-judge"
base_url = "http://127.0.0.1:9/v1"
"""


def test_each_executor_takes_its_kind_of_judge() -> None:
    vllm, api = JudgeSpec(name="a", adapter="vllm", model="m"), JudgeSpec(name="b", adapter="openai", model="m")
    baseline = JudgeSpec(name="c", adapter="baseline", model="seqratio")
    assert RunBatch().takes(vllm) and not RunBatch().takes(api)
    assert RayData().takes(api) and RayData().takes(vllm) and not RayData().takes(baseline)  # vllm: ray.data.llm
    assert RunBatch(devices=["0", "1,2", "3"]).shards == 3  # one process per device group


def test_a_ray_run_without_ray_says_what_to_install(tmp_path, prepared_store, corpus_slice_path, corpus_settings, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, API_JUDGE)
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    assert cli(["run", str(tmp_path / "exp.toml"), "--executor", "ray", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("needlejudge run: error: ") and 'pip install "needlejudge[ray]"' in err
    assert "Traceback" not in err


@pytest.mark.parametrize(("flags", "message"), [
    (["--executor", "ray", "--address", "10.0.0.1:6379"], "--address '10.0.0.1:6379': expected auto, local or a ray://HOST:PORT URL"),
    (["--executor", "run-batch", "--shards", "0"], "--shards 0: expected a positive number of processes"),
    (["--executor", "run-batch", "--max-shard-errors", "1.5"], "--max-shard-errors 1.5: expected a share in [0, 1)"),
])
def test_bad_executor_flags_are_named(tmp_path, prepared_store, corpus_slice_path, corpus_settings, capsys, flags, message) -> None:  # type: ignore[no-untyped-def]
    write_experiment(tmp_path, prepared_store, corpus_slice_path, corpus_settings, API_JUDGE)
    assert cli(["run", str(tmp_path / "exp.toml"), "--quiet", *flags]) == 2
    assert message in capsys.readouterr().err
