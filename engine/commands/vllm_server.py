"""`needlejudge vllm-server CONFIG [--judge NAME] [--port N]`: serve one of a
config's `vllm` judges as an OpenAI-compatible vLLM server on 127.0.0.1
(server mode), with the judge's model, revision and engine options, until
Ctrl-C or SIGTERM; then stop it with all its worker processes.

It prints the `[[judges]]` table that points an experiment at the server
(adapter `openai-compatible`, the same model id, so results read the same).
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from typing import Any

from engine.contracts import ConfigError, JudgeSpec

HELP = "Serve a config's vllm judge as an OpenAI-compatible vLLM server on 127.0.0.1 until Ctrl-C."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="experiment config (TOML) declaring the judge")
    parser.add_argument("--judge", default=None, help="name of the vllm judge (default: the config's only one)")
    parser.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--name", default=None, help="judge name in the printed table (default: NAME-server)")
    parser.add_argument("--startup-timeout", type=float, default=600.0, help="seconds to wait for /health")


def pick_judge(config: Any, source: str, name: str | None) -> JudgeSpec:
    """The config's vllm judge called `name` (or its only one), as a plain JudgeSpec."""
    vllm_judges = [judge for judge in config.judges if judge.adapter == "vllm"]
    if name is not None:
        match = [judge for judge in config.judges if judge.name == name]
        if not match:
            known = ", ".join(repr(judge.name) for judge in config.judges)
            raise ConfigError(f"{source}: --judge {name!r}: no such judge (the config has {known})")
        if match[0].adapter != "vllm":
            raise ConfigError(
                f"{source}: --judge {name!r} uses adapter {match[0].adapter!r}; only a `vllm` judge can be served"
            )
        return match[0].spec()
    if len(vllm_judges) != 1:
        found = ", ".join(repr(judge.name) for judge in vllm_judges) or "none"
        raise ConfigError(f"{source}: expected exactly one judge with adapter \"vllm\" (found {found}); name it with --judge")
    return vllm_judges[0].spec()


def judge_table(spec: JudgeSpec) -> str:
    """A `[[judges]]` TOML table for an openai-compatible judge spec (JSON strings are TOML basic strings)."""
    lines = ["[[judges]]"]
    for key in ("name", "adapter", "model", "revision", "base_url"):
        value = getattr(spec, key)
        if value:
            lines.append(f"{key} = {json.dumps(value)}")
    lines.append(f"concurrency = {spec.concurrency}")
    if spec.options:
        pairs = ", ".join(f"{key} = {json.dumps(value)}" for key, value in spec.options.items())
        lines.append(f"options = {{ {pairs} }}")
    return "\n".join(lines)


def main(args: argparse.Namespace) -> int:
    from adapters.vllm_server import VllmServer
    from engine.config import load_config

    spec = pick_judge(load_config(args.config), args.config, args.judge)
    server = VllmServer.for_spec(spec, port=args.port, startup_timeout_s=args.startup_timeout)
    stop = threading.Event()

    def on_signal(*_: object) -> None:
        # SIGTERM would otherwise end this process and orphan the server (its
        # own process group). While it starts, abort the start (which stops
        # it); once it serves, end the wait below and stop it cleanly.
        if not serving.is_set():
            raise KeyboardInterrupt
        stop.set()

    serving = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    print(f"starting vLLM for {spec.model!r} (judge {spec.name!r}); this takes a while", flush=True)
    with server:
        serving.set()
        served = server.compatible_spec(spec, name=args.name or f"{spec.name}-server")
        print(f"vLLM server for judge {spec.name!r} listening on {server.base_url} (log: {server.log_path})")
        print("Point an experiment at it with:\n")
        print(judge_table(served) + "\n", flush=True)
        while not stop.wait(0.5):
            process = server.process
            if process is not None and process.poll() is not None:
                print(
                    f"needlejudge vllm-server: the server exited with code {process.returncode}:\n{server.log_tail()}",
                    file=sys.stderr,
                )
                return 1
    print("vLLM server stopped", flush=True)
    return 0
