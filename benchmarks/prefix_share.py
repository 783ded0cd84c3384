"""The share of prompt tokens a prefix cache can serve, from the prompts alone.

vLLM's automatic prefix caching hashes each full block of `block_size`
prompt tokens, chained to the blocks before it, and serves a new request the
longest run of leading blocks already computed; never the whole prompt (at
least its last token is computed, so at most (n - 1) // block_size blocks).
`attainable_share` replays that on token ids in arrival order with nothing
ever evicted: the ceiling the engine's counters (`num_cached_tokens`, the
server's vllm:prefix_cache_hits / vllm:prefix_cache_queries) can reach on
the same prompts. Pure: no vLLM import.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple


class PrefixShare(NamedTuple):
    share: float  # hit_tokens / prompt_tokens
    hit_tokens: int
    prompt_tokens: int
    block_size: int
    prompts: int


def attainable_hits(prompts: Iterable[Sequence[int]], block_size: int) -> list[int]:
    """Per prompt, the tokens a never-evicting cache of `block_size`-token
    blocks serves it, each prompt meeting those before it."""
    if block_size < 1:
        raise ValueError(f"block_size must be a positive number of tokens, got {block_size}")
    seen: set[int] = set()
    hits = []
    for tokens in prompts:
        n = len(tokens)
        parent = hit = 0
        hitting = True
        for k in range(n // block_size):
            parent = hash((parent, tuple(tokens[k * block_size : (k + 1) * block_size])))
            if hitting and parent in seen and (k + 1) * block_size <= n - 1:
                hit += block_size
            else:
                hitting = False
            seen.add(parent)
        hits.append(hit)
    return hits


def attainable_share(prompts: Sequence[Sequence[int]], block_size: int) -> PrefixShare:
    """The share of all prompt tokens `attainable_hits` serves."""
    hits = attainable_hits(prompts, block_size)
    total = sum(len(tokens) for tokens in prompts)
    return PrefixShare(sum(hits) / total if total else 0.0, sum(hits), total, block_size, len(hits))
