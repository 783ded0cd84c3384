"""What a failed call means for its item and for its judge.

Only an answer about the item itself may move a cell on to its next
document: a refusal, an unparseable answer (decided later by the prompt's
parser), or an error about the request's content (`ITEM_ERROR_KINDS`, e.g.
the input is longer than the model's context). A transient failure —
transport, timeout, rate limit, 5xx, malformed body, the adapter's circuit
breaker — says nothing about the item: the item stays pending (its cell
does not move past it), is asked again after a backoff, and, if the run has
to stop, on the next run. A failure about the judge's configuration
(`FATAL_ERROR_KINDS`: bad credentials, unknown model, a URL that is not
an API...), or a dead in-process engine (`JUDGE_GONE_KINDS`), stops the
run at once.

`JudgeHealth` is the one failure policy of a judge (the adapter's circuit
breaker only detects): after `consecutive_failures` transient failures in a
row, or as soon as the adapter answers `circuit_open`, the judge is down:
its workers stop dispatching, one of them probes the judge after a pause
(doubling up to `probe_cap_s`) and, if the judge is still failing after
`max_outage_s`, the run ends with a message that names the judge and says
the run can be resumed.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import anyio
import msgspec

from engine.config import FailuresSection
from engine.contracts import CallResult, ConfigError

# Provider answers that no retry will fix: stop the run with the message.
# `protocol`: the URL answered 101 Switching Protocols (an upgrade endpoint,
# not an API); it would answer every call the same way.
FATAL_ERROR_KINDS = frozenset({"auth", "forbidden", "not_found", "bad_request", "unsupported", "protocol"})
# An in-process judge that died or was shut down: it will not come back in
# this run (the items stay pending for the next one).
JUDGE_GONE_KINDS = frozenset({"engine_dead", "closed"})
# Errors about the request's own content: the item's outcome (recorded as a
# row; the cell moves on to its next document).
ITEM_ERROR_KINDS = frozenset({"context_length"})
CIRCUIT_OPEN = "circuit_open"


class RunAborted(ConfigError):
    """A judge cannot go on (bad credentials, unknown model, persistent failures)."""


class FailurePolicy(msgspec.Struct, frozen=True, kw_only=True):
    """How the scheduler treats transient failures (all times in seconds)."""

    consecutive_failures: int = 20  # in a row: the judge is down (the adapter's breaker default)
    retry_base_s: float = 1.0  # an item's first re-ask waits this long, doubling per failure
    retry_cap_s: float = 30.0
    probe_base_s: float = 1.0  # a down judge is probed after this long, doubling per failed probe
    probe_cap_s: float = 30.0
    max_outage_s: float = 300.0  # down this long: end the run (resumable)

    def retry_delay(self, failures: int) -> float:
        return min(self.retry_cap_s, self.retry_base_s * 2 ** max(0, failures - 1))

    @classmethod
    def from_config(cls, section: FailuresSection) -> FailurePolicy:
        """The policy a config's `[failures]` table sets (defaults for unset keys)."""
        given = {name: value for name, value in msgspec.structs.asdict(section).items() if value is not None}
        return cls(**given)


def is_transient(result: CallResult) -> bool:
    """A failure that says nothing about the item (fatal kinds are raised before)."""
    return result.status == "error" and result.error_kind not in ITEM_ERROR_KINDS


def fatal_message(judge: str, result: CallResult) -> str | None:
    """The message that stops the run, for a failure no retry in this run fixes."""
    if result.status != "error":
        return None
    if result.error_kind == "protocol":
        return (
            f"judge {judge!r}: its URL is not an API endpoint (protocol): {result.text[:300]}; "
            "fix the judge's base_url (results so far are kept)"
        )
    if result.error_kind in FATAL_ERROR_KINDS:
        return (
            f"judge {judge!r}: the provider rejected the call ({result.error_kind}): "
            f"{result.text[:300]}; fix the judge's config (results so far are kept)"
        )
    if result.error_kind in JUDGE_GONE_KINDS:
        return (
            f"judge {judge!r} cannot go on ({result.error_kind}): {result.text[:300]}; "
            "results so far are kept: run the same config again to resume"
        )
    return None


class JudgeHealth:
    """One judge's state under the failure policy (on the event loop)."""

    __slots__ = ("judge", "policy", "clock", "consecutive", "down", "down_since", "probing", "probes", "last", "_up")

    def __init__(self, judge: str, policy: FailurePolicy, clock: Callable[[], float] = time.monotonic) -> None:
        self.judge = judge
        self.policy = policy
        self.clock = clock
        self.consecutive = 0
        self.down = False  # a plain attribute: workers read it before every item
        self.down_since: float | None = None
        self.probing = False  # a worker holds the probe turn
        self.probes = 0  # failed probes in this outage
        self.last: CallResult | None = None
        self._up: anyio.Event | None = None

    def answered(self) -> None:
        """The judge answered (any answer about an item): it is up."""
        self.consecutive = 0
        if self.down:
            self.down, self.down_since = False, None
            self.probes = 0
            if self._up is not None:
                self._up.set()
                self._up = None

    def failed(self, result: CallResult) -> None:
        self.consecutive += 1
        self.last = result
        if self.down_since is None and (
            result.error_kind == CIRCUIT_OPEN or self.consecutive >= self.policy.consecutive_failures
        ):
            self.down, self.down_since = True, self.clock()

    async def wait_up(self) -> None:
        if self.down_since is None:
            return
        if self._up is None:
            self._up = anyio.Event()
        await self._up.wait()

    async def pause_before_probe(self, pending: int) -> None:
        """Sleep before the next probe; raise RunAborted once the outage is too long."""
        policy = self.policy
        assert self.down_since is not None
        delay = min(policy.probe_cap_s, policy.probe_base_s * 2**self.probes)
        remaining = policy.max_outage_s - (self.clock() - self.down_since)
        if remaining <= 0:
            raise RunAborted(self.abort_message(pending))
        await anyio.sleep(min(delay, remaining))
        self.probes += 1

    def abort_message(self, pending: int) -> str:
        last = self.last
        cause = f"{last.error_kind or 'error'}: {last.text[:300]}" if last is not None else "no answer"
        return (
            f"judge {self.judge!r} is failing: {self.consecutive} calls in a row failed and it did not "
            f"recover within {self.policy.max_outage_s:g} s of probing (last: {cause}). Stopping the run; "
            f"{pending} item(s) of this judge stay pending (nothing was recorded for them) and every "
            "result so far is kept: run the same config again to resume"
        )
