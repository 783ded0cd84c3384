"""adapters/transport.py (aiohttp, the one transport) against scripted raw
TCP servers on 127.0.0.1: connection reuse and expiry, the keep-alive race
(a reused connection the server closes before answering is replayed once,
at once, on a fresh connection; nothing else is), body framings and
compression, drops, timeouts, and a `101 Switching Protocols` answer."""

from __future__ import annotations

import asyncio
import gzip
import logging
import time
import zlib
from collections.abc import Awaitable, Callable

import aiohttp
import pytest
from http_fixtures import judge_request, spec_for

from adapters.transport import HTTP_KEEPALIVE_S, AiohttpTransport, keepalive_for
from engine.registry import create_adapter

pytestmark = pytest.mark.anyio

Reply = Callable[[asyncio.StreamReader, asyncio.StreamWriter, bytes], Awaitable[None]]
COMPLETION = b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "Score: 7"}, "finish_reason": "stop"}], "model": "m"}'


def ok(body: bytes = COMPLETION, extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra + b"Content-Length: %d\r\n\r\n" % len(body) + body


async def close_unanswered(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.close()  # as a server closing an idle connection just as the request arrives


async def truncate(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.write(b'HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{"half": ')
    await writer.drain()
    writer.close()


async def switch_protocols(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
    writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
    await writer.drain()
    await asyncio.sleep(0.2)  # then speaks nothing a client of HTTP understands
    writer.close()


class ScriptedServer:
    """Answers the n-th request with replies[n] (bytes, or a coroutine given the reader,
    the writer and the request); closes a connection left idle for `idle_close_s`."""

    def __init__(self, *replies: bytes | Reply, idle_close_s: float | None = None) -> None:
        self.replies = list(replies)
        self.idle_close_s = idle_close_s
        self.requests: list[bytes] = []
        self.connections = 0
        self.idle_closes = 0

    async def __aenter__(self) -> ScriptedServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/v1/chat/completions"
        return self

    async def __aexit__(self, *exc: object) -> None:
        self._server.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                try:
                    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), self.idle_close_s)
                except TimeoutError:
                    self.idle_closes += 1
                    return
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
            pass
        finally:
            writer.close()


def transport(**settings) -> AiohttpTransport:
    return AiohttpTransport(**{"concurrency": 8, "timeout_s": 5.0, "keepalive_s": None, "dns_ttl_s": 300.0, **settings})


async def bodies(server: ScriptedServer, n: int, **settings) -> list[bytes]:
    http = transport(**settings)
    try:
        return [(await http.post(server.url, b"{}", {})).body for _ in range(n)]
    finally:
        await http.aclose()


# ---------------------------------------------------------------------------
# Reuse, framing, compression


async def test_connections_are_reused_and_the_request_is_on_the_wire():
    async with ScriptedServer(ok(b"1"), ok(b"2"), ok(b"3")) as server:
        http = transport()
        answers = [await http.post(server.url, b'{"q": %d}' % n, {"Authorization": "Bearer k"}) for n in range(3)]
        await http.aclose()
    assert [a.body for a in answers] == [b"1", b"2", b"3"] and answers[0].status == 200
    assert server.connections == 1
    head, body = server.requests[0].split(b"\r\n\r\n")
    assert head.startswith(b"POST /v1/chat/completions HTTP/1.1\r\n") and b"Authorization: Bearer k" in head
    assert body == b'{"q": 0}'


async def test_chunked_bodies_and_connection_close():
    chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
    async with ScriptedServer(chunked, ok(b"one", extra=b"Connection: close\r\n"), ok(b"two")) as server:
        assert await bodies(server, 3) == [b"hello world", b"one", b"two"]
    assert server.connections == 2  # the close was honoured


@pytest.mark.parametrize(
    "encoding,encoded",
    [(b"gzip", gzip.compress(b'{"text": "Score: 7"}', mtime=0)), (b"deflate", zlib.compress(b'{"text": "Score: 7"}'))],
    ids=["gzip", "deflate"],  # gzip's header holds a time: ids from the bytes differed between xdist workers
)
async def test_compressed_bodies_are_decoded(encoding, encoded):
    async with ScriptedServer(ok(encoded, extra=b"Content-Encoding: " + encoding + b"\r\n")) as server:
        assert await bodies(server, 1) == [b'{"text": "Score: 7"}']


async def test_garbage_fails_the_exchange_and_the_next_one_gets_a_new_connection():
    async with ScriptedServer(b"SMTP ready\r\n\r\n", ok(b"fine")) as server:
        http = transport()
        with pytest.raises(aiohttp.ClientResponseError):
            await http.post(server.url, b"{}", {})
        assert (await http.post(server.url, b"{}", {})).body == b"fine"
        await http.aclose()
    assert server.connections == 2


async def test_a_timeout_raises_and_frees_the_connection():
    async def hang(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, request: bytes) -> None:
        await asyncio.sleep(2.0)

    async with ScriptedServer(hang, ok(b"after")) as server:
        http = transport(timeout_s=0.2)
        started = time.monotonic()
        with pytest.raises(TimeoutError):
            await http.post(server.url, b"{}", {})
        assert time.monotonic() - started < 1.0
        assert (await http.post(server.url, b"{}", {})).body == b"after"
        await http.aclose()
    assert server.connections == 2


# ---------------------------------------------------------------------------
# The keep-alive race


async def test_a_reused_connection_closed_before_answering_is_replayed_at_once_on_a_fresh_one():
    async with ScriptedServer(ok(b"first"), close_unanswered, ok(b"replayed")) as server:
        http = transport()
        assert (await http.post(server.url, b"{}", {})).body == b"first"
        started = time.monotonic()
        assert (await http.post(server.url, b"{}", {})).body == b"replayed"
        assert time.monotonic() - started < 0.5
        await http.aclose()
    assert server.connections == 2 and len(server.requests) == 3


async def test_a_fresh_connection_closed_before_answering_is_not_replayed():
    async with ScriptedServer(close_unanswered, ok(b"never")) as server:
        http = transport()
        with pytest.raises(aiohttp.ServerDisconnectedError):
            await http.post(server.url, b"{}", {})
        await http.aclose()
    assert len(server.requests) == 1  # the adapter classifies it and backs off


async def test_a_partial_answer_on_a_reused_connection_is_not_replayed():
    async with ScriptedServer(ok(b"first"), truncate, ok(b"never")) as server:
        http = transport()
        await http.post(server.url, b"{}", {})
        with pytest.raises(aiohttp.ClientPayloadError):
            await http.post(server.url, b"{}", {})
        await http.aclose()
    assert len(server.requests) == 2


async def test_through_the_adapter_the_race_costs_no_backoff_and_the_replay_is_counted(keys):  # type: ignore[no-untyped-def]
    async with ScriptedServer(ok(), close_unanswered, ok()) as server:
        spec = spec_for("openai-compatible", f"http://127.0.0.1:{server.port}", "m", options={"backoff_base_s": 5.0, "backoff_cap_s": 5.0})
        adapter = create_adapter(spec)
        try:
            first = await adapter.complete(judge_request("m", adapter="openai-compatible"))
            started = time.monotonic()
            second = await adapter.complete(judge_request("m", adapter="openai-compatible"))
            took = time.monotonic() - started
        finally:
            await adapter.aclose()
    assert (first.status, second.status) == ("ok", "ok")
    assert second.attempts == 2 == len(server.requests) - 1  # attempts count every request sent
    assert took < 1.0  # no 5 s backoff


def test_idle_connections_to_plain_http_judges_expire_before_uvicorns_5_s():
    assert keepalive_for("http://10.0.0.2:8000/v1/chat/completions", None) == HTTP_KEEPALIVE_S < 5.0
    assert keepalive_for("https://api.openai.com/v1/chat/completions", None) == 30.0
    assert keepalive_for("http://h/v1", 1.5) == 1.5  # the judge's keepalive_s wins


async def test_the_client_drops_an_idle_connection_before_the_server_closes_it():
    async with ScriptedServer(ok(b"a"), ok(b"b"), idle_close_s=0.6) as server:
        http = transport(keepalive_s=0.3)
        try:
            assert (await http.post(server.url, b"{}", {})).body == b"a"
            await asyncio.sleep(0.45)  # past the client's keep-alive, before the server's
            assert (await http.post(server.url, b"{}", {})).body == b"b"
            assert (server.connections, server.idle_closes) == (2, 0)  # the client let go first
        finally:
            await http.aclose()


# ---------------------------------------------------------------------------
# 101 Switching Protocols


async def test_101_is_an_error_with_a_clear_cause_and_no_traceback(keys, caplog):  # type: ignore[no-untyped-def]
    async with ScriptedServer(switch_protocols, ok()) as server:
        adapter = create_adapter(spec_for("openai-compatible", f"http://127.0.0.1:{server.port}", "m"))
        try:
            with caplog.at_level(logging.DEBUG):
                switched = await adapter.complete(judge_request("m", adapter="openai-compatible"))
                after = await adapter.complete(judge_request("m", adapter="openai-compatible"))
        finally:
            await adapter.aclose()
    assert (switched.status, switched.error_kind, switched.attempts) == ("error", "protocol", 1)
    assert "HTTP 101 Switching Protocols" in switched.text and "websocket" in switched.text and "base_url" in switched.text
    assert after.status == "ok" and server.connections == 2  # the switched connection was never reused
    assert not [r for r in caplog.records if r.exc_info]
