"""A finished run folder made ready for labelling: its sample (drawn once and
kept in `sample.json` beside the labels, so a restarted page shows the same
items), each item's two documents from the run's store, and the scale and
instructions of the prompt the judges got."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from engine.contracts import ConfigError
from engine.labelling.log import LabelLog
from engine.labelling.sample import LabelItem, draw_sample
from engine.labelling.server import LabelBook, Scale, shown

SAMPLE_FILE = "sample.json"
LABELS_FILE = "labels.jsonl"
_SENTINEL_1, _SENTINEL_2 = "\x00DOCUMENT-1\x00", "\x00DOCUMENT-2\x00"


def _read_json(path: Path, what: str) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no {what}; label a finished run folder (it holds results.jsonl and manifest.json)") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not a readable {what}: {exc}") from None


def _results(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        raise ConfigError(f"{path}: no results; label a finished run folder (it holds results.jsonl and manifest.json)")
    rows = []
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    raise ConfigError(f"{path} line {number}: not JSON") from None
    return rows


def instructions_and_scale(prompt_spec: str) -> tuple[str, Scale]:
    """What the judges were told before the documents, and the prompt's scale."""
    from engine.prompts import load_prompt
    from engine.prompts.scales import parse_scale

    prompt = load_prompt(prompt_spec)
    scale = parse_scale(prompt.scale)
    text = prompt.render(_SENTINEL_1, _SENTINEL_2)[0].messages[-1].content
    cut = text.find(_SENTINEL_1)
    before = text[:cut].rsplit("\n\n", 1)[0] if cut > 0 else text
    return before.replace(_SENTINEL_1, "[document 1]").replace(_SENTINEL_2, "[document 2]").strip(), Scale(
        name=scale.name, low=scale.low, high=scale.high, integer=scale.integer)


def load_or_draw_sample(out: Path, rows: list[dict[str, Any]], *, size: int, overlap: int, seed: int) -> list[LabelItem]:
    path = out / SAMPLE_FILE
    if path.exists():
        try:
            return msgspec.json.decode(path.read_bytes(), type=list[LabelItem])
        except msgspec.DecodeError as exc:
            raise ConfigError(f"{path}: not a label sample ({exc}); move it aside to draw a new one") from None
    items = draw_sample(rows, size=size, overlap=overlap, seed=seed)
    if not items:
        raise ConfigError("the run has no scored needle/hay items to label")
    out.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(msgspec.json.encode(items))
    tmp.replace(path)
    return items


def open_book(run_dir: Path, out: Path, *, size: int, overlap: int, prompt: str | None = None) -> LabelBook:
    from engine.cache.store import Store
    from engine.corpus.pairs import Corpus

    manifest = _read_json(run_dir / "manifest.json", "manifest")
    config = manifest.get("config") or {}
    seed = int(config.get("seed", 0))
    prompts = list(config.get("prompts") or ["bands"])
    spec = prompt or prompts[0]
    instructions, scale = instructions_and_scale(spec)
    items = load_or_draw_sample(out, _results(run_dir / "results.jsonl"), size=size, overlap=overlap, seed=seed)
    store_path = Path(manifest.get("store") or config.get("store") or "")
    if not (store_path / "data.mdb").exists():
        raise ConfigError(f"{run_dir / 'manifest.json'}: its store {store_path} is not there; the pairs' texts are read from it")
    with Store(store_path, readonly=True) as store:
        corpus = Corpus.open(store)
        shown_items = []
        for item in items:
            pair = corpus.make_pair(item.doc_id, item.needle, item.hay, item.i, item.j, seed)
            if pair is None:
                raise ConfigError(f"item {item.item_id}: the store {store_path} no longer gives this pair (was the corpus prepared again?)")
            shown_items.append(shown(item, pair))
    return LabelBook(shown_items, LabelLog(out / LABELS_FILE), scale, instructions)
