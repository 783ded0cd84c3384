"""A lean HTTP/1.1 client for judges served over plain `http://`.

A self-hosted judge (vLLM, any OpenAI-compatible server on the local
network) answers in milliseconds, so the client's CPU per call is what
bounds the throughput of one engine process. aiohttp spends ~300 µs of
Python per POST on features such a call never uses (cookies, redirects,
proxies, tracing, multipart, auth helpers); this client does one thing:
POST a body on a kept-alive connection and read one response, parsed by
httptools (the C binding of Node's llhttp parser that uvicorn uses). It
costs ~120 µs per call. `https://` judges (the commercial APIs, where
latency is seconds and TLS matters) keep using aiohttp.

What it does: connection reuse (most recently used first), keep-alive
expiry, `Connection: close`, Content-Length, chunked and read-until-close
bodies, gzip/deflate bodies sent although not asked for, 1xx interim
responses skipped, a total timeout per request (connect included). What
it never does: redirects, cookies, proxies, pipelining. A connection
whose exchange did not finish cleanly (timeout, cancellation, a parse
error, a drop) is aborted, never reused.

Failures are `TimeoutError` or `TransportError`; the caller (the HTTP
adapter) classifies and retries them. The number of connections equals
the caller's peak concurrency (the adapter's in-flight window bounds it).
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections import deque
from urllib.parse import urlsplit

import httptools

_ACCEPT = b"Accept-Encoding: identity\r\n"


class TransportError(Exception):
    """The exchange failed below HTTP semantics: refused, dropped, truncated or unparseable."""


class HttpResponse:
    """Status, headers (lower-case names, first occurrence wins) and the decoded body."""

    __slots__ = ("status", "headers", "body")

    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body


class _Origin:
    """What every request to one URL shares: where to connect, the request-line
    prefix, and the idle connections to that host and port (shared by its URLs)."""

    __slots__ = ("host", "port", "prefix", "idle")

    def __init__(self, url: str, pools: dict[tuple[str, int], deque[_Connection]]) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"not a plain http:// URL: {url!r}")
        self.host = parts.hostname
        self.port = parts.port or 80
        host_header = f"[{self.host}]" if ":" in self.host else self.host
        if parts.port:
            host_header += f":{parts.port}"
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        _check_header_text(target, "request target")
        self.prefix = f"POST {target} HTTP/1.1\r\nHost: {host_header}\r\n".encode("latin-1") + _ACCEPT
        self.idle = pools.setdefault((self.host, self.port), deque())


class _Connection(asyncio.Protocol):
    """One TCP connection and the state of its current exchange; httptools calls the on_* methods."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.lost = False
        self.idle_since = 0.0
        self.deadline = 0.0  # loop time by which the current exchange must be answered
        self._parser = httptools.HttpResponseParser(self)
        self._waiter: asyncio.Future[HttpResponse] | None = None
        self._headers: dict[str, str] = {}
        self._body: list[bytes] = []
        self._headers_done = False
        self._done = False
        self._extra = False  # bytes came after the answer: the connection is out of step
        self.keep_alive = False

    # -- asyncio.Protocol

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        if self._waiter is None or self._done:
            self._extra = True
            self._fail(TransportError("the server sent data nobody asked for"))
            return
        try:
            self._parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(TransportError(f"invalid HTTP response: {exc}"))

    def eof_received(self) -> bool:
        return False  # close our side too

    def connection_lost(self, exc: Exception | None) -> None:
        self.lost = True
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._headers_done and self._reads_until_close():
            self._finish()  # the body is delimited by the close
            return
        cause = f": {exc}" if exc else ""
        stage = "in the middle of the response" if self._headers_done else "before answering"
        waiter.set_exception(TransportError(f"server closed the connection {stage}{cause}"))

    # -- httptools callbacks

    def on_message_begin(self) -> None:
        if self._done:  # a second message after the answer, in the same read
            self._extra = True

    def on_header(self, name: bytes, value: bytes) -> None:
        self._headers.setdefault(name.decode("latin-1").lower(), value.decode("latin-1"))

    def on_headers_complete(self) -> None:
        self._headers_done = True

    def on_body(self, body: bytes) -> None:
        self._body.append(body)

    def on_message_complete(self) -> None:
        status = self._parser.get_status_code()
        if 100 <= status < 200:  # an interim response (103 Early Hints, a stray 100): the answer follows
            self._headers, self._body, self._headers_done = {}, [], False
            return
        self.keep_alive = self._parser.should_keep_alive()
        self._finish()

    # -- the exchange

    async def exchange(self, request: bytes) -> HttpResponse:
        assert self.transport is not None and self._waiter is None
        self._waiter = asyncio.get_running_loop().create_future()
        self._headers, self._body, self._headers_done, self._done, self._extra = {}, [], False, False, False
        self.transport.write(request)
        try:
            return await self._waiter
        finally:
            self._waiter = None

    def reusable(self) -> bool:
        return self._done and self.keep_alive and not self._extra and self.open()

    def open(self) -> bool:
        # is_closing: the server's FIN was read, connection_lost is still to come
        return not self.lost and self.transport is not None and not self.transport.is_closing()

    def time_out(self, timeout_s: float) -> None:
        self._fail(TimeoutError(f"no complete answer within {timeout_s:g}s"))

    def abort(self) -> None:
        self.lost = True
        if self.transport is not None:
            self.transport.abort()

    def _finish(self) -> None:
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        self._done = True
        body = b"".join(self._body)
        headers = self._headers
        self._headers, self._body = {}, []  # anything parsed after this must not touch the answer
        encoding = headers.get("content-encoding", "identity").strip().lower()
        if encoding in ("gzip", "x-gzip", "deflate"):
            try:
                body = zlib.decompress(body, 47 if encoding != "deflate" else 15)
            except zlib.error:
                try:  # "deflate" is sometimes sent raw, without the zlib wrapper
                    body = zlib.decompress(body, -15)
                except zlib.error as exc:
                    waiter.set_exception(TransportError(f"cannot decode a {encoding} body: {exc}"))
                    return
        waiter.set_result(HttpResponse(self._parser.get_status_code(), headers, body))

    def _reads_until_close(self) -> bool:
        return "content-length" not in self._headers and "chunked" not in self._headers.get("transfer-encoding", "").lower()

    def _fail(self, error: TransportError | TimeoutError) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(error)
        self.abort()


