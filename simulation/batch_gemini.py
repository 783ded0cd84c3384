"""The fake server's Gemini batch mode: `POST
/v1beta/models/{model}:batchGenerateContent` with inline requests (camelCase
or snake_case fields), answered with a long-running operation `batches/{id}`;
`GET /v1beta/batches/{id}` (`metadata.state` BATCH_STATE_*,
`metadata.batchStats` as int64 strings, and once done
`response.inlinedResponses.inlinedResponses[]` with each request's
`metadata` and its `response` or google.rpc.Status `error`); `POST
/v1beta/batches/{id}:cancel`. A missing model answers 404 at creation; a
batch in `fail_batches` ends BATCH_STATE_FAILED with an operation error.
"""

from __future__ import annotations

import fnmatch
from typing import Any

import msgspec
from aiohttp import web

from simulation.batch_endpoints import BatchBook, Job, validate_entry
from simulation.wire import ENCODER, JSON, Reject
from simulation.wire_gemini import GenerateContentWire

WIRE = GenerateContentWire()
VERSION = "{version:v1beta|v1alpha}"  # never /v1/..., which is OpenAI's
_STATES = {"in_progress": "BATCH_STATE_RUNNING", "ended": "BATCH_STATE_SUCCEEDED", "expired": "BATCH_STATE_EXPIRED",
           "failed": "BATCH_STATE_FAILED", "cancelled": "BATCH_STATE_CANCELLED"}
# HTTP status -> google.rpc.Code
HTTP_GRPC = {400: 3, 401: 16, 403: 7, 404: 5, 409: 10, 429: 8, 499: 1, 500: 13, 501: 12, 503: 14, 504: 4}
_TYPE = "type.googleapis.com/google.ai.generativelanguage.v1beta."


def routes(book: BatchBook) -> list[tuple[str, str, Any]]:
    async def create(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "create")
        if refused is not None:
            return refused
        model = request.match_info["model"]
        if any(fnmatch.fnmatchcase(model, pattern) for pattern in book.server.config.missing_models):
            return WIRE.error_response(WIRE.not_found(model))
        try:
            body = msgspec.json.decode(await request.read())
        except msgspec.DecodeError:
            return _error(400, "Invalid JSON payload received.")
        entries, problem = _read_requests(book, body, model, request.match_info["version"])
        if problem:
            return _error(400, problem)
        job = book.create("gemini", book.new_id("batches/"), entries, model=f"models/{model}", display=_display(body))
        return _json(_operation(job))

    def render(job: Job, request: web.Request) -> web.Response:
        return _json(_operation(job))

    def cancelled(job: Job, request: web.Request) -> web.Response:
        return _json({})

    return [
        ("POST", f"/{VERSION}/models/{{model}}:batchGenerateContent", create),
        ("GET", f"/{VERSION}/batches/{{batch_id}}", book.job_handler(WIRE, "status", render, id_prefix="batches/")),
        ("POST", f"/{VERSION}/batches/{{batch_id}}:cancel",
         book.job_handler(WIRE, "cancel", cancelled, act=book.cancel, id_prefix="batches/")),
    ]


def _read_requests(book: BatchBook, body: Any, model: str, version: str) -> tuple[list, str]:
    batch = body.get("batch") if isinstance(body, dict) else None
    config = _field(batch, "inputConfig", "input_config") if isinstance(batch, dict) else None
    holder = _field(config, "requests") if isinstance(config, dict) else None
    requests = _field(holder, "requests") if isinstance(holder, dict) else None
    if not isinstance(requests, list) or not requests:
        return [], "* BatchGenerateContentRequest.batch.input_config: input_config.requests.requests must not be empty."
    entries = []
    for index, item in enumerate(requests):
        if not isinstance(item, dict):
            return [], f"* requests[{index}]: must be an object with a 'request'"
        metadata = item.get("metadata") or {}
        key = metadata.get("key") if isinstance(metadata, dict) else None
        call = validate_entry(WIRE, book.server, item.get("request"), match_info={"target": f"{model}:generateContent", "version": version})
        entries.append((key if isinstance(key, str) else f"#{index}", call))
    return entries, ""


def _operation(job: Job) -> dict:
    total, ok, failed = job.counts()
    metadata = {
        "@type": _TYPE + "GenerateContentBatch", "model": job.extra["model"], "displayName": job.extra["display"],
        "name": job.id, "state": _STATES[job.state],
        "batchStats": {"requestCount": str(total), "successfulRequestCount": str(ok), "failedRequestCount": str(failed),
                       "pendingRequestCount": str(0 if job.done else total - ok - failed)},
    }
    operation: dict[str, Any] = {"name": job.id, "metadata": metadata, "done": job.done}
    if job.state == "failed":
        operation["error"] = {"code": 3, "message": job.detail}
    elif job.state == "cancelled":
        operation["error"] = {"code": 1, "message": "The batch was cancelled."}
    if job.done and job.state != "failed":
        operation["response"] = {"@type": _TYPE + "GenerateContentBatchOutput", "inlinedResponses": {"inlinedResponses": _inlined(job)}}
    return operation


def _inlined(job: Job) -> list[dict]:
    out = []
    for custom_id, _ in job.entries:
        answer = job.answers.get(custom_id)
        if answer is None:
            continue
        item: dict[str, Any] = {"metadata": {"key": custom_id}}
        if 200 <= answer.status < 300:
            item["response"] = msgspec.Raw(answer.body)
        else:
            error = msgspec.json.decode(answer.body).get("error", {})
            item["error"] = {"code": HTTP_GRPC.get(answer.status, 2), "message": error.get("message", ""),
                             "details": error.get("details", [])}
        out.append(item)
    return out


def _field(value: Any, *names: str) -> Any:
    return next((value[n] for n in names if n in value), None)


def _display(body: dict) -> str:
    name = _field(body["batch"], "displayName", "display_name")
    return name if isinstance(name, str) else ""


def _error(status: int, message: str) -> web.Response:
    return WIRE.error_response(Reject(status, "INVALID_ARGUMENT", message))


def _json(value: dict) -> web.Response:
    return web.Response(body=ENCODER.encode(value), content_type=JSON)
