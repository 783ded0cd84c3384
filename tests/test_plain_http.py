"""The lean HTTP/1.1 client (adapters/plain_http.py) against scripted raw
TCP servers on 127.0.0.1: what goes on the wire, connection reuse and
expiry, every body framing, interim responses, compressed bodies, and each
way an exchange can fail (never reusing a connection that failed)."""

from __future__ import annotations

import asyncio
import gzip
import time
import zlib
from collections.abc import Awaitable, Callable

import pytest
from http_fixtures import anyio_backend  # noqa: F401 (fixture)

from adapters.plain_http import PlainHttpClient, TransportError

pytestmark = pytest.mark.anyio

Reply = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]]


def ok(body: bytes = b'{"ok": true}', extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body


class ScriptedServer:
    """Answers the n-th request with replies[n] (bytes, or a coroutine given the reader, the writer and the request)."""

    def __init__(self, *replies: bytes | Reply) -> None:
        self.replies = list(replies)
        self.requests: list[bytes] = []
        self.connections = 0
        self.closed_by_client = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions?api-version=1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(next(line.split(b":")[1] for line in head.split(b"\r\n") if line.lower().startswith(b"content-length")))
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                reply = self.replies[len(self.requests) - 1]
                if isinstance(reply, bytes):
                    writer.write(reply)
                    await writer.drain()
                else:
                    await reply(reader, writer, request)
                if writer.is_closing():
                    return
        except (asyncio.IncompleteReadError, ConnectionError):
            self.closed_by_client += 1
        finally:
            writer.close()


def client(**settings) -> PlainHttpClient:
    return PlainHttpClient(**{"timeout_s": 5.0, "keepalive_s": 30.0, **settings})


async def two_bodies(server: ScriptedServer) -> tuple[bytes, bytes]:
    """The bodies of two successive requests from one client."""
    http = client()
    try:
        return (await http.post(server.url, b"{}", {})).body, (await http.post(server.url, b"{}", {})).body
    finally:
        await http.aclose()


async def test_request_on_the_wire_and_connection_reuse():
    async with ScriptedServer(ok(b'{"n": 1}'), ok(b'{"n": 2}'), ok(b'{"n": 3}')) as server:
        http = client(timeout_s=0.4)
        bodies = [(await http.post(server.url, b'{"q": %d}' % n, {"Authorization": "Bearer k", "X-Tag": "t"})).body for n in range(3)]
        await asyncio.sleep(0.15)
        assert http._sweeper is None  # the timeout sweep stops once nothing is in flight
        await http.aclose()
    assert bodies == [b'{"n": 1}', b'{"n": 2}', b'{"n": 3}']
    assert server.connections == 1  # kept alive
    head, body = server.requests[0].split(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    assert lines[0] == b"POST /v1/chat/completions?api-version=1 HTTP/1.1"
    assert set(lines[1:]) == {f"Host: 127.0.0.1:{server.port}".encode(), b"Accept-Encoding: identity", b"Authorization: Bearer k", b"X-Tag: t", b"Content-Length: 8"}
    assert body == b'{"q": 0}'


async def test_status_and_headers_are_returned_lower_cased_first_wins():
    reply = b"HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nretry-after: 9\r\nX-RateLimit-Remaining-Requests: 0\r\nContent-Length: 2\r\n\r\n{}"
    async with ScriptedServer(reply) as server:
        http = client()
        response = await http.post(server.url, b"{}", {})
        await http.aclose()
    assert (response.status, response.body) == (429, b"{}")
    assert response.headers["retry-after"] == "3" and response.headers["x-ratelimit-remaining-requests"] == "0"


async def test_chunked_body_is_assembled():
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    async with ScriptedServer(chunked, ok(b"again")) as server:
        first, second = await two_bodies(server)
    assert (first, second) == (b"hello world", b"again")
    assert server.connections == 1


async def test_connection_close_is_honoured():
    async with ScriptedServer(ok(b"one", extra=b"Connection: close\r\n"), ok(b"two")) as server:
        first, second = await two_bodies(server)
    assert (first, second) == (b"one", b"two")
    assert server.connections == 2


async def test_body_delimited_by_the_close_is_read_to_the_end():
    async def until_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + b"x" * 10_000)
        await writer.drain()
        writer.close()

    async with ScriptedServer(until_close, ok(b"next")) as server:
        first, second = await two_bodies(server)
    assert first == b"x" * 10_000 and second == b"next"
    assert server.connections == 2


async def test_interim_responses_are_skipped():
    early_hints = b"HTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
    async with ScriptedServer(early_hints + ok(b"final", extra=b"X-Final: 1\r\n")) as server:
        http = client()
        response = await http.post(server.url, b"{}", {})
        await http.aclose()
    assert (response.status, response.body, response.headers.get("x-final"), "link" in response.headers) == (200, b"final", "1", False)


@pytest.mark.parametrize(
    "encoding,encoded",
    [
        (b"gzip", gzip.compress(b'{"text": "Score: 7"}')),
        (b"deflate", zlib.compress(b'{"text": "Score: 7"}')),
        (b"deflate", zlib.compress(b'{"text": "Score: 7"}')[2:-4]),  # raw deflate, as some servers send it
    ],
)
async def test_compressed_bodies_sent_unasked_are_decoded(encoding, encoded):
    async with ScriptedServer(ok(encoded, extra=b"Content-Encoding: " + encoding + b"\r\n")) as server:
        http = client()
        response = await http.post(server.url, b"{}", {})
        await http.aclose()
    assert response.body == b'{"text": "Score: 7"}'


async def test_undecodable_compressed_body_is_a_transport_error():
    async with ScriptedServer(ok(b"not gzip at all", extra=b"Content-Encoding: gzip\r\n")) as server:
        http = client()
        with pytest.raises(TransportError, match="cannot decode a gzip body"):
            await http.post(server.url, b"{}", {})
        await http.aclose()


async def test_garbage_is_a_transport_error_and_the_connection_is_not_reused():
    async with ScriptedServer(b"SMTP ready\r\n\r\n", ok(b"fine")) as server:
        http = client()
        with pytest.raises(TransportError, match="invalid HTTP response"):
            await http.post(server.url, b"{}", {})
        assert (await http.post(server.url, b"{}", {})).body == b"fine"
        await http.aclose()
    assert server.connections == 2


async def _drop(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.transport.abort()


async def _truncate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"half\": ")
    await writer.drain()
    writer.close()


@pytest.mark.parametrize("reply,stage", [(_drop, "before answering"), (_truncate, "in the middle of the response")])
async def test_a_dropped_exchange_is_a_transport_error_saying_when(reply, stage):
    async with ScriptedServer(reply, ok(b"recovered")) as server:
        http = client()
        with pytest.raises(TransportError, match=f"server closed the connection {stage}"):
            await http.post(server.url, b"{}", {})
        assert (await http.post(server.url, b"{}", {})).body == b"recovered"
        await http.aclose()
    assert server.connections == 2


def hang_until_closed(seen_close: list[float]) -> Reply:
    """Never answer; note when the client closes the connection (within 2 s)."""

    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
        started = time.monotonic()
        while time.monotonic() - started < 2.0:
            if reader.at_eof() or writer.transport.is_closing():
                seen_close.append(time.monotonic() - started)
                return
            await asyncio.sleep(0.01)

    return hang


async def test_timeout_aborts_the_connection():
    seen_close: list[float] = []
    async with ScriptedServer(hang_until_closed(seen_close), ok(b"after")) as server:
        http = client(timeout_s=0.2)
        started = time.monotonic()
        with pytest.raises(TimeoutError, match="no complete answer within 0.2s"):
            await http.post(server.url, b"{}", {})
        assert 0.2 <= time.monotonic() - started < 0.2 * 1.125 + 0.05  # the sweep's granularity is timeout/8
        await asyncio.sleep(0.1)
        assert seen_close and seen_close[0] < 0.5  # closed at the timeout, not left open
        assert (await http.post(server.url, b"{}", {})).body == b"after"
        await http.aclose()
    assert server.connections == 2


async def test_cancellation_aborts_the_connection():
    seen_close: list[float] = []
    async with ScriptedServer(hang_until_closed(seen_close), ok(b"after")) as server:
        http = client()
        task = asyncio.ensure_future(http.post(server.url, b"{}", {}))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.1)
        assert seen_close and seen_close[0] < 0.5
        assert (await http.post(server.url, b"{}", {})).body == b"after"
        await http.aclose()
    assert server.connections == 2


