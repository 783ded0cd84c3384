"""Prompt families: a pair in, judge calls out; call results in, a verdict out.

Built-in families are files in this package (`<id>.toml`), read by the
same code as user prompt files (engine.prompts.definition describes the
format):

- `bands`    semantic-similarity definition with four anchored bands, 0–100
- `nobands`  the same definition without the bands
- `sts`      the six STS levels as bands, answer on 0–100
- `triples`  per-document triple extraction, scored by our Jaccard
- `pair`     just the two delimited documents, a plain number back (non-LLM judges)
- `closer`   pairwise: which of two edits of a document is closer to the original (A, B or tie)
- `closer_pairs` pairwise: in which of two (original, edit) pairs is the edit closer to its original

    prompt = load_prompt("bands")              # or a path: "prompts/mine.toml"
    calls = prompt.render(document_1, document_2)
    verdict = prompt.verdict(results)          # one CallResult per call
"""

from __future__ import annotations

import functools
from importlib import resources
from pathlib import Path
from typing import Any

from engine.contracts import ConfigError, Prompt
from engine.prompts.definition import PromptDefinition, parse_prompt_text, read_prompt_file
from engine.prompts.documents import DocumentsNotFound, extract_document, extract_documents
from engine.prompts.families import ScorePrompt, TriplesPrompt, build_prompt
from engine.prompts.scales import BUILTIN_SCALES, Scale, parse_scale

__all__ = [
    "BUILTIN_SCALES",
    "DocumentsNotFound",
    "PromptDefinition",
    "Scale",
    "ScorePrompt",
    "TriplesPrompt",
    "builtin_prompt_ids",
    "extract_document",
    "extract_documents",
    "load_prompt",
    "parse_scale",
]

_BUILTIN_IDS = ("bands", "nobands", "sts", "triples", "pair", "closer", "closer_pairs")


def builtin_prompt_ids() -> tuple[str, ...]:
    return _BUILTIN_IDS


def load_prompt(spec: str, options: dict[str, Any] | None = None) -> Prompt:
    """A built-in id or the path of a TOML / Markdown prompt file.

    `options` overrides keys of the file (tables merge key by key), e.g.
    {"triples": {"share_identical_extractions": True}} or
    {"decoding": {"max_tokens": 64}}; the version reflects the result.
    """
    if spec in _BUILTIN_IDS:
        if not options:
            return _builtin(spec)
        return build_prompt(_builtin_definition(spec, options))
    path = Path(spec)
    if path.suffix.lower() not in {".toml", ".md", ".markdown"}:
        raise ConfigError(
            f"prompt {spec!r}: expected a built-in prompt ({', '.join(_BUILTIN_IDS)}) "
            "or the path of a .toml / .md prompt file"
        )
    if not path.is_file():
        raise ConfigError(f"prompt file {spec}: no such file")
    return build_prompt(read_prompt_file(path, options=options))


@functools.cache
def _builtin(prompt_id: str) -> Prompt:
    return build_prompt(_builtin_definition(prompt_id, None))


def _builtin_definition(prompt_id: str, options: dict[str, Any] | None) -> PromptDefinition:
    text = resources.files(__package__).joinpath(f"{prompt_id}.toml").read_text(encoding="utf-8")
    return parse_prompt_text(
        text,
        name=f"builtin prompt {prompt_id}",
        default_id=prompt_id,
        markdown=False,
        options=options,
        source=f"builtin:{prompt_id}",
    )
