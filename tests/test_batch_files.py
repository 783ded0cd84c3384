"""Calls as OpenAI batch files (adapters/batch_files.py): the lines a wave
writes, its manifest, and the checks on the result lines read back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from adapters.batch_files import (
    MANIFEST,
    WaveManifest,
    asked_keys,
    export_dialect,
    next_wave_folder,
    read_manifest,
    read_results,
    write_wave,
)
from engine.contracts import AdapterConfigError, BatchApiError, BatchEntry, CallRequest, Decoding, JudgeSpec, Message, request_key

REGEX = r"Score: (100|[1-9]?[0-9])"


def spec(adapter: str = "vllm", model: str = "tiny") -> JudgeSpec:
    return JudgeSpec(name="judge", adapter=adapter, model=model)


def entry(n: int, adapter: str = "vllm", **decoding) -> BatchEntry:
    decoding.setdefault("max_tokens", 8)
    request = CallRequest(
        namespace="judge", adapter=adapter, model="tiny", revision="",
        messages=(Message("system", "Rate."), Message("user", f"Document {n}.")), decoding=Decoding(**decoding),
    )
    return BatchEntry(custom_id=request_key(request).hex(), request=request)


def manifest(**fields) -> WaveManifest:
    base = dict(run_id="0123456789abcdef", design="fedcba9876543210", judge="judge", adapter="vllm", model="tiny",
                wave=1, batch_id="b1", created_at=0.0, shards=[])
    return WaveManifest(**{**base, **fields})


def answer(custom_id: str, text: str = "Score: 7", model: str = "tiny") -> dict:
    """A line as `vllm run-batch` writes it."""
    body = {"id": "chatcmpl-1", "object": "chat.completion", "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35}}
    return {"id": "vllm-1", "custom_id": custom_id, "response": {"status_code": 200, "request_id": "r", "body": body}, "error": None}


def vllm_error(custom_id: str, status: int, message: str) -> dict:
    return {"id": "vllm-2", "custom_id": custom_id, "response": {"status_code": status, "request_id": "r", "body": None},
            "error": {"error": {"message": message, "type": "BadRequestError", "param": None, "code": status}}}


def write_lines(path: Path, lines: list) -> Path:
    path.write_text("".join((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines))
    return path


@pytest.fixture
def wave(tmp_path):
    entries = [entry(n, guided_regex=REGEX) for n in range(5)]
    written = write_wave(tmp_path / "wave-0001", manifest(), spec(), entries, shards=2)
    return tmp_path / "wave-0001", written, entries


def test_wave_files_hold_the_synchronous_bodies_keyed_by_cache_key(wave):
    folder, written, entries = wave
    assert [s.entries for s in written.shards] == [3, 2]
    assert read_manifest(folder) == written and read_manifest(folder / MANIFEST) == written
    lines = [json.loads(line) for s in written.shards for line in (folder / s.input).read_text().splitlines()]
    assert [line["custom_id"] for line in lines] == [e.custom_id for e in entries]
    assert asked_keys(folder, written) == {e.custom_id for e in entries}
    first = lines[0]
    assert first["method"] == "POST" and first["url"] == "/v1/chat/completions"
    body = first["body"]
    assert body["model"] == "tiny" and body["max_tokens"] == 8 and body["temperature"] == 0.0
    assert body["structured_outputs"] == {"regex": REGEX}  # the vLLM judge's guided decoding goes out with the call
    assert body["messages"] == [{"role": "system", "content": "Rate."}, {"role": "user", "content": "Document 0."}]
    assert not list(folder.glob("*.partial"))


def test_next_wave_folder_counts_on(tmp_path):
    assert next_wave_folder(tmp_path / "none") == (1, tmp_path / "none" / "wave-0001")
    (tmp_path / "wave-0001").mkdir()
    (tmp_path / "wave-0007").mkdir()
    assert next_wave_folder(tmp_path) == (8, tmp_path / "wave-0008")


def test_openai_lines_use_its_token_field_and_refuse_regex(tmp_path):
    written = write_wave(tmp_path / "w", manifest(adapter="openai"), spec("openai"), [entry(1, adapter="openai")], shards=4)
    assert len(written.shards) == 1  # never more shards than entries
    body = json.loads((tmp_path / "w" / written.shards[0].input).read_text())["body"]
    assert body["max_completion_tokens"] == 8 and "max_tokens" not in body
    with pytest.raises(BatchApiError, match="guided_regex"):
        write_wave(tmp_path / "w2", manifest(adapter="openai"), spec("openai"), [entry(2, adapter="openai", guided_regex=REGEX)], shards=1)


def test_other_wire_formats_are_refused_by_name():
    with pytest.raises(AdapterConfigError, match="judge 'judge': adapter 'anthropic' does not speak"):
        export_dialect(spec("anthropic"))


def test_bad_manifest_is_named(tmp_path):
    with pytest.raises(ValueError, match="no such manifest"):
        read_manifest(tmp_path)
    (tmp_path / MANIFEST).write_text('{"format": "x"}')
    with pytest.raises(ValueError, match=f"{tmp_path / MANIFEST}: not a needlejudge calls manifest"):
        read_manifest(tmp_path)


def test_answers_and_error_lines_are_classified_like_batch_entries(wave, tmp_path):
    folder, written, entries = wave
    ids = [e.custom_id for e in entries]
    path = write_lines(tmp_path / "out.jsonl", [
        answer(ids[0], "Score: 42"),
        vllm_error(ids[1], 400, "This model's maximum context length is 2048 tokens. However, you requested 3000 tokens"),
        vllm_error(ids[2], 503, "engine overloaded"),
        {"id": "x", "custom_id": ids[3], "response": None, "error": {"code": "batch_expired", "message": "expired"}},
        answer(ids[0], "Score: 42"),  # the same answer again: counted, harmless
    ])
    reading = read_results(spec(), written, asked_keys(folder, written), [path, tmp_path / "absent.jsonl"])
    assert not reading.refused and reading.lines == 5
    assert reading.duplicates == 1 and reading.not_run == 1 and reading.missing_files == [str(tmp_path / "absent.jsonl")]
    ok, context, transient = (reading.outcomes[k] for k in ids[:3])
    assert (ok.status, ok.text, ok.usage.prompt_tokens, ok.model_version) == ("ok", "Score: 42", 30, "tiny")
    assert (context.status, context.error_kind) == ("error", "context_length")
    assert "maximum context length" in context.text
    assert (transient.status, transient.error_kind) == ("error", "server")  # left pending by the importer
    assert ids[3] not in reading.outcomes and ids[4] not in reading.outcomes


def test_lines_that_do_not_belong_are_counted_with_where(wave, tmp_path):
    folder, written, entries = wave
    ids = [e.custom_id for e in entries]
    path = write_lines(tmp_path / "out.jsonl", [
        answer(ids[0]),
        "{not json",
        answer("f" * 64),  # a key the wave did not ask
        answer(ids[1], model="another-model"),
        answer(ids[0], "Score: 99"),  # the same key, another answer
        answer(ids[2], model="tiny-2025-01-01"),  # a dated snapshot of the asked model is the model
    ])
    reading = read_results(spec(), written, asked_keys(folder, written), [path])
    assert reading.refused
    assert (reading.malformed, reading.unknown, reading.wrong_model, reading.conflicting) == (1, 1, 1, 1)
    assert set(reading.outcomes) == {ids[0], ids[2]}
    assert reading.examples[0].startswith(f"{path}:2: malformed line")
    assert any(f"{path}:4: answered by model 'another-model'" in example for example in reading.examples)
