"""The one HTTP transport of the HTTP adapters: aiohttp, for `https://` and
`http://` alike.

One session per adapter and event loop, its connection pool sized to the
judge's concurrency, keep-alive, DNS cached, gzip/deflate bodies decoded.

Keep-alive race: a server closes an idle connection on its own clock
(uvicorn, vLLM's server, after 5 s), so a request can go out on a pooled
connection just as the server closes it. aiohttp replays only idempotent
methods; a judge call is a POST. So `post` replays a request itself, once
and at once, on a fresh connection, when and only when a *reused*
connection failed before any byte of a response arrived (the server closed
or reset it). Anything else (a fresh connection dropped, a partial answer,
a timeout) is the adapter's to classify and back off. And idle connections
to `http://` judges (self-hosted servers, usually uvicorn) expire after
`HTTP_KEEPALIVE_S`, before the server's usual 5 s; `https://` APIs keep
theirs `HTTPS_KEEPALIVE_S`.
"""

from __future__ import annotations

import asyncio
import errno
import weakref
from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

import aiohttp

HTTP_KEEPALIVE_S = 4.0  # below uvicorn's default timeout_keep_alive of 5 s
HTTPS_KEEPALIVE_S = 30.0
_DROPPED = frozenset({errno.ECONNRESET, errno.EPIPE, errno.ECONNABORTED})


REPLAY_NOTE = "needlejudge: replayed on a fresh connection"  # on an exception from a replay

# Whether the current task's request went out on a pooled connection (set by
# `ReuseTrackingConnector.connect`, which runs in the requesting task).
_REUSED: ContextVar[bool] = ContextVar("needlejudge_connection_reused", default=False)


class Answer:
    """Status, headers and body of one exchange; `sent`: requests it took (2 when replayed)."""

    __slots__ = ("status", "headers", "body", "sent")

    def __init__(self, status: int, headers: Mapping[str, str], body: bytes, sent: int = 1) -> None:
        self.status, self.headers, self.body, self.sent = status, headers, body, sent


def keepalive_for(url: str, configured: float | None) -> float:
    """Seconds an idle connection to `url` is kept: the judge's `keepalive_s`, else by scheme."""
    if configured is not None:
        return configured
    return HTTP_KEEPALIVE_S if url.startswith("http://") else HTTPS_KEEPALIVE_S


class AiohttpTransport:
    """POSTs over a pooled aiohttp session bound to the running event loop."""

    def __init__(self, *, concurrency: int, timeout_s: float, keepalive_s: float | None, dns_ttl_s: float) -> None:
        self._concurrency = concurrency
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._keepalive_s = keepalive_s
        self._dns_ttl_s = dns_ttl_s
        self._session: aiohttp.ClientSession | None = None
        self._fresh: aiohttp.ClientSession | None = None  # one connection per request: the replays
        self._loop: asyncio.AbstractEventLoop | None = None

    async def aclose(self) -> None:
        for session in (self._session, self._fresh):
            if session is not None and not session.closed and self._loop is asyncio.get_running_loop():
                await session.close()
        self._session = self._fresh = None

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """One exchange. Raises TimeoutError, aiohttp's connection and payload
        errors, or ValueError for a header that cannot go on the wire; an
        exception from a replay carries REPLAY_NOTE (two requests were sent)."""
        return await self.send("POST", url, body, headers)

    async def send(self, method: str, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """`post` with any method (the batch APIs GET their status and files)."""
        session = self._pooled(url)
        _REUSED.set(False)
        answered: list[bool] = []
        try:
            return await _exchange(session, method, url, body, headers, answered)
        except (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError) as exc:
            if not (_REUSED.get() and not answered and _before_any_answer(exc)):
                raise
        try:
            answer = await _exchange(self._fresh_session(), method, url, body, headers, [])
        except Exception as exc:
            exc.add_note(REPLAY_NOTE)
            raise
        answer.sent = 2
        return answer

    def _pooled(self, url: str) -> aiohttp.ClientSession:
        session = self._session
        loop = asyncio.get_running_loop()
        if session is None or session.closed or self._loop is not loop:
            # a session belongs to one event loop; a new run on a new loop gets a new one
            self._loop, self._fresh = loop, None
            connector = ReuseTrackingConnector(
                limit=self._concurrency,
                limit_per_host=self._concurrency,
                ttl_dns_cache=self._dns_ttl_s,
                use_dns_cache=True,
                keepalive_timeout=keepalive_for(url, self._keepalive_s),
            )
            session = self._session = self._new_session(connector)
        return session

    def _fresh_session(self) -> aiohttp.ClientSession:
        if self._fresh is None or self._fresh.closed:
            self._fresh = self._new_session(aiohttp.TCPConnector(force_close=True, limit=0))
        return self._fresh

    def _new_session(self, connector: aiohttp.TCPConnector) -> aiohttp.ClientSession:
        return aiohttp.ClientSession(
            connector=connector,
            timeout=self._timeout,
            auto_decompress=True,
            skip_auto_headers=("User-Agent",),
        )


class ReuseTrackingConnector(aiohttp.TCPConnector):
    """aiohttp's connector, noting in `_REUSED` whether a request got a pooled
    connection. (aiohttp's request tracing would say so too, but a traced
    session sends a dozen signals per request: ~30 µs of CPU per call.)"""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._seen: weakref.WeakSet[Any] = weakref.WeakSet()  # the connections handed out so far

    async def connect(self, req: aiohttp.ClientRequest, traces: list[Any], timeout: aiohttp.ClientTimeout) -> Any:
        connection = await super().connect(req, traces, timeout)
        protocol = connection.protocol
        if protocol in self._seen:
            _REUSED.set(True)
        elif protocol is not None:
            self._seen.add(protocol)
        return connection


async def _exchange(session: aiohttp.ClientSession, method: str, url: str, body: bytes, headers: dict[str, str], answered: list[bool]) -> Answer:
    async with session.request(method, url, data=body, headers=headers) as response:
        answered.append(True)
        if response.status == 101:
            response.close()  # the connection now speaks another protocol: never reuse it
            return Answer(101, response.headers, b"")
        return Answer(response.status, response.headers, await response.read())


def _before_any_answer(exc: aiohttp.ClientError) -> bool:
    """The server closed or reset the connection before sending a byte of a response."""
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return exc.message == "Server disconnected"  # else it holds the partial response it cut off
    return isinstance(exc, aiohttp.ClientOSError) and exc.errno in _DROPPED
