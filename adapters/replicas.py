"""Several servers behind one judge: pick a replica, take a failing one out,
probe it back in.

An `openai-compatible` judge with `base_urls = [...]` spreads its calls over
the healthy replicas, never more than `per_replica` at once on any one (a
GPU's batch; by default (1 + balance) x the even split, so that the load
bounds below, not a full replica, decide where a sibling goes):

- Prefix affinity: a call with a prefix key (engine/prompts/prefix.py: the
  prompt up to its last document, which sibling items share) goes where
  its key's first call went, so siblings meet the prefix their owner left
  in that server's cache. A new key goes to the replica it ranks first by
  rendezvous (highest-random-weight) hashing, the consistent hashing of
  few nodes: any client ranks a key's replicas alike, and adding or losing
  a replica moves only the keys it ranked first.
- Bounded loads: a replica takes a new key only while it stays within
  (1 + `balance`) x its fair share of the calls sent so far, and any keyed
  call only while within that share of the calls in flight (consistent
  hashing with bounded loads, Mirrokni, Thorup and Zadimoghaddam 2018);
  else the key's next replica in rank order, and when none is within
  bounds the least-loaded.
- Fair ties: the least-loaded is the one with the fewest calls in flight,
  then the fewest sent, so a paced judge whose calls never overlap still
  alternates (a strict `<` on calls in flight alone sent nearly all of them
  to the first replica).

A replica whose calls fail `eject_after` times in a row (connection refused
or reset, timeouts, 5xx) is taken out for `pause_s`; after the pause it gets
one probe call, and goes back in when that call succeeds (else out again,
for twice the pause, up to `max_pause_s`). The adapter (adapters/http.py)
retries a call whose replica failed on another replica at once (up to one
such move per replica, then with backoff, as any retry); only when every
replica is out does the call fail, as a transient `replicas_down` error the
scheduler leaves pending.

Which replica answered never enters the call's cache key: the request
carries no URL (engine/contracts.py), so answers from any replica are
interchangeable.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import OrderedDict
from typing import Any

import anyio
import anyio.lowlevel

from engine.contracts import AdapterConfigError, JudgeSpec

log = logging.getLogger("needlejudge.adapters")


# Prefix keys whose replica is remembered (a key's siblings follow its first
# call); beyond this many the oldest are forgotten.
REMEMBERED_KEYS = 65_536


class ReplicasDown(Exception):
    """Every replica is out; the message says why each one is."""


class Replica:
    """One server: its endpoint URL, load and health."""

    __slots__ = ("url", "seed", "in_flight", "sent", "failures", "out_until", "pause_s", "probing", "last_error", "answered")

    def __init__(self, url: str) -> None:
        self.url = url
        self.seed = hashlib.blake2b(url.encode(), digest_size=16).digest()  # its rendezvous-hash salt
        self.in_flight = 0
        self.sent = 0  # calls given to it
        self.failures = 0  # consecutive failed calls
        self.out_until = 0.0  # monotonic time it may be probed again; 0 when in
        self.pause_s = 0.0
        self.probing = False  # out, with its one probe call in flight
        self.last_error = ""
        self.answered = 0  # calls it answered (any HTTP answer that is not a replica failure)

    @property
    def is_out(self) -> bool:
        return self.out_until > 0.0


class ReplicaPool:
    """Prefix-affine, load-bounded choice among healthy replicas, with ejection and probes."""

    def __init__(
        self,
        urls: list[str],
        *,
        per_replica: int,
        eject_after: int = 3,
        pause_s: float = 5.0,
        max_pause_s: float = 60.0,
        balance: float = 0.1,
    ) -> None:
        if not urls:
            raise ValueError("a replica pool needs at least one URL")
        self.replicas = [Replica(url) for url in urls]
        self.per_replica = per_replica
        self.balance = balance
        self._placed: OrderedDict[bytes, Replica] = OrderedDict()  # recent prefix keys -> their replica
        self.eject_after = eject_after
        self.base_pause_s = pause_s
        self.max_pause_s = max_pause_s
        self._changed: anyio.Event | None = None  # set when a call ends; made in the running event loop
        self._token: object = None

    async def acquire(self, key: bytes | None = None) -> Replica:
        """A replica with room, counted as in flight: the one `key` (a prefix
        key, or None) prefers within the load bounds, else the least loaded;
        waits while all usable ones are full; raises ReplicasDown when every
        replica is out and none is due for a probe."""
        while True:
            now = time.monotonic()
            replica = self._pick(now)
            if replica is not None and key is not None and not replica.probing:
                replica = self._preferred(key) or replica
            if replica is not None:
                replica.in_flight += 1
                replica.sent += 1
                return replica
            waits = [r.out_until - now for r in self.replicas if r.is_out and not r.probing]
            if all(r.is_out for r in self.replicas) and not any(r.probing for r in self.replicas):
                raise ReplicasDown(self.describe_down())
            changed = self._event()
            with anyio.move_on_after(max(min(waits), 0.001) if waits else None):
                await changed.wait()

    def _pick(self, now: float) -> Replica | None:
        best: Replica | None = None
        for replica in self.replicas:
            if replica.is_out:
                if not replica.probing and now >= replica.out_until and replica.in_flight == 0:
                    replica.probing = True  # its one probe call
                    log.info("replica %s: probing after %.1fs out", replica.url, replica.pause_s)
                    return replica
                continue
            if replica.in_flight < self.per_replica and (
                best is None or (replica.in_flight, replica.sent) < (best.in_flight, best.sent)
            ):
                best = replica
        return best

    def _preferred(self, key: bytes) -> Replica | None:
        """The replica for `key`: where its first call went, while that one
        stays within the bound on calls in flight; for a new key, the first
        usable replica in its rendezvous order within both bounds. After
        taking the call a replica holds at most (1 + balance) x its fair
        share of the calls sent (exactly, for a new key; a key's later calls
        follow it, so whole sibling groups move, never half of one) and of
        the calls in flight (rounded up, so that one call may always go)."""
        usable = [r for r in self.replicas if not r.is_out and r.in_flight < self.per_replica]
        if len(usable) < 2:
            return None
        share = (1.0 + self.balance) / len(usable)
        flight_cap = math.ceil(share * (1 + sum(r.in_flight for r in usable)))
        placed = self._placed.get(key)
        if placed is not None:
            self._placed.move_to_end(key)
            return placed if placed in usable and placed.in_flight + 1 <= flight_cap else None
        sent_cap = share * (1 + sum(r.sent for r in usable))
        for replica in sorted(usable, key=lambda r: _rank(key, r.seed), reverse=True):
            if replica.in_flight + 1 <= flight_cap and replica.sent + 1 <= sent_cap:
                self._placed[key] = replica
                if len(self._placed) > REMEMBERED_KEYS:
                    self._placed.popitem(last=False)
                return replica
        return None

    def release(self, replica: Replica, *, failed: bool, error: str = "") -> None:
        """The call on `replica` ended; `failed`: the replica failed it (not the request)."""
        replica.in_flight -= 1
        if failed:
            replica.failures += 1
            replica.last_error = error
            if replica.probing:
                replica.probing = False
                self._eject(replica, min(self.max_pause_s, 2 * replica.pause_s))
            elif not replica.is_out and replica.failures >= self.eject_after:
                self._eject(replica, self.base_pause_s)
        else:
            replica.answered += 1
            replica.failures = 0
            if replica.is_out:
                log.warning("replica %s: back in (probe answered)", replica.url)
            replica.out_until = 0.0
            replica.probing = False
            replica.pause_s = 0.0
        if self._changed is not None:
            self._changed.set()
            self._changed = None

    def _event(self) -> anyio.Event:
        token = anyio.lowlevel.current_token()
        if self._changed is None or self._token != token:  # a new run may bring a new event loop
            self._changed, self._token = anyio.Event(), token
        return self._changed

    def _eject(self, replica: Replica, pause_s: float) -> None:
        replica.pause_s = pause_s
        replica.out_until = time.monotonic() + pause_s
        log.warning("replica %s: out for %.1fs after %d failed call(s); last: %s",
                    replica.url, pause_s, replica.failures, replica.last_error[:300])

    def describe_down(self) -> str:
        parts = [f"{r.url} ({r.last_error[:200] or 'no error recorded'})" for r in self.replicas]
        return f"all {len(self.replicas)} replicas are out: " + "; ".join(parts)

    def snapshot(self) -> list[dict[str, object]]:
        """Each replica's URL, load and health (for logs and tests)."""
        return [
            {"url": r.url, "in_flight": r.in_flight, "out": r.is_out, "failures": r.failures, "answered": r.answered,
             "sent": r.sent}
            for r in self.replicas
        ]


