"""`needlejudge vllm-server`: a config's vllm judge served by a real vLLM
server (the tiny Gemma-3 model on CPU) until SIGTERM, then stopped with
nothing left behind; a bad choice of judge fails before any process starts.
Two replicas (`--replicas 2`) start once for the module: an experiment's
calls spread over both behind one judge, with the rows of one server."""

from __future__ import annotations

import argparse
import json
import os
import re
import select
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path
from typing import NamedTuple

import msgspec
import psutil
import pytest
from experiments import write_experiment
from vllm_fixtures import ENGINE_ENV, ENGINE_OPTIONS, require_vllm

from simulation.tiny_gemma import build_tiny_gemma
from engine.cli import main as cli_main
from engine.commands.vllm_server import gpu_groups, plan_servers
from engine.contracts import ConfigError, JudgeSpec
from engine.run.runner import run_experiment


def write_config(tmp_path: Path, judges: list[dict]) -> Path:
    lines = [f'store = "{tmp_path / "store"}"', f'output = "{tmp_path / "out"}"']
    for judge in judges:
        lines.append("[[judges]]")
        for key, value in judge.items():
            if key == "options":
                lines.append("options = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in value.items()) + " }")
            else:
                lines.append(f"{key} = {json.dumps(value)}")
    path = tmp_path / "experiment.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


BASELINE = {"name": "jaccard", "adapter": "baseline", "model": "jaccard"}


@pytest.mark.parametrize(
    ("judges", "argv", "expected"),
    [
        ([BASELINE], [], 'expected exactly one judge with adapter "vllm" (found none)'),
        ([BASELINE], ["--judge", "jaccard"], "uses adapter 'baseline'; only a `vllm` judge can be served"),
        ([BASELINE], ["--judge", "gemma"], "--judge 'gemma': no such judge (the config has 'jaccard')"),
    ],
)
def test_a_judge_that_cannot_be_served_is_refused_before_any_process(tmp_path, capsys, judges, argv, expected):
    config = write_config(tmp_path, judges)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    assert cli_main(["vllm-server", str(config), *argv]) == 2
    err = capsys.readouterr().err
    assert expected in err and str(config) in err
    assert {p.pid for p in psutil.Process().children(recursive=True)} == before


def start_vllm_server_cli(config: Path, *argv: str) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "vllm-server", str(config), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env={**os.environ, **ENGINE_ENV},
    )


class Output:
    """The command's stdout and stderr, read straight from its pipe.

    Its end is the command's exit, not the pipe's EOF: a process forked
    elsewhere in this pytest worker while the pipe was being made can hold the
    pipe's write end open (CI once waited 180 s for an EOF after the command
    had printed "vLLM server stopped" and exited)."""

    def __init__(self, process: subprocess.Popen) -> None:
        self.fd = process.stdout.fileno()  # type: ignore[union-attr]
        self.pending = b""
        self.lines: list[str] = []

    def _read(self, timeout_s: float) -> bool:
        """Append what the pipe holds within `timeout_s`; False at EOF or when nothing came."""
        if not select.select([self.fd], [], [], max(timeout_s, 0))[0]:
            return False
        chunk = os.read(self.fd, 65536)
        self.pending += chunk
        return bool(chunk)

    def readline(self, deadline: float) -> str:
        """The next line ('' at EOF or once `deadline`, a time.monotonic(), has passed)."""
        while b"\n" not in self.pending and self._read(deadline - time.monotonic()):
            pass
        line, newline, self.pending = self.pending.partition(b"\n")
        if not newline:  # EOF or timed out: keep the partial line
            self.pending = line
            return ""
        self.lines.append((line + newline).decode())
        return self.lines[-1]

    def rest(self) -> str:
        """Once the command has exited, everything it wrote is in the pipe already."""
        while self._read(0):
            pass
        rest, self.pending = self.pending.decode(), b""
        return rest

    def text(self) -> str:
        return "".join(self.lines) + self.pending.decode(errors="replace")


