"""The fake server's injected faults: what a request hit by a `Fault`
(simulation/fake_config.py) is answered, in the request's wire format."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Callable

from aiohttp import web

from simulation.fake_config import Fault
from simulation.wire import JSON, Call, Reject, WireDialect


def hits(fault: Fault, seed: int, number: int, nth: int, content: str = "") -> bool:
    """Whether the `nth` request matching fault `number` is hit: by schedule,
    from `after` on, or by rate (a seeded draw, the same on every run, of the
    request's place or, with `draw_by = "content"`, of its `content`)."""
    if nth in fault.schedule or (fault.after is not None and nth >= fault.after):
        return True
    key = content if fault.draw_by == "content" else nth
    return fault.rate > 0 and uniform(seed, "fault", number, key) < fault.rate


def uniform(*parts: object) -> float:
    digest = hashlib.blake2b("\x1f".join(map(str, parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") / 2**64


HTML_PAGE = (b"<!DOCTYPE html>\n<html><head><title>Sign in to the network</title></head>"
             b"<body><h1>Proxy authentication required</h1><p>Please sign in to continue.</p></body></html>\n")


async def inject(
    wire: WireDialect, fault: Fault, call: Call, request: web.Request, answer: Callable[[Call], tuple[str, str]]
) -> web.StreamResponse:
    """The answer a request gets when `fault` hits it (`answer` gives the judge's text and finish reason)."""
    if fault.kind == "server_error":
        status = fault.status or 500
        return wire.error_response(Reject(status, wire.server_kind(status), "The server had an error processing your request."))
    if fault.kind == "overloaded":
        status = wire.overloaded_status
        return wire.error_response(Reject(status, wire.server_kind(status), "The service is temporarily overloaded."))
    if fault.kind in ("rate_limit", "rate_limit_bare"):
        return wire.rate_limit_response(fault.retry_after_s, {}, bare=fault.kind == "rate_limit_bare")
    if fault.kind == "bad_request":
        return wire.error_response(Reject(400, wire.bad_request_kind, "Invalid request (injected)."))
    if fault.kind == "http_error":
        status = fault.status or 500
        if status == 401:  # the provider's own answer to a key it does not take (revoked, expired)
            return wire.error_response(wire.invalid_key())
        return wire.error_response(Reject(status, wire.kind_for_status(status), f"Injected HTTP {status}."))
    if fault.kind == "hang":
        await asyncio.sleep(fault.hang_s)
        text, finish = answer(call)
        return web.Response(body=wire.success_body(call, text, finish, 0, 0), content_type=JSON)
    if fault.kind == "reset":
        drop(request)
        return web.Response(status=500)
    if fault.kind == "truncated":
        text, finish = answer(call)
        body = wire.success_body(call, text, finish, 0, 0)
        response = web.StreamResponse(headers={"Content-Type": JSON})
        response.content_length = len(body)
        await response.prepare(request)
        await response.write(body[: len(body) // 2])
        drop(request)
        return response
    if fault.kind == "malformed":
        return web.Response(body=b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assis', content_type=JSON)
    if fault.kind == "html":  # a proxy or captive portal answering in the API's place
        return web.Response(body=HTML_PAGE, content_type="text/html")
    if fault.kind == "empty":
        return web.Response(body=b"", content_type=JSON)
    if fault.kind == "unparseable":
        return web.Response(body=wire.success_body(call, "I would rather not put a number on this.", "stop", 0, 0), content_type=JSON)
    blocked = wire.prompt_filter() if fault.kind == "prompt_filter" else None
    if blocked is not None:
        return wire.error_response(blocked)
    return web.Response(body=wire.filtered_body(call, prompt_blocked=fault.kind == "prompt_filter"), content_type=JSON)


def drop(request: web.Request) -> None:
    """Abort the connection without an answer."""
    transport = request.transport
    if transport is not None:
        transport.abort()