def _rank(key: bytes, seed: bytes) -> bytes:
    """The replica's rendezvous weight for `key`."""
    return hashlib.blake2b(key, digest_size=8, salt=seed).digest()


# ---------------------------------------------------------------------------
# From the judge's config

# Options of an openai-compatible judge with base_urls
REPLICA_OPTIONS = ("replica_concurrency", "replica_eject_after", "replica_pause_s", "replica_balance")
_FRACTIONAL = ("replica_pause_s", "replica_balance")


def compatible_base_urls(spec: JudgeSpec) -> list[str]:
    """The judge's server URLs (`base_url`, or `base_urls` for replicas), without trailing slashes."""
    if spec.base_url and spec.base_urls:
        raise AdapterConfigError(
            f"judge {spec.name!r}: set base_url (one server) or base_urls (several replicas), not both"
        )
    urls = list(spec.base_urls) if spec.base_urls else ([spec.base_url] if spec.base_url else [])
    if not urls:
        raise AdapterConfigError(
            f"judge {spec.name!r}: adapter 'openai-compatible' needs base_url (e.g. http://127.0.0.1:8000/v1) "
            "or base_urls (a list, one URL per replica)"
        )
    bases = [url.rstrip("/") for url in urls]
    for url in bases:
        if not url.startswith(("http://", "https://")):
            raise AdapterConfigError(f"judge {spec.name!r}: base_urls entry {url!r} is not an http:// or https:// URL")
    seen = [url for i, url in enumerate(bases) if url in bases[:i]]
    if seen:
        raise AdapterConfigError(f"judge {spec.name!r}: base_urls lists {seen[0]!r} twice")
    return bases


