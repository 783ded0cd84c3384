"""The fake server's OpenAI Batch API: `/v1/files` (multipart upload,
purpose "batch"; list, retrieve, delete, content download), `/v1/batches`
(create, list, retrieve, cancel; an input file is dropped once a batch is
made of it). Every answer passes the openai SDK's strict response
validation (File objects with `status`, cursor pages with `has_more`). Input lines `{"custom_id", "method", "url", "body"}`; a line that
is not one of those, or a custom_id used twice, fails the whole batch at
validation (status "failed", `errors.data[]` naming the line). Output
lines `{"id", "custom_id", "response": {"status_code", "request_id",
"body"}, "error"}`: 2xx answers in the output file, the rest in the error
file; entries an expired or cancelled batch never ran are written to the
error file with error code `batch_expired` / `batch_cancelled`.
"""

from __future__ import annotations

import time
from typing import Any

import msgspec
from aiohttp import web

from simulation.batch_endpoints import BatchBook, Job, validate_entry
from simulation.wire import ENCODER, JSON, Reject
from simulation.wire_openai import ChatCompletionsWire

ENDPOINT = "/v1/chat/completions"
WIRE = ChatCompletionsWire()
_STATUS = {"in_progress": "in_progress", "ended": "completed", "expired": "expired", "failed": "failed", "cancelled": "cancelled"}


def routes(book: BatchBook) -> list[tuple[str, str, Any]]:
    async def upload(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "upload")
        if refused is not None:
            return refused
        try:
            form = await request.post()
        except ValueError as exc:
            return _error(400, f"Could not parse the multipart form: {exc}")
        purpose, file = form.get("purpose"), form.get("file")
        if purpose != "batch":
            return _error(400, f"'purpose': expected 'batch', got {purpose!r}", param="purpose")
        if not isinstance(file, web.FileField):
            return _error(400, "'file': a file is required", param="file")
        content = file.file.read()
        file_id = book.new_id("file-")
        book.files[file_id] = ("batch", content)
        names[file_id] = (file.filename, int(time.time()))
        return _json(_file_object(book, names, file_id))

    async def list_files(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "list_files")
        if refused is not None:
            return refused
        purpose = request.query.get("purpose")
        ids = [file_id for file_id, (kind, _) in list(book.files.items()) if purpose in (None, kind)]
        return _json(_page([_file_object(book, names, file_id) for file_id in ids], request))

    async def retrieve_file(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "retrieve_file")
        if refused is not None:
            return refused
        file_id = request.match_info["file_id"]
        if file_id not in book.files:
            return _error(404, f"No such File object: {file_id}", kind="not_found")
        if request.method == "DELETE":
            del book.files[file_id]
            names.pop(file_id, None)
            return _json({"id": file_id, "object": "file", "deleted": True})
        return _json(_file_object(book, names, file_id))

    async def list_batches(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "list")
        if refused is not None:
            return refused
        return _json(_page([_batch_object(book, job) for job in book.newest_first("openai")], request))

    async def content(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "results")
        if refused is not None:
            return refused
        stored = book.files.get(request.match_info["file_id"])
        if stored is None:
            return _error(404, f"No such File object: {request.match_info['file_id']}", kind="not_found")
        return web.Response(body=stored[1], content_type="application/octet-stream")

    async def create(request: web.Request) -> web.Response:
        refused = book.control(request, WIRE, "create")
        if refused is not None:
            return refused
        try:
            body = msgspec.json.decode(await request.read())
        except msgspec.DecodeError:
            return _error(400, "We could not parse the JSON body of your request.")
        if not isinstance(body, dict):
            return _error(400, "The request body must be a JSON object.")
        if body.get("endpoint") != ENDPOINT:
            return _error(400, f"'endpoint': this fake serves {ENDPOINT} only, got {body.get('endpoint')!r}", param="endpoint")
        if body.get("completion_window") != "24h":
            return _error(400, f"'completion_window': expected '24h', got {body.get('completion_window')!r}", param="completion_window")
        stored = book.files.get(str(body.get("input_file_id")))
        if stored is None:
            return _error(404, f"No such File object: {body.get('input_file_id')}", kind="not_found")
        entries, errors = _read_input(book, stored[1])
        del book.files[body["input_file_id"]]  # read once: the fake keeps no copy of large inputs
        batch_id = book.new_id("batch_")
        job = book.create("openai", batch_id, entries, input_file_id=body["input_file_id"])
        if errors and not job.done:
            job.state, job.detail = "failed", "invalid input lines"
            job.extra["errors"] = errors
        elif job.done:
            job.extra["errors"] = [{"code": "invalid_request", "message": job.detail, "param": None, "line": None}]
        return _json(_batch_object(book, job))

    def render(job: Job, request: web.Request) -> web.Response:
        return _json(_batch_object(book, job))

    names: dict[str, tuple[str, int]] = {}  # file id -> (file name, created at) of the uploads
    return [
        ("POST", "/v1/files", upload),
        ("GET", "/v1/files", list_files),
        ("GET", "/v1/files/{file_id}", retrieve_file),
        ("DELETE", "/v1/files/{file_id}", retrieve_file),
        ("GET", "/v1/files/{file_id}/content", content),
        ("POST", "/v1/batches", create),
        ("GET", "/v1/batches", list_batches),
        ("GET", "/v1/batches/{batch_id}", book.job_handler(WIRE, "status", render)),
        ("POST", "/v1/batches/{batch_id}/cancel", book.job_handler(WIRE, "cancel", render, act=book.cancel)),
    ]


