"""benchmarks/prefix_share.py: the prefix-cache share attainable from the prompts, against hand-computed cases."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from prefix_share import attainable_hits, attainable_share  # noqa: E402


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
