"""benchmarks/prefix_share.py: the prefix-cache share attainable from the prompts, against hand-computed cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from prefix_share import attainable_hits, attainable_share, replay_order  # noqa: E402


def test_hits_are_leading_whole_blocks_chained_to_their_prefix():
    a = list(range(1, 11))  # 10 tokens: blocks [1-4] [5-8], tail 9 10
    prompts = [
        a,  # nothing before it: 0
        a[:8] + [99, 100],  # both blocks: 8
        a,  # both blocks again, the tail is never a block: 8
        a[:8],  # 8 tokens: its last token is computed, so one block: 4
        [0] + a[1:8],  # first block differs; the second's tokens match but not its prefix: 0
    ]
    assert attainable_hits(prompts, 4) == [0, 8, 8, 4, 0]
    result = attainable_share(prompts, 4)
    assert (result.hit_tokens, result.prompt_tokens, result.prompts) == (20, 46, 5)
    assert result.share == pytest.approx(20 / 46)


def test_smaller_blocks_serve_more_of_a_shared_prefix():
    shared = list(range(100))
    prompts = [shared + [1000 + k] * 30 for k in range(3)]  # 100 shared tokens, 130 each
    # block 16: six whole blocks (96 tokens) of the shared 100, for the 2nd and 3rd prompt
    assert attainable_share(prompts, 16).hit_tokens == 2 * 96
    # block 128: the shared part is less than one block
    assert attainable_share(prompts, 128).hit_tokens == 0
    with pytest.raises(ValueError, match="block_size"):
        attainable_share(prompts, 0)


def test_replay_orders_put_the_shortest_of_a_shared_prefix_first():
    a, b = [1, 2], [3, 4]  # two 2-token blocks
    prompts = [
        a + b + [5, 6, 7],  # 0: a b, then 3 tokens
        b + a,  # 1: starts with b: another branch at the root
        a + b + [5],  # 2: a b, then 1 token (ends inside its third block)
        a + [9, 9] + [8],  # 3: a, then a different second block
        a,  # 4: a alone (ends at the fork after a)
    ]
    assert replay_order(prompts, "issue", 2) == [0, 1, 2, 3, 4]
    assert replay_order(prompts, "length", 2) == [4, 1, 2, 3, 0]
    # the root's branch a (shortest: 4, 2 tokens) before branch b (1); under a, 4
    # ends there, then its branches b (shortest: 2, 5 tokens) and [9 9] (3, 5
    # tokens) tie on length and go by index; under a b, 2 (shorter) before 0
    assert replay_order(prompts, "siblings", 2) == [4, 2, 0, 3, 1]
    with pytest.raises(ValueError, match="order"):
        replay_order(prompts, "random", 2)
