"""Item errors recorded for a run: answers of an imported wave that are
errors about the item itself (`context_length`). They are not cached (only
answers are) but recorded under the run's key in the `runs` database, so
that any later run of it, in waves or by the plain workers, consumes them
as the items' outcomes instead of asking again (written by
engine.run.batch.imports; read by engine.run.dispatcher and
engine.run.batch.judge through `with_terminal`).
"""

from __future__ import annotations

from engine.cache.call_cache import decode_result, encode_result
from engine.cache.store import Store
from engine.contracts import CallResult
from engine.run.results import RUNS_DB

Write = tuple[str, bytes, bytes]

_TERMINAL = b"T"


def terminal_key(run_key: bytes, request_key: bytes) -> bytes:
    return run_key + _TERMINAL + request_key


def terminal_write(run_key: bytes, request_key: bytes, result: CallResult) -> Write:
    return (RUNS_DB, terminal_key(run_key, request_key), encode_result(result))


def terminal_answers(store: Store, run_key: bytes) -> dict[bytes, CallResult]:
    """The run's recorded item errors, by request key."""
    prefix = run_key + _TERMINAL
    return {key[len(prefix):]: decode_result(raw) for key, raw in store.items_raw(RUNS_DB, prefix)}


def with_terminal(hits: list[CallResult | None], keys: list[bytes], terminal: dict[bytes, CallResult]) -> list[CallResult | None]:
    """The cache's hits for `keys`, a recorded item error where the cache has none."""
    if not terminal:
        return hits
    return [terminal.get(key) if hit is None else hit for key, hit in zip(keys, hits)]
