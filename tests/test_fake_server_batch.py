"""The fake server's batch endpoints (simulation/batch_*.py) seen from raw
HTTP: the providers' shapes, whole-batch validation failures, counters per
custom_id over /_fake/stats, and the `needlejudge fake-server` batch flags."""

from __future__ import annotations

import argparse
import json

import aiohttp
import pytest
from http_fixtures import judge_request

from engine.commands import fake_server as command
from simulation.fake_config import BatchSim, FakeConfig
from simulation.fake_server import serve

pytestmark = pytest.mark.anyio
AUTH = {"Authorization": "Bearer k"}
BODY = {"model": "sim-raw", "messages": [{"role": m.role, "content": m.content} for m in judge_request("sim-raw").messages],
        "max_tokens": 8}


async def upload(s, url, lines: list[bytes]):
    form = aiohttp.FormData()
    form.add_field("purpose", "batch")
    form.add_field("file", b"\n".join(lines), filename="in.jsonl")
    async with s.post(f"{url}/v1/files", data=form, headers=AUTH) as r:
        assert r.status == 200, await r.text()
        return (await r.json())["id"]


async def openai_batch(s, url, lines):
    file_id = await upload(s, url, lines)
    async with s.post(f"{url}/v1/batches", json={"input_file_id": file_id, "endpoint": "/v1/chat/completions",
                                                   "completion_window": "24h"}, headers=AUTH) as r:
        assert r.status == 200, await r.text()
        created = await r.json()
    async with s.get(f"{url}/v1/batches/{created['id']}", headers=AUTH) as r:
        return await r.json()


def line(custom_id: str, body=BODY, url="/v1/chat/completions") -> bytes:
    return json.dumps({"custom_id": custom_id, "method": "POST", "url": url, "body": body}).encode()


async def test_openai_batch_output_lines_and_counters_over_http():
    async with serve() as server, aiohttp.ClientSession() as s:
        batch = await openai_batch(s, server.url, [line("a"), line("b"), line("c", {**BODY, "model": "missing-x"})])
        assert batch["status"] == "completed" and batch["request_counts"] == {"total": 3, "completed": 2, "failed": 1}
        async with s.get(f"{server.url}/v1/files/{batch['output_file_id']}/content", headers=AUTH) as r:
            good = [json.loads(x) for x in (await r.read()).splitlines()]
        async with s.get(f"{server.url}/v1/files/{batch['error_file_id']}/content", headers=AUTH) as r:
            bad = [json.loads(x) for x in (await r.read()).splitlines()]
        assert [g["custom_id"] for g in good] == ["a", "b"] and all(g["response"]["status_code"] == 200 for g in good)
        assert good[0]["response"]["body"]["choices"][0]["message"]["content"].startswith("Score: ")
        assert bad[0]["custom_id"] == "c" and bad[0]["response"]["status_code"] == 404
        assert bad[0]["response"]["body"]["error"]["code"] == "model_not_found"
        async with s.get(f"{server.url}/_fake/stats") as r:
            stats = (await r.json())["batch"]
        assert stats["processed"] == {"a": 1, "b": 1, "c": 1} and stats["repeated"] == {} and stats["created"] == 1
        assert stats["entries_failed"] == 1 and stats["by_operation"] == {"upload": 1, "create": 1, "status": 1, "results": 2}


async def test_openai_invalid_lines_fail_the_whole_batch_naming_the_line():
    async with serve() as server, aiohttp.ClientSession() as s:
        batch = await openai_batch(s, server.url, [line("a"), b"{not json", line("a"), line("d", url="/v1/embeddings")])
        assert batch["status"] == "failed" and batch["output_file_id"] is None
        assert [(e["code"], e["line"]) for e in batch["errors"]["data"]] == [
            ("invalid_json", 2), ("duplicate_custom_id", 3), ("invalid_url", 4)]
        assert server.stats()["batch"]["entries_processed"] == 0