def _read_input(book: BatchBook, content: bytes) -> tuple[list, list[dict]]:
    entries: list = []
    errors: list[dict] = []
    seen: set[str] = set()
    for number, line in enumerate(content.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            item = msgspec.json.decode(line)
        except msgspec.DecodeError:
            errors.append(_line_error(number, "invalid_json", "This line is not parseable as valid JSON."))
            continue
        custom_id = item.get("custom_id") if isinstance(item, dict) else None
        if not isinstance(custom_id, str) or not custom_id:
            errors.append(_line_error(number, "missing_required_parameter", "Missing required parameter: 'custom_id'."))
        elif custom_id in seen:
            errors.append(_line_error(number, "duplicate_custom_id", f"The custom_id '{custom_id}' is used more than once."))
        elif item.get("method") != "POST" or item.get("url") != ENDPOINT:
            errors.append(_line_error(number, "invalid_url", f"The url must be {ENDPOINT} with method POST."))
        else:
            seen.add(custom_id)
            entries.append((custom_id, validate_entry(WIRE, book.server, item.get("body"))))
    if not entries and not errors:
        errors.append(_line_error(None, "empty_file", "The input file has no requests."))
    return entries, errors


def _file_object(book: BatchBook, names: dict[str, tuple[str, int]], file_id: str) -> dict:
    """A File object (an upload, or a batch's output / error file)."""
    purpose, content = book.files[file_id]
    filename, created_at = names.get(file_id, (f"{file_id}.jsonl", int(time.time())))
    return {"id": file_id, "object": "file", "bytes": len(content), "created_at": created_at, "filename": filename,
            "purpose": purpose, "status": "processed", "expires_at": None, "status_details": None}


def _page(data: list[dict], request: web.Request) -> dict:
    """A cursor page of `data` after `?after=ID`, at most `?limit=` (default 20) items."""
    after = request.query.get("after")
    ids = [item["id"] for item in data]
    start = ids.index(after) + 1 if after in ids else 0
    try:
        limit = max(1, min(10_000, int(request.query.get("limit", "20"))))
    except ValueError:
        limit = 20
    page = data[start:start + limit]
    return {"object": "list", "data": page, "first_id": page[0]["id"] if page else None,
            "last_id": page[-1]["id"] if page else None, "has_more": start + limit < len(data)}


def _line_error(line: int | None, code: str, message: str) -> dict:
    return {"code": code, "message": message, "param": None, "line": line}


def _batch_object(book: BatchBook, job: Job) -> dict:
    total, ok, failed = job.counts()
    if job.state == "failed":
        total = ok = failed = 0
    out: dict[str, Any] = {
        "id": job.id, "object": "batch", "endpoint": ENDPOINT, "errors": None,
        "input_file_id": job.extra["input_file_id"], "completion_window": "24h", "status": _STATUS[job.state],
        "output_file_id": None, "error_file_id": None, "created_at": int(job.created_at),
        "request_counts": {"total": total, "completed": ok, "failed": failed},
    }
    if job.state == "failed":
        out["errors"] = {"object": "list", "data": job.extra.get("errors", [])}
    elif job.done:
        output, errors = job.extra.get("files") or _write_files(book, job)
        job.extra["files"] = (output, errors)
        out["output_file_id"], out["error_file_id"] = output, errors
    return out


def _write_files(book: BatchBook, job: Job) -> tuple[str | None, str | None]:
    good: list[bytes] = []
    bad: list[bytes] = []
    not_run = {"expired": "batch_expired", "cancelled": "batch_cancelled"}.get(job.state)
    for number, (custom_id, _) in enumerate(job.entries):
        answer = job.answers.get(custom_id)
        line: dict[str, Any] = {"id": f"batch_req_{job.id}_{number}", "custom_id": custom_id, "response": None, "error": None}
        if answer is None:
            if not_run is None:
                continue
            line["error"] = {"code": not_run, "message": "This request could not be executed before the batch ended."}
            bad.append(ENCODER.encode(line))
            continue
        line["response"] = {"status_code": answer.status, "request_id": f"req_{number}", "body": msgspec.Raw(answer.body)}
        (good if 200 <= answer.status < 300 else bad).append(ENCODER.encode(line))
    ids: list[str | None] = []
    for lines in (good, bad):
        if not lines:
            ids.append(None)
            continue
        file_id = book.new_id("file-")
        book.files[file_id] = ("batch_output", b"\n".join(lines) + b"\n")
        ids.append(file_id)
    return ids[0], ids[1]


def _error(status: int, message: str, *, kind: str = "invalid_request_error", param: str | None = None) -> web.Response:
    return WIRE.error_response(Reject(status, kind, message, param=param))


def _json(value: dict) -> web.Response:
    return web.Response(body=ENCODER.encode(value), content_type=JSON)
