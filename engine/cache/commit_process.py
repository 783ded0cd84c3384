"""The process that commits the group-commit writer's batches to LMDB.

Why a process: py-lmdb releases the GIL around every put. A writer *thread*
doing a few hundred puts per transaction therefore takes the GIL back a few
hundred times per commit, each time from the event loop, which is busy with
HTTP. Here the writer thread only ships each batch down a pipe and blocks on
the reply (GIL released), and this process does the puts and the commit
with a GIL of its own. LMDB is multi-process safe, so the parent's readers
see each batch as soon as its transaction commits; the reply is sent only
after that, which keeps "reported done = committed".

What it buys depends on the rate. The convoy only costs the loop time when
the loop is saturated: a judge served at a few hundred calls/s (a GPU
serving a 4B model, a commercial API) leaves the loop idle most of the time,
and the process then buys nothing measurable over a writer thread. The
speed-up matters only above ~1,500 calls/s per process (a fast local server,
the fake server at zero latency), where the loop is the bottleneck.
benchmarks/RESULTS.md ("The commit process at a judge's rate") holds the
figures; `benchmarks/bench_engine.py --only commit` measures them.

Wire format, both ways: an 8-byte little-endian length, then msgpack.
Request: a list of [database, key, value]. Reply: null when the batch
committed, else the error text (the batch was not committed).

The process runs in its own session, so a Ctrl-C or a SIGTERM sent to the
run's process group does not reach it: only its parent ends it, by closing
the pipe once its last commit is done (the process exits when its input
closes, also when the parent was SIGKILLed). It ignores SIGINT as well, for
a signal sent to it directly.
"""

from __future__ import annotations

import os
import signal
import struct
import subprocess
import sys
from pathlib import Path
from typing import BinaryIO

import msgspec

_LENGTH = struct.Struct("<Q")
_encode = msgspec.msgpack.Encoder().encode
_decode_batch = msgspec.msgpack.Decoder(list[tuple[str, bytes, bytes]]).decode
_decode_reply = msgspec.msgpack.Decoder(str | None).decode


class CommitProcessError(RuntimeError):
    """The commit process failed a batch or is gone."""


def _read_frame(stream: BinaryIO) -> bytes | None:
    header = stream.read(_LENGTH.size)
    if not header:
        return None
    if len(header) < _LENGTH.size:
        raise EOFError("truncated frame header")
    (size,) = _LENGTH.unpack(header)
    body = stream.read(size)
    if len(body) < size:
        raise EOFError(f"truncated frame: {len(body)} of {size} bytes")
    return body


def _write_frame(stream: BinaryIO, body: bytes) -> None:
    stream.write(_LENGTH.pack(len(body)))
    stream.write(body)
    stream.flush()


class CommitProcess:
    """The parent's handle: `commit(items)` blocks until the batch committed.

    Call `commit` from one thread at a time (the writer thread)."""

    def __init__(self, store_path: str | os.PathLike[str]) -> None:
        self.store_path = Path(store_path)
        env = dict(os.environ)
        # the child imports engine.cache.store from wherever this process found it;
        # -P: not from an `engine` folder that happens to be in the working directory
        root = str(Path(__file__).resolve().parents[2])
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self._proc = subprocess.Popen(
            [sys.executable, "-P", "-m", "engine.cache.commit_process", str(self.store_path)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            env=env,
            start_new_session=True,  # not stopped by a signal to the run's process group
        )

    @property
    def pid(self) -> int:
        return self._proc.pid

    def commit(self, items: list[tuple[str, bytes, bytes]]) -> None:
        """Commit `items` in one transaction; raise CommitProcessError if it did not."""
        proc = self._proc
        assert proc.stdin is not None and proc.stdout is not None
        try:
            _write_frame(proc.stdin, _encode(items))
            reply = _read_frame(proc.stdout)
        except (OSError, EOFError, ValueError) as exc:
            raise CommitProcessError(self._gone(f"{type(exc).__name__}: {exc}")) from None
        if reply is None:
            raise CommitProcessError(self._gone("no reply"))
        error = _decode_reply(reply)
        if error is not None:
            raise CommitProcessError(error)

    def _gone(self, what: str) -> str:
        code = self._proc.poll()
        if code is None:
            try:
                code = self._proc.wait(timeout=1)
            except subprocess.TimeoutExpired:
                return f"the commit process (pid {self._proc.pid}) stopped answering ({what})"
        return f"the commit process (pid {self._proc.pid}) exited with code {code} ({what})"

    def close(self, timeout: float = 60.0) -> int:
        """Close its input (it finishes and exits); return its exit code."""
        proc = self._proc
        if proc.stdin is not None and not proc.stdin.closed:
            try:
                proc.stdin.close()
            except OSError:
                pass
        try:
            code = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
        return code


def _database_and_key(item: tuple[str, bytes, bytes]) -> tuple[str, bytes]:
    return item[0], item[1]


def serve(store_path: str, requests: BinaryIO, replies: BinaryIO) -> int:
    from engine.cache.store import Store

    store = Store(store_path)
    try:
        while True:
            frame = _read_frame(requests)
            if frame is None:
                return 0
            try:
                # in key order: neighbouring puts share B-tree pages (the sort is
                # stable, so a key written twice keeps its last value)
                batch = sorted(_decode_batch(frame), key=_database_and_key)
                store.put_batch_raw(batch)  # grows the map when full
                error = None
            except Exception as exc:  # the batch is not committed; the parent reports it
                error = f"{type(exc).__name__}: {exc}"
            _write_frame(replies, _encode(error))
    finally:
        store.close()


def main() -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if len(sys.argv) != 2:
        print("usage: python -m engine.cache.commit_process STORE", file=sys.stderr)
        return 2
    try:
        return serve(sys.argv[1], sys.stdin.buffer, sys.stdout.buffer)
    except (BrokenPipeError, EOFError):  # the parent went away
        return 1


if __name__ == "__main__":
    sys.exit(main())
