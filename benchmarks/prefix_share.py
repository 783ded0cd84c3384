"""The share of prompt tokens a prefix cache can serve, from the prompts alone.

vLLM's automatic prefix caching hashes each full block of `block_size`
prompt tokens, chained to the blocks before it, and serves a new request the
longest run of leading blocks already computed; never the whole prompt (at
least its last token is computed, so at most (n - 1) // block_size blocks).
`attainable_share` replays that on token ids in arrival order with nothing
ever evicted: the ceiling the engine's counters (`num_cached_tokens`, the
server's vllm:prefix_cache_hits / vllm:prefix_cache_queries) can reach on
the same prompts. `replay_order` gives orders in which to replay them
(benchmarks/prefix_ceiling.py). Pure: no vLLM import.
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


# `issue`: as given; `siblings`: the block trie depth first, at each fork the
# branch holding the shortest prompt first; `length`: shortest first.
ORDERS = ("issue", "siblings", "length")


def replay_order(prompts: Sequence[Sequence[int]], order: str, block_size: int) -> list[int]:
    """Indices of `prompts` in `order` (one of ORDERS). `siblings` walks the
    trie of their `block_size`-token blocks depth first: the prompts sharing
    a prefix are adjacent, a prompt ending at a fork goes before its
    branches, and at each fork the branch with the shortest prompt goes
    first (ties: the earlier given), so the shortest of the prompts sharing
    a prefix is sent before the others."""
    if order == "length":
        return sorted(range(len(prompts)), key=lambda i: (len(prompts[i]), i))
    if order == "issue":
        return list(range(len(prompts)))
    if order != "siblings":
        raise ValueError(f"order must be one of {', '.join(ORDERS)}, got {order!r}")

    def walk(indices: list[int], depth: int) -> list[int]:
        if len(indices) == 1:
            return indices
        branches: dict[tuple[int, ...], list[int]] = {}
        ended = []
        for i in indices:
            block = tuple(prompts[i][depth * block_size : (depth + 1) * block_size])
            (branches.setdefault(block, []) if len(block) == block_size else ended).append(i)
        ranked = sorted(branches.values(), key=lambda b: min((len(prompts[i]), i) for i in b))
        return sorted(ended, key=lambda i: (len(prompts[i]), i)) + [i for b in ranked for i in walk(b, depth + 1)]

    return walk(list(range(len(prompts))), 0)
