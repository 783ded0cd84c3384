"""The fake server's Anthropic Message Batches: `POST /v1/messages/batches`
(`{"requests": [{"custom_id", "params"}]}`; a malformed list, a custom_id
outside [A-Za-z0-9_-]{1,64} or used twice, or a batch listed in
`fail_batches` is refused whole with a 400 invalid_request_error, as the
API validates a batch at creation), `GET /v1/messages/batches/{id}`
(`processing_status`, `request_counts`, `results_url`), `GET
.../{id}/results` (JSONL: `result.type` succeeded with the `message`,
errored with the error body, canceled, expired), `POST .../{id}/cancel`,
`GET /v1/messages/batches` (a page, newest first, `before_id` / `after_id` /
`limit`) and `DELETE .../{id}` (an ended batch). Every answer passes the
anthropic SDK's strict response validation.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any

import msgspec
from aiohttp import web

from simulation.batch_endpoints import BatchBook, Job, validate_entry
from simulation.wire import ENCODER, JSON, Reject
from simulation.wire_anthropic import MessagesWire

WIRE = MessagesWire()
CUSTOM_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
MAX_REQUESTS = 100_000


def routes(book: BatchBook) -> list[tuple[str, str, Any]]:
    async def create(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "create")
        if refused is not None:
            return refused
        if not request.headers.get("anthropic-version"):
            return _error(400, "anthropic-version: header is required")
        try:
            body = msgspec.json.decode(await request.read())
        except msgspec.DecodeError:
            return _error(400, "There was an issue with the request body: not valid JSON.")
        entries, problem = _read_requests(book, body, request)
        if problem:
            return _error(400, problem)
        if book.rejected_whole():
            return _error(400, "The batch was rejected (fail_batches).")
        job = book.create("anthropic", book.new_id("msgbatch_"), entries)
        return _json(_batch_object(job, request))

    def render(job: Job, request: web.Request) -> web.Response:
        return _json(_batch_object(job, request))

    def results(job: Job, request: web.Request) -> web.Response:
        if not job.done:
            return _error(404, f"Results for batch {job.id} are not available until it has ended.", kind="not_found_error")
        return web.Response(body=_results(job), content_type="application/binary")

    async def list_batches(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "list")
        if refused is not None:
            return refused
        return _json(_page([_batch_object(job, request) for job in book.newest_first("anthropic")], request))

    def delete(job: Job, request: web.Request) -> web.Response:
        if not job.done:
            return _error(400, f"Batch {job.id} cannot be deleted while it is in progress; cancel it first.")
        del book.jobs[job.id]
        return _json({"id": job.id, "type": "message_batch_deleted"})

    return [
        ("POST", "/v1/messages/batches", create),
        ("GET", "/v1/messages/batches", list_batches),
        ("DELETE", "/v1/messages/batches/{batch_id}", book.job_handler(WIRE, "delete", delete)),
        ("GET", "/v1/messages/batches/{batch_id}", book.job_handler(WIRE, "status", render)),
        ("GET", "/v1/messages/batches/{batch_id}/results", book.job_handler(WIRE, "results", results)),
        ("POST", "/v1/messages/batches/{batch_id}/cancel", book.job_handler(WIRE, "cancel", render, act=book.cancel)),
    ]


def _read_requests(book: BatchBook, body: Any, request: web.Request) -> tuple[list, str]:
    requests = body.get("requests") if isinstance(body, dict) else None
    if not isinstance(requests, list) or not requests:
        return [], "requests: at least one request is required"
    if len(requests) > MAX_REQUESTS:
        return [], f"requests: at most {MAX_REQUESTS} requests per batch"
    entries = []
    seen: set[str] = set()
    for index, item in enumerate(requests):
        custom_id = item.get("custom_id") if isinstance(item, dict) else None
        if not isinstance(custom_id, str) or not CUSTOM_ID.fullmatch(custom_id):
            return [], f"requests.{index}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"
        if custom_id in seen:
            return [], f"requests.{index}.custom_id: duplicate custom_id {custom_id!r}"
        seen.add(custom_id)
        entries.append((custom_id, validate_entry(WIRE, book.server, item.get("params"), headers=request.headers)))
    return entries, ""


def _batch_object(job: Job, request: web.Request) -> dict:
    total, ok, failed = job.counts()
    not_run = total - ok - failed
    counts = {"processing": 0 if job.done else total, "succeeded": ok, "errored": failed,
              "canceled": not_run if job.state == "cancelled" else 0, "expired": not_run if job.state == "expired" else 0}
    origin = f"{request.scheme}://{request.host}"
    return {
        "id": job.id, "type": "message_batch", "processing_status": "ended" if job.done else "in_progress",
        "request_counts": counts, "created_at": _iso(job.created_at), "expires_at": _iso(job.created_at + 86400),
        "ended_at": _iso(job.ended_at) if job.done else None, "archived_at": None,
        "cancel_initiated_at": _iso(job.ended_at) if job.state == "cancelled" else None,
        "results_url": f"{origin}/v1/messages/batches/{job.id}/results" if job.done else None,
    }


def _page(data: list[dict], request: web.Request) -> dict:
    """Anthropic's page: `limit` (default 20) items after `after_id` or before `before_id`."""
    ids = [item["id"] for item in data]
    start, end = 0, len(data)
    if request.query.get("after_id") in ids:
        start = ids.index(request.query["after_id"]) + 1
    if request.query.get("before_id") in ids:
        end = ids.index(request.query["before_id"])
    try:
        limit = max(1, min(1000, int(request.query.get("limit", "20"))))
    except ValueError:
        limit = 20
    page = data[start:end][:limit] if "before_id" not in request.query else data[start:end][-limit:]
    return {"data": page, "has_more": len(page) < end - start,
            "first_id": page[0]["id"] if page else None, "last_id": page[-1]["id"] if page else None}


def _results(job: Job) -> bytes:
    lines = []
    not_run = {"cancelled": "canceled"}.get(job.state, "expired")
    for custom_id, _ in job.entries:
        answer = job.answers.get(custom_id)
        if answer is None:
            result: dict[str, Any] = {"type": not_run}
        elif 200 <= answer.status < 300:
            result = {"type": "succeeded", "message": msgspec.Raw(answer.body)}
        else:
            result = {"type": "errored", "error": msgspec.Raw(answer.body)}
        lines.append(ENCODER.encode({"custom_id": custom_id, "result": result}))
    return b"\n".join(lines) + b"\n"


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, tz=timezone.utc).isoformat().replace("+00:00", "Z")


def _error(status: int, message: str, *, kind: str = "invalid_request_error") -> web.Response:
    return WIRE.error_response(Reject(status, kind, message))


def _json(value: dict) -> web.Response:
    return web.Response(body=ENCODER.encode(value), content_type=JSON)