async def _answer_then_close(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.write(ok(b"first", extra=b"X-Which: first\r\n"))  # keep-alive by default, then an idle-timeout close
    await writer.drain()
    writer.close()


async def _answer_then_chatter(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.write(ok(b"first", extra=b"X-Which: first\r\n"))
    await writer.drain()
    await asyncio.sleep(0.05)
    writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nextra")


async def _answer_with_a_second_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.write(ok(b"first", extra=b"X-Which: first\r\n") + ok(b"extra", extra=b"X-Which: extra\r\n"))  # one write
    await writer.drain()


@pytest.mark.parametrize(
    "reply", [_answer_then_close, _answer_then_chatter, _answer_with_a_second_answer], ids=["closed-while-idle", "unsolicited-data", "two-answers-at-once"]
)
async def test_an_idle_connection_the_server_closed_or_spoke_on_is_not_reused(reply):
    async with ScriptedServer(reply, ok(b"second")) as server:
        http = client()
        first = await http.post(server.url, b"{}", {})
        assert (first.body, first.headers["x-which"]) == (b"first", "first")
        await asyncio.sleep(0.2)
        assert (await http.post(server.url, b"{}", {})).body == b"second"
        await http.aclose()
    assert server.connections == 2


async def test_idle_connections_expire_after_keepalive():
    async with ScriptedServer(ok(b"a"), ok(b"b"), ok(b"c")) as server:
        http = client(keepalive_s=0.15)
        await http.post(server.url, b"{}", {})
        await http.post(server.url, b"{}", {})  # reused
        await asyncio.sleep(0.3)
        await http.post(server.url, b"{}", {})  # expired: a new connection
        await http.aclose()
    assert server.connections == 2


async def test_concurrent_requests_use_one_connection_each_and_all_are_reused():
    async def slow_ok(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
        await asyncio.sleep(0.05)
        writer.write(ok(request.rsplit(b"\r\n\r\n", 1)[1]))
        await writer.drain()

    async with ScriptedServer(*[slow_ok] * 40) as server:
        http = client()
        for _ in range(5):
            bodies = await asyncio.gather(*(http.post(server.url, b"%d" % n, {}) for n in range(8)))
            assert [r.body for r in bodies] == [b"%d" % n for n in range(8)]
        await http.aclose()
    assert server.connections == 8


@pytest.mark.parametrize("headers,message", [({"X-Tag": "a\r\nX-Evil: 1"}, "header 'X-Tag' contains a line break"), ({"X-Tag": "naïve ☃"}, "codec can't encode")])
async def test_header_values_that_cannot_go_on_the_wire_are_refused_before_sending(headers, message):
    async with ScriptedServer(ok()) as server:
        http = client()
        with pytest.raises(ValueError, match=message):
            await http.post(server.url, b"{}", headers)
        await http.aclose()
    assert server.requests == []


async def test_refused_connection_names_the_address():
    http = client()
    with pytest.raises(TransportError, match=r"cannot connect to 127\.0\.0\.1:9"):
        await http.post("http://127.0.0.1:9/v1", b"{}", {})
    await http.aclose()


def test_only_plain_http_urls_are_accepted():
    async def post() -> None:
        await client().post("https://api.openai.com/v1/chat/completions", b"{}", {})

    with pytest.raises(ValueError, match="not a plain http:// URL"):
        asyncio.run(post())