def replica_pool(spec: JudgeSpec, bases: list[str], opts: dict[str, Any]) -> ReplicaPool:
    """The pool of `bases`: each replica takes at most (1 + `replica_balance`)
    x its fair share of the calls (default 0.1) and `replica_concurrency`
    calls at once (default: (1 + `replica_balance`) x the judge's
    `concurrency` split evenly, rounded up). A cap at the even split would
    leave a judge at full concurrency no choice: each call would go where
    the last one ended, and siblings would scatter (benchmarks/RESULTS.md,
    "Prefix caching through the engine")."""
    values: dict[str, Any] = {"replica_eject_after": 3, "replica_pause_s": 5.0, "replica_balance": 0.1}
    for name in REPLICA_OPTIONS:
        value = opts.get(name, values.get(name))
        if value is None:  # replica_concurrency: from the balance, below
            continue
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0 or (
            name not in _FRACTIONAL and int(value) != value
        ):
            kind = {"replica_pause_s": "a positive number of seconds", "replica_balance": "a positive number"}.get(
                name, "a positive integer"
            )
            raise AdapterConfigError(f"judge {spec.name!r}: options.{name} must be {kind}, got {value!r}")
        values[name] = value
    if "replica_concurrency" not in values:
        values["replica_concurrency"] = math.ceil((1.0 + values["replica_balance"]) * spec.concurrency / len(bases))
    return ReplicaPool(
        bases, per_replica=int(values["replica_concurrency"]), eject_after=int(values["replica_eject_after"]),
        pause_s=float(values["replica_pause_s"]), balance=float(values["replica_balance"]),
    )
