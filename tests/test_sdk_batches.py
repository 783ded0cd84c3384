"""The fake server's batch and file endpoints, driven by the official openai
and anthropic SDKs in strict response validation (`_strict_response_validation`:
every answer must match the SDK's own models), over real HTTP on 127.0.0.1:
every batch and file call each SDK offers."""

from __future__ import annotations

import io
import json
import time

import anthropic
import openai
import pytest
from http_fixtures import judge_request

from simulation.fake_config import BatchSim, FakeConfig

REQUEST = judge_request("sim-sdk")
SYSTEM, USER = REQUEST.messages[0].content, REQUEST.messages[1].content


def _lines(n: int) -> bytes:
    body = {"model": "sim-sdk", "messages": [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}], "max_tokens": 8}
    return b"".join(json.dumps({"custom_id": f"c{i}", "method": "POST", "url": "/v1/chat/completions", "body": body}).encode() + b"\n"
                    for i in range(n))


def test_openai_sdk_validates_every_batch_and_file_call(server) -> None:
    server.set_config(FakeConfig(batch=BatchSim(delay_s=0.2)))
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key="sk-sdk", max_retries=0, _strict_response_validation=True)
    try:
        upload = client.files.create(file=("in.jsonl", io.BytesIO(_lines(3))), purpose="batch")
        assert upload.status == "processed" and upload.filename == "in.jsonl" and upload.bytes > 0
        assert client.files.retrieve(upload.id) == upload
        assert client.files.wait_for_processing(upload.id, poll_interval=0.01).status == "processed"
        assert upload.id in [f.id for f in client.files.list(purpose="batch")]
        assert client.files.content(upload.id).content == _lines(3)
        spare = client.files.create(file=("spare.jsonl", io.BytesIO(_lines(1))), purpose="batch")
        deleted = client.files.delete(spare.id)
        assert deleted.deleted and deleted.id == spare.id
        with pytest.raises(openai.NotFoundError):
            client.files.retrieve(spare.id)

        batch = client.batches.create(input_file_id=upload.id, endpoint="/v1/chat/completions", completion_window="24h")
        other = client.batches.create(
            input_file_id=client.files.create(file=("b.jsonl", io.BytesIO(_lines(2))), purpose="batch").id,
            endpoint="/v1/chat/completions", completion_window="24h")
        assert batch.status == "in_progress" and batch.request_counts.total == 3
        listed = client.batches.list(limit=1)
        assert [b.id for b in listed.data] == [other.id] and listed.has_more  # newest first, one a page
        assert {b.id for b in client.batches.list()} >= {batch.id, other.id}  # the SDK follows the cursor
        cancelled = client.batches.cancel(other.id)
        assert cancelled.status in ("cancelled", "completed")
        deadline = time.monotonic() + 10
        while (batch := client.batches.retrieve(batch.id)).status != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert batch.request_counts.completed == 3 and batch.output_file_id
        output = client.files.retrieve(batch.output_file_id)
        assert output.purpose == "batch_output" and output.status == "processed"
        answers = [json.loads(line) for line in client.files.content(batch.output_file_id).text.splitlines()]
        assert sorted(a["custom_id"] for a in answers) == ["c0", "c1", "c2"]
        assert all(a["response"]["status_code"] == 200 for a in answers)
    finally:
        client.close()


def test_anthropic_sdk_validates_every_message_batch_call(server) -> None:
    server.set_config(FakeConfig(batch=BatchSim(delay_s=0.2)))
    client = anthropic.Anthropic(base_url=server.url, api_key="ant-sdk", max_retries=0, _strict_response_validation=True)
    params = {"model": "sim-sdk", "max_tokens": 8, "system": SYSTEM, "messages": [{"role": "user", "content": USER}]}
    try:
        batch = client.messages.batches.create(requests=[{"custom_id": f"c{i}", "params": params} for i in range(3)])
        other = client.messages.batches.create(requests=[{"custom_id": "x", "params": params}])
        assert batch.processing_status == "in_progress" and batch.request_counts.processing == 3
        listed = client.messages.batches.list(limit=1)
        assert [b.id for b in listed.data] == [other.id] and listed.has_more  # newest first, one a page
        assert {b.id for b in client.messages.batches.list()} >= {batch.id, other.id}  # the SDK follows the pages
        with pytest.raises(anthropic.BadRequestError):
            client.messages.batches.delete(batch.id)  # still in progress
        assert client.messages.batches.cancel(other.id).processing_status == "ended"
        deadline = time.monotonic() + 10
        while (batch := client.messages.batches.retrieve(batch.id)).processing_status != "ended":
            assert time.monotonic() < deadline
            time.sleep(0.05)
        assert batch.request_counts.succeeded == 3 and batch.results_url
        results = list(client.messages.batches.results(batch.id))  # each line a strict MessageBatchIndividualResponse
        assert sorted(r.custom_id for r in results) == ["c0", "c1", "c2"]
        assert all(r.result.type == "succeeded" and r.result.message.content[0].text.startswith("Score: ") for r in results)
        deleted = client.messages.batches.delete(batch.id)
        assert deleted.id == batch.id and deleted.type == "message_batch_deleted"
        with pytest.raises(anthropic.NotFoundError):
            client.messages.batches.retrieve(batch.id)
    finally:
        client.close()
