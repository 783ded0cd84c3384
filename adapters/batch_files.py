"""Calls as OpenAI batch files: a wave's calls written out as JSONL, their
answers read back and checked (`needlejudge calls export/import`, the
`vllm run-batch` executor: adapters/vllm_run_batch.py).

A wave is one folder:

- `calls-NNN.jsonl` (one per shard): the OpenAI Batch API's input lines,
  `{"custom_id", "method": "POST", "url": "/v1/chat/completions", "body"}`;
  `custom_id` is the call's cache key in hex, the body exactly what the
  synchronous adapter would POST (its `ChatCompletionsDialect`);
- `manifest.json` (written last: a folder without it is not a wave): the
  run, the design, the judge, its adapter and model, the wave number, the
  batch id under which the store records the wave, and the shards;
- `results-NNN.jsonl`, written by whatever runs the calls: the OpenAI batch
  output shape `{id, custom_id, response: {status_code, body}, error}`
  (`vllm run-batch`, the OpenAI Batch API, a Ray Data job).

Reading a result file checks every line against the wave: its key must be
one the wave asked, its body's model the manifest's; malformed lines,
unknown keys, another model's answers and a key answered twice with
different answers are counted (with the first few line numbers), and a
reading with any of them is refused as a whole by the importer. Each
answer is read by the judge's dialect through `adapters.dialect.classify_answer`,
exactly as a batch entry of the provider's own batch API.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

import msgspec

from adapters.batch_http import encode, entry_body, entry_failure, entry_result
from adapters.openai import ChatCompletionsDialect, openai_dialect, structured_outputs_style
from adapters.openai_batch import NOT_RUN, LineError, LineResponse
from engine.contracts import AdapterConfigError, BatchEntry, CallResult, JudgeSpec

FORMAT = "needlejudge-calls-v1"
MANIFEST = "manifest.json"
ENDPOINT = "/v1/chat/completions"
MAX_EXAMPLES = 5


class Shard(msgspec.Struct, frozen=True, kw_only=True):
    input: str  # file name in the wave folder
    output: str  # where the results are expected (file name in the wave folder)
    entries: int


class WaveManifest(msgspec.Struct, frozen=True, kw_only=True):
    format: str = FORMAT
    run_id: str
    design: str  # fingerprint of the design (cells and document orders), whatever the judges
    judge: str
    adapter: str
    model: str
    wave: int
    batch_id: str  # the store's record of the wave (engine.run.batch.store)
    created_at: float
    shards: list[Shard]


def export_dialect(spec: JudgeSpec) -> tuple[ChatCompletionsDialect, bool]:
    """The Chat Completions dialect of a judge's batch lines, and whether
    regex-guided decoding goes with them (what its synchronous adapter does)."""
    if spec.adapter == "openai":
        return openai_dialect(spec)[0], False
    if spec.adapter in {"vllm", "openai-compatible"}:
        style = "structured_outputs" if spec.adapter == "vllm" else structured_outputs_style(spec)
        field = str(spec.options.get("max_tokens_field", "max_tokens")) if spec.adapter == "openai-compatible" else "max_tokens"
        dialect = ChatCompletionsDialect(spec.adapter, ENDPOINT, spec.model, max_tokens_field=field, structured_outputs=style)
        return dialect, style is not None
    raise AdapterConfigError(
        f"judge {spec.name!r}: adapter {spec.adapter!r} does not speak OpenAI's chat completions; "
        "calls files are written for adapters openai, openai-compatible and vllm"
    )


def next_wave_folder(root: Path) -> tuple[int, Path]:
    """The next free `wave-NNNN` folder under `root` and its number."""
    numbers = [int(p.name[5:]) for p in root.glob("wave-*") if p.name[5:].isdigit()] if root.is_dir() else []
    wave = max(numbers, default=0) + 1
    return wave, root / f"wave-{wave:04d}"


def write_wave(folder: Path, manifest: WaveManifest, spec: JudgeSpec, entries: Sequence[BatchEntry], shards: int) -> WaveManifest:
    """Write the entries in `shards` contiguous files and the manifest (last,
    each file renamed into place whole); returns the manifest as written."""
    dialect, guided = export_dialect(spec)
    folder.mkdir(parents=True, exist_ok=True)
    count = max(1, min(shards, len(entries)))
    size, extra = divmod(len(entries), count)
    written, start = [], 0
    for n in range(count):
        chunk = entries[start : start + size + (n < extra)]
        start += len(chunk)
        lines = [
            encode({"custom_id": e.custom_id, "method": "POST", "url": ENDPOINT,
                    "body": msgspec.Raw(entry_body(spec, dialect, e, guided=guided))})
            for e in chunk
        ]
        name = f"calls-{n:03d}.jsonl"
        _write_whole(folder / name, b"".join(line + b"\n" for line in lines))
        written.append(Shard(input=name, output=f"results-{n:03d}.jsonl", entries=len(chunk)))
    manifest = msgspec.structs.replace(manifest, shards=written, created_at=time.time())
    _write_whole(folder / MANIFEST, msgspec.json.format(msgspec.json.encode(manifest)) + b"\n")
    return manifest


def read_manifest(path: Path) -> WaveManifest:
    """A wave's manifest (the file, or the folder holding it); ValueError naming it."""
    path = path / MANIFEST if path.is_dir() else path
    try:
        manifest = msgspec.json.decode(path.read_bytes(), type=WaveManifest)
    except FileNotFoundError:
        raise ValueError(f"{path}: no such manifest; expected the manifest.json an export wrote (or its folder)") from None
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise ValueError(f"{path}: not a needlejudge calls manifest ({exc})") from None
    if manifest.format != FORMAT:
        raise ValueError(f"{path}: format {manifest.format!r}; expected {FORMAT!r}")
    return manifest


