"""OpenAI's Batch API behind `BatchAdapter` (`mode = "batch"` judges of adapter "openai").

Submit: every entry becomes one JSONL line `{"custom_id", "method": "POST",
"url": "/v1/chat/completions", "body"}` whose body is exactly what the
synchronous adapter would POST (adapters/openai.py's ChatCompletionsDialect);
the file is uploaded to `/v1/files` (purpose "batch") and a batch created at
`/v1/batches` (endpoint /v1/chat/completions, completion_window 24h).
Status: `GET /v1/batches/{id}`. Results: the output and error files
(`GET /v1/files/{id}/content`); each line's `response` (status_code, body) is
read by the same dialect as a synchronous answer. Lines whose error is
`batch_expired` / `batch_cancelled` were never run: they are left out, and
the engine asks them again.

Limits: 50,000 requests and 200 MB per input file.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgspec

from adapters.batch_http import (
    BatchAdapterBase,
    BatchApiError,
    BatchControl,
    check_entries,
    decode,
    encode,
    entry_body,
    entry_failure,
    entry_result,
    jsonl_lines,
    multipart,
)
from adapters.http import api_key_from_env, settings_from_options
from adapters.openai import OPENAI_CAPABILITIES, openai_dialect
from engine.contracts import BatchEntry, BatchOutcome, BatchStatus, JudgeSpec

MAX_ENTRIES = 50_000
MAX_FILE_BYTES = 200 * 1024 * 1024
ENDPOINT = "/v1/chat/completions"
NOT_RUN = frozenset({"batch_expired", "batch_cancelled"})  # error codes of lines the batch never ran
_STATES = {
    "validating": "in_progress", "in_progress": "in_progress", "finalizing": "in_progress", "cancelling": "in_progress",
    "completed": "ended", "expired": "expired", "failed": "failed", "cancelled": "cancelled",
}


class _Counts(msgspec.Struct):
    total: int = 0
    completed: int = 0
    failed: int = 0


class _Batch(msgspec.Struct):
    id: str
    status: str
    request_counts: _Counts | None = None
    output_file_id: str | None = None
    error_file_id: str | None = None
    errors: msgspec.Raw = msgspec.Raw(b"null")


class _File(msgspec.Struct):
    id: str


class _LineError(msgspec.Struct):
    code: str | None = None
    message: str | None = None


class _LineResponse(msgspec.Struct):
    status_code: int
    body: msgspec.Raw = msgspec.Raw(b"null")


class _Line(msgspec.Struct):
    custom_id: str
    response: _LineResponse | None = None
    error: _LineError | None = None


class OpenAIBatchAdapter(BatchAdapterBase):
    """The Batch API of OpenAI (or an OpenAI-compatible server that has one, by base_url)."""

    max_entries = MAX_ENTRIES
    provider = "openai"

    async def submit(self, entries: Sequence[BatchEntry]) -> str:
        check_entries(entries, provider="openai", max_entries=self.max_entries)
        lines = [
            encode({"custom_id": e.custom_id, "method": "POST", "url": ENDPOINT,
                    "body": msgspec.Raw(entry_body(self.spec, self._dialect, e, guided=self.capabilities.guided_decoding))})
            for e in entries
        ]
        content = b"\n".join(lines) + b"\n"
        if len(content) > MAX_FILE_BYTES:
            raise BatchApiError("too_large", f"openai batch: the input file is {len(content):,} bytes, over the "
                                f"{MAX_FILE_BYTES:,}-byte limit; submit fewer entries per batch")
        form, content_type = multipart({"purpose": "batch"}, "file", "needlejudge-batch.jsonl", content)
        uploaded = decode(self.spec, "openai", "upload", await self._control.call("upload", "POST", f"{self._base}/files", form,
                                                                   content_type=content_type), _File)
        body = encode({"input_file_id": uploaded.id, "endpoint": ENDPOINT, "completion_window": "24h"})
        return decode(self.spec, "openai", "create", await self._control.call("create", "POST", f"{self._base}/batches", body, creates=True), _Batch).id

    async def status(self, batch_id: str) -> BatchStatus:
        batch = await self._batch(batch_id)
        counts = batch.request_counts or _Counts()
        detail = "" if bytes(batch.errors) == b"null" else bytes(batch.errors).decode("utf-8", errors="replace")
        if batch.status not in _STATES:
            raise BatchApiError("malformed", f"judge {self.spec.name!r} (openai): batch {batch_id} has unknown status {batch.status!r}")
        return BatchStatus(batch_id=batch.id, state=_STATES[batch.status], total=counts.total,  # type: ignore[arg-type]
                           succeeded=counts.completed, errored=counts.failed, detail=detail)

    async def results(self, batch_id: str) -> list[BatchOutcome]:
        batch = await self._batch(batch_id)
        outcomes: list[BatchOutcome] = []
        for file_id in (batch.output_file_id, batch.error_file_id):
            if not file_id:
                continue
            raw = await self._control.call("download", "GET", f"{self._base}/files/{file_id}/content")
            now = time.time()
            for line in jsonl_lines(raw):
                outcome = self._outcome(line, now)
                if outcome is not None:
                    outcomes.append(outcome)
        return outcomes

    async def cancel(self, batch_id: str) -> None:
        await self._control.call("cancel", "POST", f"{self._base}/batches/{batch_id}/cancel")

    # -- reading ---------------------------------------------------------

    async def _batch(self, batch_id: str) -> _Batch:
        return decode(self.spec, "openai", "status", await self._control.call("status", "GET", f"{self._base}/batches/{batch_id}"), _Batch)

    def _outcome(self, line: bytes, now: float) -> BatchOutcome | None:
        parsed = decode(self.spec, "openai", "result line", line, _Line)
        if parsed.response is not None:
            result = entry_result(self.spec, self._dialect, parsed.response.status_code, bytes(parsed.response.body), finished_at=now)
        elif parsed.error is not None and parsed.error.code in NOT_RUN:
            return None
        else:
            result = entry_failure(self.spec, "openai", "bad_request", line, finished_at=now)
        return BatchOutcome(custom_id=parsed.custom_id, result=result)


def create(spec: JudgeSpec) -> OpenAIBatchAdapter:
    """OpenAI's Batch API for a judge of adapter "openai" (key: OPENAI_API_KEY or `api_key_env`)."""
    settings = settings_from_options(spec, frozenset({"max_tokens_field"}))
    key = api_key_from_env(spec, ("OPENAI_API_KEY",))
    dialect, base = openai_dialect(spec)
    control = BatchControl(spec, "openai", {"Authorization": f"Bearer {key}"}, settings, error_kind=dialect.error_kind)
    return OpenAIBatchAdapter(spec, dialect, base, control, OPENAI_CAPABILITIES)
