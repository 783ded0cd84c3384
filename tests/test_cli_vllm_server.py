"""`needlejudge vllm-server`: a config's vllm judge served by a real vLLM
server (the tiny Gemma-3 model on CPU) until SIGTERM, then stopped with
nothing left behind; a bad choice of judge fails before any process starts."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from pathlib import Path

import msgspec
import psutil
import pytest
from vllm_fixtures import ENGINE_ENV, ENGINE_OPTIONS, require_vllm

from simulation.tiny_gemma import build_tiny_gemma
from engine.cli import main as cli_main
from engine.contracts import JudgeSpec


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


def port_open(port: int) -> bool:
    with socket.socket() as sock:
        sock.settimeout(1)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def test_serves_the_judge_until_sigterm_and_leaves_nothing_behind(tmp_path):
    require_vllm()
    model = build_tiny_gemma(tmp_path / "tiny_gemma")
    config = write_config(tmp_path, [BASELINE, {"name": "tiny", "adapter": "vllm", "model": str(model), "concurrency": 8,
                                                 "options": ENGINE_OPTIONS}])  # fmt: skip
    process = subprocess.Popen(
        [sys.executable, "-m", "engine.cli", "vllm-server", str(config), "--judge", "tiny"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **ENGINE_ENV},
    )
    out: list[str] = []
    try:
        deadline = time.monotonic() + 600
        while "[[judges]]\n" not in out or out[-1].strip():  # the printed table ends with a blank line
            line = process.stdout.readline()  # type: ignore[union-attr]
            assert line and time.monotonic() < deadline, "server did not start:\n" + "".join(out)
            out.append(line)
        table = "".join(out[out.index("[[judges]]\n") :])
        (served,) = msgspec.convert(tomllib.loads(table)["judges"], list[JudgeSpec])
        assert (served.name, served.adapter, served.model) == ("tiny-server", "openai-compatible", str(model))
        assert served.options == {"structured_outputs": "structured_outputs"} and served.concurrency == 8
        with urllib.request.urlopen(f"{served.base_url}/models", timeout=10) as reply:
            assert [m["id"] for m in json.load(reply)["data"]] == [str(model)]
        port = int(served.base_url.rsplit(":", 1)[1].split("/")[0])
        server_pids = {p.pid for p in psutil.Process(process.pid).children(recursive=True)}
        assert server_pids and port_open(port)
        process.send_signal(signal.SIGTERM)
        rest, _ = process.communicate(timeout=120)
    finally:
        if process.poll() is None:  # a failed assertion: stop the server the way a user would
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=120)
            except subprocess.TimeoutExpired:
                process.kill()
    assert process.returncode == 0, "".join(out) + rest
    assert "vLLM server stopped" in rest
    assert not port_open(port)
    assert not [pid for pid in server_pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE]
