"""The prefix gate: an item waits while the call it shares most with is being prefilled.

A self-hosted engine (vLLM's automatic prefix caching; a server behind an
`openai-compatible` judge) serves a prompt's leading blocks from its cache
only once another request computed them. Siblings (the needles of one
document at one position; the positions of one document with the same i)
share a long prefix, but the policy issues them a few dozen items apart, so
with hundreds of calls in flight they reach the engine together and each
computes the shared prefix again.

The gate measures shared prefixes in chunks of text (engine/prompts/prefix.py,
`prefix_chunks`): each call in flight owns the chunks no earlier call had;
a call's chunks become warm when it ends (its prompt then is in the cache:
a judge call's answer is a few tokens, so the end of the call is the end of
its prefill within a few decode steps). An item whose longest prefix shared
with a call in flight is at least HOLD_CHUNKS longer than its longest warm
prefix is held until that call ends; then it goes before any new item.
Meanwhile the workers take other items, so the gate never leaves the engine
idle. A held item's cache lookup is stale by the time it is released (an
identical request of another item may have been answered and committed
meanwhile): the workers look it up again before admitting it again
(engine.run.workers).

Which documents a cell scores, and every row, stay as they were: the gate
only changes when an item's calls are sent, never which items are issued,
and the output stage consumes each cell's items in document order as ever.
Held items stay outstanding in their cells' windows, so their number is
bounded by the windows (no unbounded queue). Synchronous, on the event loop.
"""

from __future__ import annotations

from collections import deque

from engine.prompts.prefix import prefix_chunks
from engine.run.design import Item

# Hold an item only for a prefix this many chunks (of CHUNK_CHARS) longer
# than what is warm: ~60 tokens, a few KV blocks on a GPU (16 tokens each).
HOLD_CHUNKS = 2
# Warm chunks remembered, least recently matched forgotten first (the
# engine's cache evicts too; a forgotten chunk only costs one more owner).
WARM_CHUNKS = 262_144


class PrefixGate:
    """Per judge: who computes which prefix chunks, the items held for them, the items released."""

    __slots__ = ("_out", "_owned", "_waiting", "_warm", "_released", "held")

    def __init__(self) -> None:
        self._out: dict[int, Item] = {}  # chunk -> the item whose call in flight computes it
        self._owned: dict[int, list[int]] = {}  # id(item) -> the chunks it computes
        self._waiting: dict[int, list[Item]] = {}  # id(item in flight) -> the items held for it
        self._warm: dict[int, None] = {}  # chunks of ended calls, least recently matched first
        self._released: deque[Item] = deque()
        self.held = 0  # items waiting for a call in flight

    def admit(self, item: Item) -> bool:
        """True: send the item now (it computes the chunks nobody had).
        False: held until the call it shares most with ends."""
        if not item.missing:
            return True
        chunks = prefix_chunks(item.requests[item.missing[0]].messages)
        out, warm = self._out, self._warm
        depth_warm = depth_out = 0
        owner: Item | None = None
        new: list[int] = []
        for depth, chunk in enumerate(chunks, 1):
            if chunk in warm:
                depth_warm = depth
                del warm[chunk]  # matched: now the most recent
                warm[chunk] = None
            elif chunk in out:
                depth_out, owner = depth, out[chunk]
            else:
                new.append(chunk)
        # a prompt the call in flight holds whole is the same request (or one
        # that differs only in decoding): never held, so the dispatcher shares
        # the call in flight
        if owner is not None and depth_warm + HOLD_CHUNKS <= depth_out < len(chunks):
            self._waiting.setdefault(id(owner), []).append(item)
            self.held += 1
            return False
        if new:
            for chunk in new:
                out[chunk] = item
            self._owned[id(item)] = new
        return True

    def ended(self, item: Item) -> bool:
        """The item's dispatch ended. True when it released held items."""
        chunks = self._owned.pop(id(item), None)
        if chunks is None:
            return False
        out, warm = self._out, self._warm
        for chunk in chunks:
            if out.get(chunk) is item:
                del out[chunk]
            warm[chunk] = None
        while len(warm) > WARM_CHUNKS:
            del warm[next(iter(warm))]
        waiting = self._waiting.pop(id(item), None)
        if not waiting:
            return False
        self._released.extend(waiting)
        self.held -= len(waiting)
        return True

    def released(self) -> Item | None:
        """The next item whose call to wait for has ended, or None. The caller
        looks it up again (an identical call may have been answered while it
        waited) and admits it again (it may now wait for a call that shares
        more with it)."""
        return self._released.popleft() if self._released else None