def asked_keys(folder: Path, manifest: WaveManifest) -> set[str]:
    """The custom_ids the wave's input files hold."""
    return set().union(*(shard_keys(folder, shard) for shard in manifest.shards))


def shard_keys(folder: Path, shard: Shard) -> set[str]:
    """The custom_ids one shard's input file holds."""
    return {msgspec.json.decode(line, type=_Input).custom_id for line in (folder / shard.input).read_bytes().splitlines() if line.strip()}


class Reading(msgspec.Struct, kw_only=True):
    """A wave's result files as read: the answers by key, and what is wrong."""

    outcomes: dict[str, CallResult] = {}  # custom_id -> the answer (or failure) read
    lines: int = 0
    not_run: int = 0  # expired / cancelled lines: asked again
    duplicates: int = 0  # a key answered again, identically: harmless
    malformed: int = 0
    unknown: int = 0  # keys the wave did not ask
    wrong_model: int = 0
    conflicting: int = 0  # a key answered twice, differently
    missing_files: list[str] = []
    examples: list[str] = []  # the first problems, with file and line

    @property
    def refused(self) -> bool:
        return bool(self.malformed or self.unknown or self.wrong_model or self.conflicting)

    def note(self, where: str, what: str) -> None:
        if len(self.examples) < MAX_EXAMPLES:
            self.examples.append(f"{where}: {what}")


def read_results(spec: JudgeSpec, manifest: WaveManifest, asked: set[str], paths: Iterable[Path]) -> Reading:
    """Read result files against the wave: every line checked, every answer
    classified by the judge's dialect (priced at its batch discount)."""
    dialect, _ = export_dialect(spec)
    reading = Reading(outcomes={}, missing_files=[], examples=[])
    raw_seen: dict[str, bytes] = {}
    now = time.time()
    for path in paths:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            reading.missing_files.append(str(path))
            continue
        for number, line in enumerate(raw.splitlines(), 1):
            if not line.strip():
                continue
            reading.lines += 1
            _read_line(spec, dialect, manifest, asked, reading, raw_seen, f"{path}:{number}", line, now)
    return reading


