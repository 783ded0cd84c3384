"""Anthropic's Message Batches behind `BatchAdapter` (`mode = "batch"` judges of adapter "anthropic").

Submit: `POST /v1/messages/batches` with `{"requests": [{"custom_id",
"params"}]}`, each `params` exactly the body the synchronous adapter would
POST to /v1/messages (adapters/anthropic.py's MessagesDialect, prompt
caching included). Status: `GET /v1/messages/batches/{id}`
(`processing_status`, `request_counts`). Results: the JSONL at the batch's
`results_url`, one line per entry, `result.type` one of succeeded (its
`message` read as a synchronous answer), errored (its error body classified
as a synchronous error answer of the same type would be), canceled or
expired (left out: the engine asks them again).

Limits: 100,000 requests and 256 MB per batch; custom_id [A-Za-z0-9_-]{1,64}.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from urllib.parse import urlsplit

import msgspec

from adapters.batch_http import (
    BatchAdapterBase,
    BatchApiError,
    BatchControl,
    check_entries,
    decode,
    encode,
    entry_body,
    entry_result,
    jsonl_lines,
)
from adapters.anthropic import capabilities, connection
from engine.contracts import BatchEntry, BatchOutcome, BatchStatus, JudgeSpec

MAX_ENTRIES = 100_000
MAX_BYTES = 256 * 1024 * 1024
# The HTTP status each error type comes with on a synchronous call, so an errored
# entry is classified as that call's answer would be.
ERROR_STATUS = {
    "invalid_request_error": 400, "authentication_error": 401, "billing_error": 402, "permission_error": 403,
    "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429, "api_error": 500,
    "timeout_error": 504, "overloaded_error": 529,
}


class _RequestCounts(msgspec.Struct):
    processing: int = 0
    succeeded: int = 0
    errored: int = 0
    canceled: int = 0
    expired: int = 0


class _MessageBatch(msgspec.Struct):
    id: str
    processing_status: str
    request_counts: _RequestCounts = msgspec.field(default_factory=_RequestCounts)
    cancel_initiated_at: str | None = None
    results_url: str | None = None


class _ErrorDetail(msgspec.Struct):
    type: str = ""


class _ErrorBody(msgspec.Struct):
    error: _ErrorDetail = msgspec.field(default_factory=_ErrorDetail)


class _Result(msgspec.Struct):
    type: str
    message: msgspec.Raw = msgspec.Raw(b"null")
    error: msgspec.Raw = msgspec.Raw(b"null")


class _Line(msgspec.Struct):
    custom_id: str
    result: _Result


class AnthropicBatchAdapter(BatchAdapterBase):
    """Message Batches for one judge."""

    max_entries = MAX_ENTRIES
    provider = "anthropic"

    async def submit(self, entries: Sequence[BatchEntry]) -> str:
        check_entries(entries, provider="anthropic", max_entries=self.max_entries)
        requests = [{"custom_id": e.custom_id, "params": msgspec.Raw(entry_body(self.spec, self._dialect, e, guided=False))}
                    for e in entries]
        body = encode({"requests": requests})
        if len(body) > MAX_BYTES:
            raise BatchApiError("too_large", f"anthropic batch: {len(body):,} bytes, over the {MAX_BYTES:,}-byte limit; "
                                "submit fewer entries per batch")
        raw = await self._control.call("create", "POST", f"{self._base}/v1/messages/batches", body, creates=True)
        return decode(self.spec, "anthropic", "create", raw, _MessageBatch).id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._batch(batch_id)
        counts = batch.request_counts
        total = counts.processing + counts.succeeded + counts.errored + counts.canceled + counts.expired
        if batch.processing_status in ("in_progress", "canceling"):
            state = "in_progress"
        elif batch.processing_status != "ended":
            raise BatchApiError("malformed", f"judge {self.spec.name!r} (anthropic): batch {batch_id} has unknown "
                                f"processing_status {batch.processing_status!r}")
        elif batch.cancel_initiated_at and counts.canceled:
            state = "cancelled"
        elif counts.expired:
            state = "expired"
        else:
            state = "ended"
        return BatchStatus(batch_id=batch.id, state=state, total=total, succeeded=counts.succeeded, errored=counts.errored)

    async def results(self, batch_id: str) -> list[BatchOutcome]:
        batch = await self._batch(batch_id)
        if batch.processing_status != "ended" or not batch.results_url:
            return []
        raw = await self._control.call("results", "GET", self._same_origin(batch.results_url))
        now = time.time()
        outcomes = []
        for line in jsonl_lines(raw):
            parsed = decode(self.spec, "anthropic", "result line", line, _Line)
            result = parsed.result
            if result.type == "succeeded":
                answer = entry_result(self.spec, self._dialect, 200, bytes(result.message), finished_at=now)
            elif result.type == "errored":
                error = bytes(result.error)
                kind = decode(self.spec, "anthropic", "result error", error, _ErrorBody).error.type
                answer = entry_result(self.spec, self._dialect, ERROR_STATUS.get(kind, 400), error, finished_at=now)
            else:  # canceled, expired: never run
                continue
            outcomes.append(BatchOutcome(custom_id=parsed.custom_id, result=answer))
        return outcomes

    async def cancel(self, batch_id: str) -> None:
        await self._control.call("cancel", "POST", f"{self._base}/v1/messages/batches/{batch_id}/cancel")

    async def _batch(self, batch_id: str) -> _MessageBatch:
        raw = await self._control.call("status", "GET", f"{self._base}/v1/messages/batches/{batch_id}")
        return decode(self.spec, "anthropic", "status", raw, _MessageBatch)

    def _same_origin(self, url: str) -> str:
        """The results URL, only on the API's own host: the key is never sent elsewhere."""
        ours, theirs = urlsplit(self._base), urlsplit(url)
        if (theirs.scheme, theirs.netloc) != (ours.scheme, ours.netloc):
            raise BatchApiError("bad_request", f"judge {self.spec.name!r} (anthropic): results_url {url!r} is not on "
                                f"{ours.scheme}://{ours.netloc}; not sending the key there")
        return url


def create(spec: JudgeSpec) -> AnthropicBatchAdapter:
    """Message Batches for a judge of adapter "anthropic" (key: ANTHROPIC_API_KEY or `api_key_env`)."""
    settings, dialect, headers, base = connection(spec)
    return AnthropicBatchAdapter(spec, dialect, base, BatchControl(spec, "anthropic", headers, settings, error_kind=dialect.error_kind), capabilities(spec))
