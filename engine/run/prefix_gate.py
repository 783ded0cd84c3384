"""The prefix gate: an item waits while the sibling that owns its prefix is being prefilled.

A self-hosted engine (vLLM's automatic prefix caching; a server behind an
`openai-compatible` judge) serves a prompt's leading blocks from its cache
only once another request computed them. Siblings (the items of one
document at one position: engine/prompts/prefix.py) share a long prefix, but
the policy issues them a few dozen items apart, so with hundreds of calls in
flight they reach the engine together and each computes the shared prefix
again. The gate lets the first item of a prefix key (its owner) go at once
and holds the others until the owner's call has ended (its prompt then is
in the cache: a judge call's answer is a few tokens, so the end of the call
is the end of its prefill within a few decode steps); then they go before
any new item. Meanwhile the workers take other items, so the engine is never
left idle by the gate.

Which documents a cell scores, and every row, stay as they were: the gate
only changes when an item's calls are sent, never which items are issued,
and the output stage consumes each cell's items in document order as ever.
Held items stay outstanding in their cells' windows, so their number is
bounded by the windows (no unbounded queue). Synchronous, on the event loop.
"""

from __future__ import annotations

from collections import OrderedDict, deque

from engine.prompts.prefix import prefix_key
from engine.run.design import Item

# Keys whose owner has answered, remembered so later siblings go straight
# through; beyond this many the oldest are forgotten (the engine's cache
# evicts too, and a forgotten key only costs one more owner).
REMEMBERED_KEYS = 65_536


class PrefixGate:
    """Per judge: owners in flight with the items held for them, and the items released."""

    __slots__ = ("_owners", "_owned", "_warm", "_released", "held")

    def __init__(self) -> None:
        self._owners: dict[bytes, list[Item]] = {}  # key -> the items held for its owner
        self._owned: dict[int, bytes] = {}  # id(owner) -> its key, while its call is out
        self._warm: OrderedDict[bytes, None] = OrderedDict()
        self._released: deque[Item] = deque()
        self.held = 0  # items waiting for an owner

    def admit(self, item: Item) -> bool:
        """True: send the item now (no key, a warm key, or it becomes the
        key's owner). False: held until the owner's call ends."""
        key = prefix_key(item.requests[item.missing[0]].messages) if item.missing else None
        if key is None:
            return True
        if key in self._warm:
            self._warm.move_to_end(key)
            return True
        waiting = self._owners.get(key)
        if waiting is None:
            self._owners[key] = []
            self._owned[id(item)] = key
            return True
        waiting.append(item)
        self.held += 1
        return False

    def ended(self, item: Item) -> bool:
        """The item's dispatch ended. True when it owned a key and released held items."""
        key = self._owned.pop(id(item), None) if self._owned else None
        if key is None:
            return False
        waiting = self._owners.pop(key)
        self._warm[key] = None
        if len(self._warm) > REMEMBERED_KEYS:
            self._warm.popitem(last=False)
        self._released.extend(waiting)
        self.held -= len(waiting)
        return bool(waiting)

    def released(self) -> Item | None:
        """The next item whose owner has answered, or None."""
        return self._released.popleft() if self._released else None
