"""Gemini batch mode behind `BatchAdapter` (`mode = "batch"` judges of adapter "gemini").

Submit: `POST /v1beta/models/{model}:batchGenerateContent` with inline
requests, `{"batch": {"displayName", "inputConfig": {"requests":
{"requests": [{"request", "metadata": {"key": custom_id}}]}}}}`, each
`request` exactly the body the synchronous adapter would POST to
`:generateContent` (adapters/gemini.py's GenerateContentDialect). The answer
is a long-running operation named `batches/{id}`: that name is the batch id.
Status: `GET /v1beta/batches/{id}` (`metadata.state` BATCH_STATE_*,
`metadata.batchStats`). Results: the operation's
`response.inlinedResponses.inlinedResponses[]`, matched by `metadata.key`;
a `response` is read as a synchronous answer, an `error` (google.rpc.Status)
classified as the HTTP status its code maps to would be. Entries without an
answer (an expired or cancelled batch) are left out.

Limits: inline requests keep the whole create request under 20 MB, so at
most `MAX_ENTRIES` entries go in one batch (larger batches would need the
File API input, not implemented).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

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
)
from adapters.gemini import CAPABILITIES, connection, model_name, retry_delay_from_body
from engine.contracts import BatchEntry, BatchOutcome, BatchStatus, JudgeSpec

MAX_ENTRIES = 1_000  # about 20 KB a judge call: well inside the 20 MB of one inline request
MAX_BYTES = 20 * 1024 * 1024
_STATES = {
    "BATCH_STATE_PENDING": "in_progress", "BATCH_STATE_RUNNING": "in_progress", "BATCH_STATE_SUCCEEDED": "ended",
    "BATCH_STATE_FAILED": "failed", "BATCH_STATE_CANCELLED": "cancelled", "BATCH_STATE_EXPIRED": "expired",
}
# google.rpc.Code -> the HTTP status a synchronous call gets with it (google/rpc/code.proto)
GRPC_HTTP = {1: 499, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400, 10: 409, 11: 400, 12: 501,
             13: 500, 14: 503, 15: 500, 16: 401}


class _Stats(msgspec.Struct):
    requestCount: int | str = 0  # int64 fields come as JSON strings
    successfulRequestCount: int | str = 0
    failedRequestCount: int | str = 0


class _Inlined(msgspec.Struct):
    metadata: dict[str, Any] = {}
    response: msgspec.Raw = msgspec.Raw(b"null")
    error: msgspec.Raw = msgspec.Raw(b"null")


class _InlinedList(msgspec.Struct):
    inlinedResponses: list[_Inlined] = []


class _Output(msgspec.Struct):
    inlinedResponses: _InlinedList | None = None


class _Metadata(msgspec.Struct):
    state: str = "BATCH_STATE_UNSPECIFIED"
    batchStats: _Stats | None = None
    output: _Output | None = None


class _Operation(msgspec.Struct):
    name: str
    metadata: _Metadata = msgspec.field(default_factory=_Metadata)
    done: bool = False
    response: _Output | None = None
    error: msgspec.Raw = msgspec.Raw(b"null")


class _Status(msgspec.Struct):
    code: int = 2


class GeminiBatchAdapter(BatchAdapterBase):
    """Gemini batch mode (inline requests) for one judge."""

    max_entries = MAX_ENTRIES
    provider = "gemini"

    def __init__(self, *args: Any, model: str) -> None:
        super().__init__(*args)
        self._model = model

    async def submit(self, entries: Sequence[BatchEntry]) -> str:
        check_entries(entries, provider="gemini", max_entries=self.max_entries)
        requests = [{"request": msgspec.Raw(entry_body(self.spec, self._dialect, e, guided=False)), "metadata": {"key": e.custom_id}}
                    for e in entries]
        body = encode({"batch": {"displayName": f"needlejudge-{self.spec.name}"[:128],
                                 "inputConfig": {"requests": {"requests": requests}}}})
        if len(body) > MAX_BYTES:
            raise BatchApiError("too_large", f"gemini batch: {len(body):,} bytes of inline requests, over the {MAX_BYTES:,}-byte "
                                "limit; submit fewer entries per batch")
        raw = await self._control.call("create", "POST", f"{self._base}/{self._model}:batchGenerateContent", body, creates=True)
        return decode(self.spec, "gemini", "create", raw, _Operation).name

    async def status(self, batch_id: str) -> BatchStatus:
        operation = await self._operation(batch_id)
        state = _STATES.get(operation.metadata.state)
        if state is None:
            if not (operation.done and bytes(operation.error) != b"null"):
                raise BatchApiError("malformed", f"judge {self.spec.name!r} (gemini): batch {batch_id} has unknown state "
                                    f"{operation.metadata.state!r}")
            state = "failed"
        stats = operation.metadata.batchStats or _Stats()
        detail = "" if bytes(operation.error) == b"null" else bytes(operation.error).decode("utf-8", errors="replace")
        return BatchStatus(batch_id=operation.name, state=state, total=int(stats.requestCount),  # type: ignore[arg-type]
                           succeeded=int(stats.successfulRequestCount), errored=int(stats.failedRequestCount),
                           detail=detail if state == "failed" else "")

    async def results(self, batch_id: str) -> list[BatchOutcome]:
        operation = await self._operation(batch_id)
        output = operation.response or operation.metadata.output
        if output is None or output.inlinedResponses is None:
            return []
        now = time.time()
        outcomes = []
        for inlined in output.inlinedResponses.inlinedResponses:
            key = inlined.metadata.get("key")
            if not isinstance(key, str):
                raise BatchApiError("malformed", f"judge {self.spec.name!r} (gemini): batch {batch_id}: an inlined response "
                                    f"without its metadata.key: {inlined.metadata!r}")
            if bytes(inlined.response) != b"null":
                result = entry_result(self.spec, self._dialect, 200, bytes(inlined.response), finished_at=now)
            elif bytes(inlined.error) != b"null":
                error = bytes(inlined.error)
                code = decode(self.spec, "gemini", "result error", error, _Status).code
                result = entry_result(self.spec, self._dialect, GRPC_HTTP.get(code, 500), error, finished_at=now)
            else:
                continue  # not run
            outcomes.append(BatchOutcome(custom_id=key, result=result))
        return outcomes

    async def cancel(self, batch_id: str) -> None:
        await self._control.call("cancel", "POST", f"{self._base}/{batch_id}:cancel")

    async def _operation(self, batch_id: str) -> _Operation:
        if not batch_id.startswith("batches/"):
            raise BatchApiError("bad_request", f"judge {self.spec.name!r} (gemini): batch id {batch_id!r} is not a 'batches/...' name")
        return decode(self.spec, "gemini", "status", await self._control.call("status", "GET", f"{self._base}/{batch_id}"), _Operation)


def create(spec: JudgeSpec) -> GeminiBatchAdapter:
    """Gemini batch mode for a judge of adapter "gemini" (key: GEMINI_API_KEY or GOOGLE_API_KEY, or `api_key_env`)."""
    settings, dialect, headers, base = connection(spec)
    control = BatchControl(spec, "gemini", headers, settings, retry_delay=retry_delay_from_body, error_kind=dialect.error_kind)
    return GeminiBatchAdapter(spec, dialect, base, control, CAPABILITIES, model=model_name(spec))