async def test_openai_batch_endpoints_check_the_key_and_the_request():
    async with serve(FakeConfig(valid_keys=("good",))) as server, aiohttp.ClientSession() as s:
        async with s.get(f"{server.url}/v1/batches/batch_x") as r:
            assert r.status == 401 and (await r.json())["error"]["code"] == "invalid_api_key"
        async with s.get(f"{server.url}/v1/batches/batch_x", headers={"Authorization": "Bearer good"}) as r:
            assert r.status == 404
        async with s.post(f"{server.url}/v1/batches", json={"input_file_id": "f", "endpoint": "/v1/chat/completions",
                                                             "completion_window": "1h"}, headers={"Authorization": "Bearer good"}) as r:
            assert r.status == 400 and "completion_window" in (await r.json())["error"]["message"]


async def test_expired_batch_lists_the_entries_it_never_ran_as_batch_expired():
    async with serve(FakeConfig(batch=BatchSim(delay_s=4.0, expire_after_s=2.0))) as server, aiohttp.ClientSession() as s:
        batch = await openai_batch(s, server.url, [line(c) for c in "abcd"])
        assert batch["status"] == "in_progress" and batch["output_file_id"] is None
        server.batches.jobs[batch["id"]].created -= 2.5
        async with s.get(f"{server.url}/v1/batches/{batch['id']}", headers=AUTH) as r:
            batch = await r.json()
        assert batch["status"] == "expired" and batch["request_counts"]["completed"] == 2
        async with s.get(f"{server.url}/v1/files/{batch['error_file_id']}/content", headers=AUTH) as r:
            bad = [json.loads(x) for x in (await r.read()).splitlines()]
        assert [(b["custom_id"], b["error"]["code"]) for b in bad] == [("c", "batch_expired"), ("d", "batch_expired")]
        assert server.stats()["batch"]["processed"] == {"a": 1, "b": 1}


async def test_failed_entries_are_chosen_by_custom_id_and_run_so_a_retry_draws_again():
    from simulation.batch_endpoints import entry_fails

    ids = [f"id{n}" for n in range(40)]
    expected = {cid for cid in ids if entry_fails(0, cid, 0, 0.3)}
    assert 0 < len(expected) < 40
    async with serve(FakeConfig(batch=BatchSim(failure_rate=0.3, failure_status=503))) as server, aiohttp.ClientSession() as s:
        batch = await openai_batch(s, server.url, [line(cid) for cid in ids])
        async with s.get(f"{server.url}/v1/files/{batch['error_file_id']}/content", headers=AUTH) as r:
            bad = [json.loads(x) for x in (await r.read()).splitlines()]
        assert {b["custom_id"] for b in bad} == expected
        assert {b["response"]["status_code"] for b in bad} == {503}
        again = await openai_batch(s, server.url, [line(cid) for cid in sorted(expected)])
        retried_failures = again["request_counts"]["failed"]
        assert retried_failures == sum(entry_fails(0, cid, 1, 0.3) for cid in expected) < len(expected)
        assert all(server.stats()["batch"]["processed"][cid] == 2 for cid in expected)


async def test_pending_batches_survive_a_new_configuration_which_applies_to_them():
    async with serve(FakeConfig(batch=BatchSim(delay_s=3600.0))) as server, aiohttp.ClientSession() as s:
        batch = await openai_batch(s, server.url, [line("a"), line("b")])
        assert batch["status"] == "in_progress"
        async with s.post(f"{server.url}/_fake/config", json={"batch": {"delay_s": 0.0}}) as r:
            assert r.status == 200 and (await r.json())["batch"]["delay_s"] == 0.0
        async with s.get(f"{server.url}/v1/batches/{batch['id']}", headers=AUTH) as r:
            batch = await r.json()
        assert batch["status"] == "completed" and batch["request_counts"]["completed"] == 2
        assert server.stats()["batch"]["processed"] == {"a": 1, "b": 1}


def test_command_batch_flags():
    parser = argparse.ArgumentParser()
    command.configure(parser)
    args = parser.parse_args(["--batch-delay", "30", "--batch-expire-after", "10", "--batch-failure-rate", "0.1",
                              "--batch-failure-status", "400", "--batch-fail", "0", "--batch-fail", "2"])
    assert command.build_config(args).batch == BatchSim(delay_s=30.0, expire_after_s=10.0, failure_rate=0.1, failure_status=400,
                                                        fail_batches=(0, 2))
    assert command.build_config(parser.parse_args([])).batch == BatchSim()
    with pytest.raises(Exception, match="failure_rate"):
        command.build_config(parser.parse_args(["--batch-failure-rate", "2"]))
