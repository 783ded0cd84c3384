"""Deterministic randomness keyed by identity, never by processing order.

Every random choice (needle entity, random-hay donor, document order per
cell, simulated judges) draws from `item_rng(seed, *identity)`: the same
experiment seed and the same item identity give the same generator on any
machine and in any generation order.
"""

from __future__ import annotations

import hashlib

import numpy as np


def item_seed(seed: int, *identity: object) -> int:
    """A 64-bit seed from the experiment seed and an item's identity."""
    text = "\x1f".join([str(int(seed)), *(str(part) for part in identity)])
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")


def item_rng(seed: int, *identity: object) -> np.random.Generator:
    return np.random.Generator(np.random.PCG64(item_seed(seed, *identity)))