def _read_line(spec: JudgeSpec, dialect: ChatCompletionsDialect, manifest: WaveManifest, asked: set[str], reading: Reading,
               raw_seen: dict[str, bytes], where: str, line: bytes, now: float) -> None:
    try:
        parsed = msgspec.json.decode(line, type=_Output)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        reading.malformed += 1
        reading.note(where, f"malformed line ({exc})")
        return
    key = parsed.custom_id
    if key not in asked:
        reading.unknown += 1
        reading.note(where, f"custom_id {key[:80]!r} is not a call of this wave")
        return
    response = parsed.response
    if response is not None and bytes(response.body) != b"null":
        model = _body_model(bytes(response.body))
        if model and model != manifest.model and not model.startswith(manifest.model + "-"):
            reading.wrong_model += 1
            reading.note(where, f"answered by model {model!r}; the wave asked {manifest.model!r}")
            return
    payload = _payload(line, parsed)
    if key in raw_seen:
        if raw_seen[key] == payload:
            reading.duplicates += 1
        else:
            reading.conflicting += 1
            reading.note(where, f"custom_id {key} answered twice, differently")
        return
    raw_seen[key] = payload
    result = _outcome(spec, dialect, parsed, line, now)
    if result is None:
        reading.not_run += 1
    else:
        reading.outcomes[key] = result


def _outcome(spec: JudgeSpec, dialect: ChatCompletionsDialect, parsed: _Output, line: bytes, now: float) -> CallResult | None:
    """The line's answer as a batch entry's (None: never run, ask again)."""
    response, error = parsed.response, bytes(parsed.error)
    if response is not None:
        body = bytes(response.body)
        if body == b"null" and error != b"null":  # vLLM puts an error's body in `error`
            body = error if error.lstrip().startswith(b"{") else encode({"error": {"message": msgspec.json.decode(error)}})
        return entry_result(spec, dialect, response.status_code, body, finished_at=now)
    if error != b"null":
        try:
            code = msgspec.json.decode(error, type=LineError).code
        except (msgspec.DecodeError, msgspec.ValidationError):
            code = None
        if code in NOT_RUN:
            return None
    return entry_failure(spec, dialect.provider, "bad_request", line, finished_at=now)


def _payload(line: bytes, parsed: _Output) -> bytes:
    """What makes two lines of one key the same answer (ids and timestamps aside)."""
    if parsed.response is None:
        return bytes(parsed.error)
    try:
        body = msgspec.json.decode(bytes(parsed.response.body), type=_BodyContent)
        return encode([parsed.response.status_code, body.model, [c.message for c in body.choices], bytes(parsed.error).decode()])
    except (msgspec.DecodeError, msgspec.ValidationError):
        return encode([parsed.response.status_code, bytes(parsed.response.body).decode(errors="replace"), bytes(parsed.error).decode()])


def _body_model(body: bytes) -> str:
    try:
        return msgspec.json.decode(body, type=_BodyModel).model
    except (msgspec.DecodeError, msgspec.ValidationError):
        return ""


def _write_whole(path: Path, content: bytes) -> None:
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as handle:
        handle.write(content)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(partial, path)


class _Input(msgspec.Struct):
    custom_id: str


class _Output(msgspec.Struct):
    """An output line; its `error` kept raw (vLLM puts an error response's body there)."""

    custom_id: str
    response: LineResponse | None = None
    error: msgspec.Raw = msgspec.Raw(b"null")


class _BodyModel(msgspec.Struct):
    model: str = ""


class _Choice(msgspec.Struct):
    message: msgspec.Raw = msgspec.Raw(b"null")


class _BodyContent(msgspec.Struct):
    model: str = ""
    choices: list[_Choice] = []
