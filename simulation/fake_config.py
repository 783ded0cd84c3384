"""The fake provider server's configuration: latency, rate limit, injected
faults, simulated judges per model, keys and model patterns."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from engine.contracts import ConfigError
from simulation import judge as sim

FaultKind = Literal[
    "server_error",  # 500 (or `status`) with the provider's error body
    "overloaded",  # 503 / Anthropic 529
    "rate_limit",  # 429 with retry headers
    "rate_limit_bare",  # 429 without any header
    "hang",  # answer only after hang_s (a client timeout)
    "reset",  # drop the connection without an answer
    "truncated",  # send half the body, then drop the connection
    "malformed",  # 200 with a body that is not JSON
    "content_filter",  # the provider's content-filter / refusal answer
    "prompt_filter",  # Azure-style 400 code content_filter (OpenAI formats), else as content_filter
    "unparseable",  # 200 with prose instead of a score
    "bad_request",  # 400
    "http_error",  # any `status` with the provider's error body for it (e.g. 403; 401 with `after`: a key revoked mid-run)
    "html",  # 200 with an HTML page (a proxy's or captive portal's), not the API's JSON
    "empty",  # 200 with an empty body
]


class Latency(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    kind: Literal["zero", "fixed", "uniform", "lognormal"] = "zero"
    value_s: float = 0.0  # fixed
    low_s: float = 0.0  # uniform
    high_s: float = 0.0
    median_s: float = 0.0  # lognormal
    sigma: float = 0.5


class Fault(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    kind: FaultKind
    rate: float = 0.0  # probability per matching request
    # what the rate's seeded draw is keyed by: the request's place among the matching
    # requests, or its content (the same request is always hit or always spared, in any
    # arrival order: a terminal fault then hits the same items however many calls run at once)
    draw_by: Literal["arrival", "content"] = "arrival"
    schedule: tuple[int, ...] = ()  # 0-based indices among matching requests
    after: int | None = None  # every matching request from this 0-based index on (0: all of them)
    models: str = "*"  # fnmatch pattern over the model / deployment id
    providers: tuple[str, ...] = ()  # empty: all
    status: int | None = None  # server_error status override
    hang_s: float = 30.0
    retry_after_s: float = 1.0  # rate_limit: the advertised wait


class BatchFault(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """A fault of the batch APIs' own calls (upload, create, status, results, cancel)."""

    kind: Literal["server_error", "rate_limit", "http_error", "reset"]  # reset: drop the connection unanswered
    operation: str = "*"  # fnmatch pattern over "upload", "create", "status", "results", "cancel"
    rate: float = 0.0
    schedule: tuple[int, ...] = ()  # 0-based indices among matching batch calls
    status: int | None = None  # http_error / server_error status
    retry_after_s: float = 0.0


class BatchSim(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    """How the simulated batch APIs behave (simulation/batch_endpoints.py)."""

    delay_s: Annotated[float, msgspec.Meta(ge=0)] = 0.0  # a batch ends this long after its creation
    # the batch expires this long after creation, with the first expire_after_s/delay_s of its entries done
    expire_after_s: Annotated[float, msgspec.Meta(ge=0)] | None = None
    failure_rate: Annotated[float, msgspec.Meta(ge=0, le=1)] = 0.0  # entries failing, chosen by custom_id hash
    failure_status: int = 500  # their HTTP status, with the provider's error body
    fail_batches: tuple[int, ...] = ()  # 0-based creation indices of batches rejected whole
    faults: tuple[BatchFault, ...] = ()


class FakeConfig(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    seed: int = 0
    latency: Latency = Latency()
    rpm: float | None = None  # per model
    # A simulated GPU replica: at most `capacity` calls/s; a call waits for its
    # slot behind the calls already in the batch, so latency grows with load.
    capacity: Annotated[float, msgspec.Meta(gt=0)] | None = None
    rpm_burst: float | None = None  # bucket size; default one second's worth (at least 1)
    faults: tuple[Fault, ...] = ()
    judges: dict[str, sim.SimJudgeParams] = {}
    default_judge: sim.SimJudgeParams = sim.SimJudgeParams()
    valid_keys: tuple[str, ...] = ()  # empty: any non-empty key is accepted
    missing_models: tuple[str, ...] = ("missing-*",)
    keyless_models: tuple[str, ...] = ("local-*",)  # like a local vLLM server: no key needed
    batch: BatchSim = BatchSim()


def load_judges(path: str) -> dict[str, sim.SimJudgeParams]:
    """A judges file: JSON or TOML mapping model id → SimJudgeParams fields."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read()
    except OSError as exc:
        raise ConfigError(f"judges file {path}: cannot read: {exc}") from None
    try:
        if path.endswith(".toml"):
            return msgspec.toml.decode(raw, type=dict[str, sim.SimJudgeParams])
        return msgspec.json.decode(raw, type=dict[str, sim.SimJudgeParams])
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ConfigError(f"judges file {path}: expected a mapping of model id to simulated-judge parameters: {exc}") from None