def stop_like_a_user(process: subprocess.Popen) -> None:
    """After a failed assertion: SIGTERM (which stops the servers), then kill if it hangs."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=180)
        except subprocess.TimeoutExpired:
            process.kill()


def sigterm_and_read(process: subprocess.Popen, output: Output) -> str:
    """Stop the command as a user would; the rest of its output once it has exited."""
    process.send_signal(signal.SIGTERM)
    try:
        process.wait(timeout=180)
    except subprocess.TimeoutExpired:
        pytest.fail("the command did not exit within 180 s of SIGTERM:\n" + output.text() + output.rest())
    return output.rest()


def test_output_ends_at_the_commands_exit_even_while_another_process_holds_the_pipe():
    # the shell exits at once; the sleep it leaves behind (its pid printed) holds the pipe's write end
    process = subprocess.Popen(["sh", "-c", "sleep 60 & echo $!; echo stopped"], stdout=subprocess.PIPE)
    output = Output(process)
    holder = int(output.readline(time.monotonic() + 30))
    try:
        started = time.monotonic()
        process.wait(timeout=30)
        assert output.rest() == "stopped\n" and time.monotonic() - started < 10
    finally:
        os.kill(holder, signal.SIGKILL)


def survivors(pids: set[int]) -> list[int]:
    return [pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_serves_the_judge_until_sigterm_and_leaves_nothing_behind(tmp_path):
    require_vllm()
    model = build_tiny_gemma(tmp_path / "tiny_gemma")
    config = write_config(tmp_path, [BASELINE, {"name": "tiny", "adapter": "vllm", "model": str(model), "concurrency": 8,
                                                 "options": ENGINE_OPTIONS}])  # fmt: skip
    process = start_vllm_server_cli(config, "--judge", "tiny")
    output = Output(process)
    try:
        table = read_table(output, 600)
        (served,) = msgspec.convert(tomllib.loads(table)["judges"], list[JudgeSpec])
        assert (served.name, served.adapter, served.model) == ("tiny-server", "openai-compatible", str(model))
        assert served.options == {"structured_outputs": "structured_outputs"} and served.concurrency == 8
        with urllib.request.urlopen(f"{served.base_url}/models", timeout=10) as reply:
            assert [m["id"] for m in json.load(reply)["data"]] == [str(model)]
        port = int(served.base_url.rsplit(":", 1)[1].split("/")[0])
        server_pids = {p.pid for p in psutil.Process(process.pid).children(recursive=True)}
        assert server_pids and port_open(port)
        rest = sigterm_and_read(process, output)
    finally:
        stop_like_a_user(process)
    assert process.returncode == 0, output.text() + rest
    assert "vLLM server stopped" in rest
    assert not port_open(port)
    assert not survivors(server_pids)


@pytest.mark.parametrize(
    ("gpus", "groups", "per_group", "expected"),
    [
        (None, 4, 1, [["0"], ["1"], ["2"], ["3"]]),
        ("4,5,6,7", 2, 2, [["4", "5"], ["6", "7"]]),
        ("3, 1", 1, 2, [["3", "1"]]),
    ],
)
def test_gpu_groups_share_out_the_gpus_in_order(gpus, groups, per_group, expected):
    assert gpu_groups(gpus, groups, per_group) == expected


@pytest.mark.parametrize(
    ("gpus", "groups", "per_group", "expected"),
    [
        ("0,1,2", 2, 2, "2 replica(s) x tensor_parallel_size 2 need 4 GPUs, got 3"),
        ("0,0", 2, 1, "expected distinct GPU ids"),
        ("0,a", 2, 1, "expected distinct GPU ids"),
        (None, 0, 1, "--replicas 0: expected a positive int"),
    ],
)
def test_gpu_groups_refuse_too_few_or_bad_ids(gpus, groups, per_group, expected):
    with pytest.raises(ConfigError, match=re.escape(expected)):
        gpu_groups(gpus, groups, per_group)


@pytest.mark.parametrize("gate", [True, False])
def test_the_printed_table_keeps_the_judges_prefix_gate(gate):
    from engine.commands.vllm_server import judge_table
    from engine.config import parse_config

    spec = JudgeSpec(name="tiny-server", adapter="openai-compatible", model="m", base_url="http://127.0.0.1:8000/v1", prefix_gate=gate)
    config = parse_config('store = "s"\noutput = "o"\n' + judge_table(spec))
    assert config.judges[0].prefix_gate is gate and config.judges[0].spec() == spec


def fleet_args(**overrides) -> argparse.Namespace:
    fields = {"port": None, "startup_timeout": 600.0, "replicas": 1, "data_parallel": None, "gpus": None, **overrides}
    return argparse.Namespace(**fields)


def test_replicas_are_pinned_to_their_own_gpus_and_ports(tmp_path):
    model = build_tiny_gemma(tmp_path / "tiny_gemma")
    spec = JudgeSpec(name="tiny", adapter="vllm", model=str(model), options={"tensor_parallel_size": 2})
    servers = plan_servers(spec, fleet_args(replicas=2, gpus="2,3,4,5"))
    assert [s.env["CUDA_VISIBLE_DEVICES"] for s in servers] == ["2,3", "4,5"]
    assert len({s.port for s in servers}) == 2 and all(s.process is None for s in servers)
    (dp,) = plan_servers(spec, fleet_args(data_parallel=4))
    assert dp.env["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
    command = dp.command()
    assert command[command.index("--data-parallel-size") + 1] == "4"
    with pytest.raises(ConfigError, match="drop --port"):
        plan_servers(spec, fleet_args(replicas=2, port=8000))
    with pytest.raises(ConfigError, match=r"--data-parallel 0: expected a positive int"):
        plan_servers(spec, fleet_args(data_parallel=0))


def read_table(output: Output, deadline_s: float) -> str:
    """The printed [[judges]] table (it ends with a blank line)."""
    deadline = time.monotonic() + deadline_s
    out = output.lines
    while "[[judges]]\n" not in out or out[-1].strip():
        assert output.readline(deadline), "server(s) did not start:\n" + output.text()
    return "".join(out[out.index("[[judges]]\n") :])


class Fleet(NamedTuple):
    """`needlejudge vllm-server --replicas 2` running: its process, output so far, the judge it printed."""

    process: subprocess.Popen
    output: Output
    judge: dict
    model: Path


@pytest.fixture(scope="module")
def two_replicas(tmp_path_factory):
    """Two real vLLM servers on CPU started once by the CLI, shared by the
    tests below; the last of them stops the fleet (teardown makes sure)."""
    require_vllm()
    tmp_path = tmp_path_factory.mktemp("two_replicas")
    model = build_tiny_gemma(tmp_path / "tiny_gemma")
    config = write_config(tmp_path, [{"name": "tiny", "adapter": "vllm", "model": str(model), "concurrency": 8,
                                      "options": ENGINE_OPTIONS}])  # fmt: skip
    process = start_vllm_server_cli(config, "--replicas", "2", "--gpus", "0,1")
    output = Output(process)
    try:
        (served,) = tomllib.loads(read_table(output, 900))["judges"]
        yield Fleet(process, output, served, model)
    finally:
        stop_like_a_user(process)


def server_ports(judge: dict) -> list[int]:
    return [int(url.rsplit(":", 1)[1].split("/")[0]) for url in judge["base_urls"]]


@pytest.mark.vllm
def test_two_replicas_come_up_answer_and_are_listed(two_replicas):
    served, model, out = two_replicas.judge, two_replicas.model, two_replicas.output.text()
    assert (served["name"], served["adapter"], served["model"]) == ("tiny-server", "openai-compatible", str(model))
    assert "base_url" not in served and len(set(served["base_urls"])) == 2
    assert "on GPU(s) 0 " in out and "on GPU(s) 1 " in out
    for url in served["base_urls"]:
        body = json.dumps({"model": str(model), "prompt": "The treaty", "max_tokens": 3, "temperature": 0}).encode()
        request = urllib.request.Request(f"{url}/completions", body, {"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=120) as reply:
            answer = json.load(reply)
        assert answer["usage"]["completion_tokens"] == 3 and isinstance(answer["choices"][0]["text"], str)


def finished_requests(base_url: str) -> int:
    """Requests the vLLM server has finished, from its Prometheus /metrics."""
    root = base_url.rsplit("/v1", 1)[0]
    with urllib.request.urlopen(f"{root}/metrics", timeout=30) as reply:
        text = reply.read().decode()
    counts = re.findall(r"^vllm:request_success_total\{[^}]*\} ([0-9.e+]+)$", text, flags=re.M)
    assert counts, f"no vllm:request_success_total in {root}/metrics"
    return round(sum(float(c) for c in counts))


# 2 needles x 1 hay x 2 positions x 5 documents = 20 judge calls
SMALL_DESIGN = """seed = 3
needles = ["none", "neg"]
hays = ["orig"]
positions = [[1, 1], [2, 0]]
prompts = ["bands"]
stopping = { kind = "fixed", n = 5 }
"""
ROW_FIELDS = ("needle", "hay", "i", "j", "doc_id", "order", "status", "score", "raw_text", "prompt_tokens")


def run_against(folder: Path, urls: list[str], fleet: Fleet, stores) -> tuple[list[tuple], list[int]]:  # type: ignore[no-untyped-def]
    """The small design judged with a fresh store through `urls` (one server
    or both as replicas): its rows, and how many requests each of the fleet's
    servers finished meanwhile."""
    where = f"base_url = {json.dumps(urls[0])}" if len(urls) == 1 else f"base_urls = {json.dumps(urls)}"
    judge = ('[[judges]]\nname = "tiny-server"\nadapter = "openai-compatible"\n'
             f"model = {json.dumps(str(fleet.model))}\n{where}\nconcurrency = 8\n"
             'options = { structured_outputs = "structured_outputs" }\n')  # fmt: skip
    config = write_experiment(folder, *stores, SMALL_DESIGN + judge)
    before = [finished_requests(url) for url in fleet.judge["base_urls"]]
    summary = run_experiment(config)
    after = [finished_requests(url) for url in fleet.judge["base_urls"]]
    assert summary.calls_network == 20 and summary.status_counts == {"ok": 20}, summary
    rows = [json.loads(line) for line in Path(summary.results_jsonl).read_text().splitlines()]
    return sorted(tuple(row[f] for f in ROW_FIELDS) for row in rows), [a - b for a, b in zip(after, before)]


@pytest.mark.vllm
@pytest.mark.slow
def test_two_servers_behind_one_judge_share_the_calls_and_match_one_server(
    two_replicas, tmp_path, prepared_store, corpus_slice_path, corpus_settings
):  # type: ignore[no-untyped-def]
    stores = (prepared_store, corpus_slice_path, corpus_settings)
    urls = two_replicas.judge["base_urls"]
    both_rows, both_counts = run_against(tmp_path / "both", urls, two_replicas, stores)
    one_rows, one_counts = run_against(tmp_path / "one", urls[:1], two_replicas, stores)
    # every call finished on exactly one server, and both servers took a share
    assert sum(both_counts) == 20 and min(both_counts) >= 3, both_counts
    assert one_counts == [20, 0]
    # same seed, same rows: status, score, raw text and the server's token
    # count, whichever server answered (the dummy-weight model gives every
    # pair the same score; the prompt token counts differ from row to row)
    assert both_rows == one_rows
    assert {row[ROW_FIELDS.index("status")] for row in both_rows} == {"ok"}
    assert len({row[ROW_FIELDS.index("prompt_tokens")] for row in both_rows}) >= 5


@pytest.mark.vllm
def test_two_replicas_stop_on_sigterm_and_leave_nothing(two_replicas):
    process, output = two_replicas.process, two_replicas.output
    ports = server_ports(two_replicas.judge)
    server_pids = {p.pid for p in psutil.Process(process.pid).children(recursive=True)}
    assert len(server_pids) >= 2 and all(port_open(port) for port in ports)
    rest = sigterm_and_read(process, output)
    assert process.returncode == 0, output.text() + rest
    assert "2 vLLM servers stopped" in rest
    assert not any(port_open(port) for port in ports)
    assert not survivors(server_pids)
