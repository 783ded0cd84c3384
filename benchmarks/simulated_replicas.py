"""Simulated GPU replicas for benchmarks/bench_replicas.py: each a fake
provider server in its own process in capacity mode (simulation/fake_server.py,
`capacity = C`: at most C calls/s, each call waiting behind the batch already
queued) that can be told to fail.

In the replica process, SIGUSR1 turns its fault on (every call), SIGUSR2
off, and SIGTERM writes its counters to --stats-out and exits at once,
dropping every connection (a process that dies). Run as a script, this
module is that process:

    python benchmarks/simulated_replicas.py --port P --capacity C --latency S --fault-kind K --stats-out FILE
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def serve_replica(args: argparse.Namespace) -> None:
    """The replica process (see the module docstring for its signals)."""
    import msgspec

    from simulation.fake_config import FakeConfig, Fault, Latency
    from simulation.fake_server import serve

    fault = Fault(kind=args.fault_kind, rate=0.0, hang_s=3600.0)  # rate 0: off; 1: every call
    config = FakeConfig(capacity=args.capacity, latency=Latency(kind="fixed", value_s=args.latency), faults=(fault,))

    async def run() -> None:
        loop = asyncio.get_running_loop()
        async with serve(config, port=args.port) as server:

            def set_fault(rate: float) -> None:  # the same one fault: its counter stays valid
                server.config = msgspec.structs.replace(server.config, faults=(msgspec.structs.replace(fault, rate=rate),))

            def die() -> None:
                Path(args.stats_out).write_text(json.dumps(server.stats()))
                os._exit(0)

            loop.add_signal_handler(signal.SIGUSR1, set_fault, 1.0)
            loop.add_signal_handler(signal.SIGUSR2, set_fault, 0.0)
            loop.add_signal_handler(signal.SIGTERM, die)
            await asyncio.Event().wait()

    try:
        import uvloop

        uvloop.run(run())
    except ImportError:
        asyncio.run(run())


class Replica:
    """One simulated GPU replica in its own process."""

    def __init__(self, capacity: float, latency_s: float, *, fault_kind: str = "overloaded", port: int | None = None) -> None:
        from bench_engine import free_port

        self.capacity, self.latency_s, self.fault_kind = capacity, latency_s, fault_kind
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.finished: list[dict] = []  # counters of its earlier incarnations
        self.start()

    def start(self) -> None:
        handle, self.stats_file = tempfile.mkstemp(prefix="bench-replica-", suffix=".json")
        os.close(handle)
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--port", str(self.port), "--capacity", str(self.capacity),
             "--latency", str(self.latency_s), "--fault-kind", self.fault_kind, "--stats-out", self.stats_file],
            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip

    def wait_ready(self) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                self.stats()
                return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"replica on port {self.port} did not start")

    def stats(self) -> dict:
        return json.loads(urllib.request.urlopen(f"{self.url}/_fake/stats", timeout=5).read())

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def die(self) -> None:
        """Kill it (it writes its counters first); `start()` brings up a new one on the same port."""
        self.proc.send_signal(signal.SIGTERM)
        self.proc.wait(10)
        self.finished.append(json.loads(Path(self.stats_file).read_text()))
        os.unlink(self.stats_file)

    def totals(self) -> dict:
        """Completed calls and repeats over all its incarnations (it must be stopped)."""
        return {"completed": sum(s["completed"] for s in self.finished),
                "repeated": sum(s["repeated_completions"] for s in self.finished),
                "requests": sum(s["requests"] for s in self.finished)}  # fmt: skip


def start_replicas(n: int, capacity: float, latency_s: float, fault_kind: str = "overloaded") -> list[Replica]:
    replicas = [Replica(capacity, latency_s, fault_kind=fault_kind) for _ in range(n)]
    for replica in replicas:
        replica.wait_ready()
    return replicas


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--capacity", type=float, required=True, help="calls/s the replica serves at most")
    parser.add_argument("--latency", type=float, required=True, help="a lone call's latency, seconds")
    parser.add_argument("--fault-kind", default="overloaded", help="the fault SIGUSR1 turns on (a fake-server fault kind)")
    parser.add_argument("--stats-out", required=True, help="where SIGTERM writes the counters")
    serve_replica(parser.parse_args())


if __name__ == "__main__":
    main()
