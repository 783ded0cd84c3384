"""Each call's usage counted once in the exported rows.

Two rows can rest on one call: identical pairs of different cells (at
position (0, 0) the orig and rand hays leave the same needle sentence alone)
render identical requests, and the dispatcher sends one call for both. A row
carries the usage (tokens, cost) of its calls, so summing `results.jsonl`
would count that call twice. The rule: in export order (cell, then
document), the first row that rests on a call carries its usage; a later
row resting on the same cached answer carries none of it (its tokens and
cost lose that call's share; its text, score and latency stay). Summing the
rows' usage then gives each distinct call behind the results once. A call
whose answer is not cached (a terminal error) was made again for each row
that needed it, so each of those rows keeps its own.
"""

from __future__ import annotations

from engine.cache.call_cache import CallCache
from engine.cache.store import Store
from engine.contracts import ResultRow


class ChargeOnce:
    """Strips from each row the usage of calls an earlier row already carries."""

    def __init__(self, store: Store) -> None:
        self._cache = CallCache(store)
        self._seen: set[str] = set()  # hex keys of the calls carried so far

    def __call__(self, row: ResultRow) -> ResultRow:
        keys = row.cache_keys
        repeated = [key for key in keys if key in self._seen]
        self._seen.update(keys)
        for key in repeated:
            result = self._cache.get(bytes.fromhex(key))
            if result is None:  # not cached: the call was made again for this row
                continue
            usage, cost = result.usage, result.cost_usd
            row.prompt_tokens = max(0, row.prompt_tokens - usage.prompt_tokens)
            row.completion_tokens = max(0, row.completion_tokens - usage.completion_tokens)
            row.cached_tokens = max(0, row.cached_tokens - usage.cached_tokens)
            row.cost_usd = max(0.0, row.cost_usd - cost)
        return row
