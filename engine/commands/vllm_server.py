"""`needlejudge vllm-server CONFIG [--judge NAME] [--port N]`: serve one of a
config's `vllm` judges as an OpenAI-compatible vLLM server on 127.0.0.1
(server mode), with the judge's model, revision and engine options, until
Ctrl-C or SIGTERM; then stop it with all its worker processes.

`--replicas N` starts N such servers, each pinned with CUDA_VISIBLE_DEVICES
to its own `tensor_parallel_size` GPUs (from `--gpus`, default 0..), each on
its own free port; `--data-parallel N` starts one server whose vLLM engine
runs N data-parallel replicas (`--data-parallel-size`).

It prints the `[[judges]]` table that points an experiment at the server(s)
(adapter `openai-compatible`, the same model id, so results read the same;
`base_urls` when there are several).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import sys
import threading
from typing import Any

import msgspec

from engine.contracts import ConfigError, JudgeSpec

HELP = "Serve a config's vllm judge as an OpenAI-compatible vLLM server on 127.0.0.1 until Ctrl-C."


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("config", help="experiment config (TOML) declaring the judge")
    parser.add_argument("--judge", default=None, help="name of the vllm judge (default: the config's only one)")
    parser.add_argument("--port", type=int, default=None, help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument("--name", default=None, help="judge name in the printed table (default: NAME-server)")
    parser.add_argument("--startup-timeout", type=float, default=600.0, help="seconds to wait for /health")
    fleet = parser.add_mutually_exclusive_group()
    fleet.add_argument("--replicas", type=int, default=1, help="servers to start, each on its own GPU(s) and port")
    fleet.add_argument("--data-parallel", type=int, default=None, metavar="N",
                       help="one server running N data-parallel engine replicas (vLLM --data-parallel-size)")  # fmt: skip
    parser.add_argument("--gpus", default=None, help="GPU ids to share out, e.g. 0,1,2,3 (default 0, 1, ...)")


def gpu_groups(gpus: str | None, groups: int, per_group: int) -> list[list[str]]:
    """`groups` disjoint lists of `per_group` GPU ids, in order, from `--gpus` (default 0..)."""
    if groups < 1:
        raise ConfigError(f"--replicas {groups}: expected a positive int")
    needed = groups * per_group
    ids = [part.strip() for part in gpus.split(",")] if gpus is not None else [str(i) for i in range(needed)]
    if any(not part.isdigit() for part in ids) or len(set(ids)) != len(ids):
        raise ConfigError(f"--gpus {gpus!r}: expected distinct GPU ids separated by commas, e.g. 0,1,2,3")
    if len(ids) < needed:
        raise ConfigError(
            f"--gpus {gpus!r}: {groups} replica(s) x tensor_parallel_size {per_group} need {needed} GPUs, got {len(ids)}"
        )
    return [ids[i * per_group : (i + 1) * per_group] for i in range(groups)]


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


def judge_table(spec: JudgeSpec, base_urls: list[str] | None = None) -> str:
    """A `[[judges]]` TOML table for an openai-compatible judge spec (JSON strings are TOML basic strings);
    with several `base_urls`, they replace `base_url`."""
    lines = ["[[judges]]"]
    for key in ("name", "adapter", "model", "revision", "base_url"):
        value = getattr(spec, key)
        if key == "base_url" and base_urls and len(base_urls) > 1:
            lines.append(f"base_urls = {json.dumps(base_urls)}")
        elif value:
            lines.append(f"{key} = {json.dumps(value)}")
    lines.append(f"concurrency = {spec.concurrency}")
    if spec.prefix_gate:  # the server caches prefixes as the in-process engine does
        lines.append("prefix_gate = true")
    if spec.options:
        pairs = ", ".join(f"{key} = {json.dumps(value)}" for key, value in spec.options.items())
        lines.append(f"options = {{ {pairs} }}")
    return "\n".join(lines)


def reserve_ports(count: int) -> list[int]:
    """`count` distinct free ports on 127.0.0.1 (all bound at once, so none repeats)."""
    import socket

    with contextlib.ExitStack() as stack:
        sockets = [stack.enter_context(socket.socket()) for _ in range(count)]
        for sock in sockets:
            sock.bind(("127.0.0.1", 0))
        return [int(sock.getsockname()[1]) for sock in sockets]


def plan_servers(spec: JudgeSpec, args: argparse.Namespace) -> list[Any]:
    """The VllmServer(s) to start: one per replica, or one data-parallel server, each pinned to its GPUs."""
    from adapters.vllm import validate_options
    from adapters.vllm_server import VllmServer

    options = validate_options(spec)
    tensor_parallel = int(options.get("tensor_parallel_size", 1))
    common = {"startup_timeout_s": args.startup_timeout}
    if args.data_parallel is not None:
        if args.data_parallel < 1:
            raise ConfigError(f"--data-parallel {args.data_parallel}: expected a positive int")
        (gpus,) = gpu_groups(args.gpus, 1, args.data_parallel * tensor_parallel)
        dp_spec = msgspec.structs.replace(spec, options={**spec.options, "data_parallel_size": args.data_parallel})
        return [VllmServer.for_spec(dp_spec, port=args.port, env={"CUDA_VISIBLE_DEVICES": ",".join(gpus)}, **common)]
    groups = gpu_groups(args.gpus, args.replicas, tensor_parallel)
    if args.replicas > 1 and args.port is not None:
        raise ConfigError(f"--port {args.port} with --replicas {args.replicas}: each replica takes its own free port; drop --port")
    ports = [args.port] if args.replicas == 1 else reserve_ports(args.replicas)
    pin = args.gpus is not None or args.replicas > 1
    return [
        VllmServer.for_spec(spec, port=port, env={"CUDA_VISIBLE_DEVICES": ",".join(gpus)} if pin else None, **common)
        for port, gpus in zip(ports, groups, strict=True)
    ]


def main(args: argparse.Namespace) -> int:
    from engine.config import load_config

    spec = pick_judge(load_config(args.config), args.config, args.judge)
    servers = plan_servers(spec, args)
    stop = threading.Event()

    def on_signal(*_: object) -> None:
        # SIGTERM would otherwise end this process and orphan the servers (each
        # its own process group). While they start, abort the start (which
        # stops them); once they serve, end the wait below and stop them cleanly.
        if not serving.is_set():
            raise KeyboardInterrupt
        stop.set()

    serving = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, on_signal)
    count = f"{len(servers)} servers" if len(servers) > 1 else "vLLM"
    print(f"starting {count} for {spec.model!r} (judge {spec.name!r}); this takes a while", flush=True)
    with contextlib.ExitStack() as running:
        for server in servers:
            running.callback(server.stop)
            server.launch()  # all load at once
        for server in servers:
            server.wait_healthy()
        serving.set()
        served = servers[0].compatible_spec(spec, name=args.name or f"{spec.name}-server")
        for server in servers:
            gpus = server.env.get("CUDA_VISIBLE_DEVICES")
            pinned = f" on GPU(s) {gpus}" if gpus else ""
            print(f"vLLM server for judge {spec.name!r} listening on {server.base_url}{pinned} (log: {server.log_path})")
        print("Point an experiment at it with:\n")
        print(judge_table(served, [server.base_url for server in servers]) + "\n", flush=True)
        while not stop.wait(0.5):
            for server in servers:
                process = server.process
                if process is not None and process.poll() is not None:
                    print(
                        f"needlejudge vllm-server: the server on {server.base_url} exited with code {process.returncode}:\n"
                        f"{server.log_tail()}",
                        file=sys.stderr,
                    )
                    return 1
    print("vLLM server stopped" if len(servers) == 1 else f"{len(servers)} vLLM servers stopped", flush=True)
    return 0