class PlainHttpClient:
    """Keep-alive connection pools per origin, bound to the event loop of first use.

    Timeouts: rather than a timer per request (asyncio.timeout costs ~10 µs
    a call, a tenth of the whole exchange), one sweep every
    `timeout_s / 8` (at most 0.25 s) fails the exchanges past their
    deadline, so a request times out within [timeout_s, 1.125 timeout_s].
    Connecting has its own timer: it is rare."""

    def __init__(self, *, timeout_s: float, keepalive_s: float) -> None:
        self._timeout_s = timeout_s
        self._keepalive_s = keepalive_s
        self._sweep_every_s = min(timeout_s / 8, 0.25)
        self._origins: dict[str, _Origin] = {}
        self._idle: dict[tuple[str, int], deque[_Connection]] = {}
        self._busy: set[_Connection] = set()
        self._sweeper: asyncio.TimerHandle | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> HttpResponse:
        """POST `body` to `url`. Raises TimeoutError (no complete answer within
        the timeout) or TransportError; an HTTP error status is a response."""
        origin = self._origins.get(url)
        if origin is None:
            origin = self._origins[url] = _Origin(url, self._idle)
        request = b"".join((origin.prefix, _header_block(headers), b"Content-Length: %d\r\n\r\n" % len(body), body))
        loop = self._bind_to_running_loop()
        deadline = loop.time() + self._timeout_s
        connection = self._idle_connection(origin)
        if connection is None:
            async with asyncio.timeout_at(deadline):
                connection = await self._connect(origin)
        connection.deadline = deadline
        self._busy.add(connection)
        if self._sweeper is None:
            self._sweeper = loop.call_at(loop.time() + self._sweep_every_s, self._sweep)
        try:
            response = await connection.exchange(request)
        except BaseException:
            connection.abort()
            raise
        finally:
            self._busy.discard(connection)
        if connection.reusable():
            connection.idle_since = time.monotonic()
            origin.idle.append(connection)
        else:
            connection.abort()
        return response

    async def aclose(self) -> None:
        self._bind_to_running_loop()  # forgets the connections of an earlier, closed loop
        if self._sweeper is not None:
            self._sweeper.cancel()
            self._sweeper = None
        for idle in self._idle.values():
            for connection in idle:
                connection.abort()
            idle.clear()
        for connection in self._busy:
            connection.abort()
        self._busy.clear()

    def _idle_connection(self, origin: _Origin) -> _Connection | None:
        idle = origin.idle
        if not idle:
            return None
        expired = time.monotonic() - self._keepalive_s
        while idle and (not idle[0].open() or idle[0].idle_since < expired):
            idle.popleft().abort()
        while idle:
            connection = idle.pop()  # the most recently used: least likely to have been closed by the server
            if connection.open():
                return connection
            connection.abort()
        return None

    async def _connect(self, origin: _Origin) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            _, connection = await loop.create_connection(_Connection, origin.host, origin.port)
        except OSError as exc:
            raise TransportError(f"cannot connect to {origin.host}:{origin.port}: {exc}") from None
        return connection

    def _sweep(self) -> None:
        loop = self._loop
        assert loop is not None
        now = loop.time()
        for connection in [c for c in self._busy if c.deadline <= now]:
            connection.time_out(self._timeout_s)
        self._sweeper = loop.call_at(now + self._sweep_every_s, self._sweep) if self._busy else None

    def _bind_to_running_loop(self) -> asyncio.AbstractEventLoop:
        loop = asyncio.get_running_loop()
        if self._loop is not loop:
            # connections belong to the loop that made them; a new run on a new loop starts
            # afresh (a closed loop's transports cannot be touched: their sockets close when collected)
            old_loop_open = self._loop is not None and not self._loop.is_closed()
            if old_loop_open and self._sweeper is not None:
                self._sweeper.cancel()
            self._sweeper = None
            for idle in self._idle.values():
                if old_loop_open:
                    for connection in idle:
                        connection.abort()
                idle.clear()
            self._busy.clear()
            self._loop = loop
        return loop


def _header_block(headers: dict[str, str]) -> bytes:
    lines = []
    for name, value in headers.items():
        _check_header_text(name, "header name")
        _check_header_text(value, f"header {name!r}")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines).encode("latin-1")


def _check_header_text(text: str, what: str) -> None:
    if "\r" in text or "\n" in text:
        raise ValueError(f"{what} contains a line break")
