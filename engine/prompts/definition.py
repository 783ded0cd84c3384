"""Prompt files: the TOML / Markdown format every prompt family is written in.

TOML (all keys but `instructions` optional):

    id = "myprompt"              # default: the file name without extension
    kind = "score"               # "score" (the judge answers a number) or "triples"
    scale = "1-7"                # score prompts: "0-100", "1-7", "-3..3", "0-1", "0-5", any "low-high"
    description = "..."          # not part of the version
    system = "..."               # optional system message
    instructions = '''...'''     # the user message text before the documents

    [decoding]                   # overrides of the kind's defaults (see DEFAULT_DECODING)
    max_tokens = 32
    [parser]
    mode = "lenient"             # or "number": only a plain number is accepted
    [triples]
    share_identical_extractions = false

Markdown: the same keys as TOML front matter between two `+++` lines, and
the body below it as `instructions`.

The documents always follow the instructions, in the tagged blocks of
engine.prompts.documents; nothing comes after them (prefix caches hit).
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from pathlib import Path
from typing import Any, Literal

import msgspec

from engine.contracts import ConfigError, Decoding
from engine.prompts.documents import DELIMITER_FORMAT
from engine.prompts.parse import PARSER_VERSION, ParserMode
from engine.prompts.scales import Scale, parse_scale
from engine.prompts.triples import CANON_VERSION, TRIPLES_JSON_SCHEMA

PromptKind = Literal["score", "triples", "pairwise"]
PAIRWISE_REGEX = "(A|B|tie)"
_ID = re.compile(r"^[a-z0-9][a-z0-9_.-]*$")


class DecodingOverrides(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    temperature: float | None = None
    top_p: float | None = None
    max_tokens: int | None = None
    seed: int | None = None
    stop: list[str] | None = None
    response_format: Literal["text", "json"] | None = None
    json_schema: dict[str, Any] | None = None
    guided_regex: str | None = None  # "" turns the default pattern off


class ParserSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    mode: ParserMode = "lenient"


class TriplesSettings(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    # Identical documents share one extraction (same replicate offset)
    # instead of two independent passes as in the reference experiment.
    share_identical_extractions: bool = False


class PromptFile(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True):
    instructions: str
    id: str | None = None
    kind: PromptKind = "score"
    scale: str = "0-100"
    description: str = ""
    system: str = ""
    decoding: DecodingOverrides = DecodingOverrides()
    parser: ParserSettings = ParserSettings()
    triples: TriplesSettings = TriplesSettings()


class PromptDefinition(msgspec.Struct, frozen=True, kw_only=True):
    """A validated prompt: everything rendering and parsing depend on."""

    id: str
    version: str
    kind: PromptKind
    scale: Scale
    system: str
    instructions: str
    decoding: Decoding
    parser: ParserSettings
    triples: TriplesSettings
    description: str = ""
    source: str = ""  # "builtin:<id>" or the file path


def score_decoding(scale: Scale) -> Decoding:
    """Default for score prompts: deterministic, a few tokens, guided to a bare number."""
    return Decoding(temperature=0.0, max_tokens=16, guided_regex=scale.answer_regex())


def triples_decoding() -> Decoding:
    """Default for triple extraction: deterministic, room for a long JSON list."""
    return Decoding(
        temperature=0.0, max_tokens=4096, response_format="json", json_schema=canonical_json(TRIPLES_JSON_SCHEMA)
    )


def canonical_json(value: Any) -> str:
    return msgspec.json.encode(value, order="sorted").decode()


def read_prompt_file(path: Path, *, options: dict[str, Any] | None = None, source: str | None = None) -> PromptDefinition:
    try:
        # Line endings and a byte-order mark must not change the version.
        text = path.read_text(encoding="utf-8-sig").replace("\r\n", "\n")
    except OSError as error:
        raise ConfigError(f"prompt file {path}: cannot be read ({error.strerror or error})") from None
    except UnicodeDecodeError as error:
        raise ConfigError(f"prompt file {path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    return parse_prompt_text(
        text,
        name=str(path),
        default_id=path.stem,
        markdown=path.suffix.lower() in {".md", ".markdown"},
        options=options,
        source=source or str(path),
    )


def parse_prompt_text(
    text: str,
    *,
    name: str,
    default_id: str,
    markdown: bool,
    options: dict[str, Any] | None = None,
    source: str = "",
) -> PromptDefinition:
    data = _markdown_data(text, name) if markdown else _toml(text, name)
    if options:
        data = _merged(data, options)
    try:
        spec = msgspec.convert(data, PromptFile)
    except msgspec.ValidationError as error:
        raise ConfigError(f"prompt file {name}: {error}") from None
    return _definition(spec, name=name, default_id=default_id, source=source)


def _toml(text: str, name: str) -> dict[str, Any]:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"prompt file {name}: invalid TOML ({error})") from None


def _markdown_data(text: str, name: str) -> dict[str, Any]:
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "+++":
        raise ConfigError(f"prompt file {name}: a Markdown prompt starts with TOML front matter between '+++' lines")
    try:
        end = next(index for index in range(1, len(lines)) if lines[index].strip() == "+++")
    except StopIteration:
        raise ConfigError(f"prompt file {name}: the front matter has no closing '+++' line") from None
    data = _toml("".join(lines[1:end]), name)
    if "instructions" in data:
        raise ConfigError(f"prompt file {name}: key 'instructions' belongs in the Markdown body, not the front matter")
    data["instructions"] = "".join(lines[end + 1 :]).strip("\n")
    return data


def _merged(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merged(merged[key], value)
        else:
            merged[key] = value
    return merged


def _definition(spec: PromptFile, *, name: str, default_id: str, source: str) -> PromptDefinition:
    prompt_id = spec.id if spec.id is not None else default_id
    if not _ID.match(prompt_id):
        raise ConfigError(
            f"prompt file {name}: key 'id' = {prompt_id!r}; expected lowercase letters, digits, '_', '-' or '.'"
        )
    if not spec.instructions.strip() and spec.kind == "triples":
        raise ConfigError(f"prompt file {name}: key 'instructions' is empty; a triple prompt must ask for triples")
    if spec.kind == "pairwise":  # "A", "B" or "tie": the first-shown edit's score 100, 0 or 50
        scale = parse_scale("0-100")
        base = Decoding(temperature=0.0, max_tokens=8, guided_regex=PAIRWISE_REGEX)
    elif spec.kind == "triples":
        if spec.scale != "0-100":
            raise ConfigError(
                f"prompt file {name}: key 'scale': a triples prompt scores on '0-100' (Jaccard), not {spec.scale!r}"
            )
        scale = parse_scale("0-100")
        base = triples_decoding()
    else:
        scale = parse_scale(spec.scale, where=f"prompt file {name}: key 'scale'")
        base = score_decoding(scale)
    decoding = _apply_overrides(base, spec.decoding, name)
    content = {
        "kind": spec.kind,
        "scale": scale.name,
        "system": spec.system,
        "instructions": spec.instructions,
        "decoding": msgspec.to_builtins(decoding),
        "parser": msgspec.to_builtins(spec.parser),
        "parser_version": PARSER_VERSION,
        "delimiters": DELIMITER_FORMAT,
    }
    if spec.kind == "triples":
        content["triples"] = msgspec.to_builtins(spec.triples)
        content["canonicalisation"] = CANON_VERSION
    version = hashlib.blake2b(canonical_json(content).encode(), digest_size=6).hexdigest()
    return PromptDefinition(
        id=prompt_id,
        version=version,
        kind=spec.kind,
        scale=scale,
        system=spec.system,
        instructions=spec.instructions,
        decoding=decoding,
        parser=spec.parser,
        triples=spec.triples,
        description=spec.description,
        source=source,
    )


def _apply_overrides(base: Decoding, overrides: DecodingOverrides, name: str) -> Decoding:
    changes: dict[str, Any] = {}
    for field in overrides.__struct_fields__:
        value = getattr(overrides, field)
        if value is None:
            continue
        if field == "stop":
            value = tuple(value)
        elif field == "json_schema":
            value = canonical_json(value)
        elif field == "guided_regex":
            if value == "":
                value = None
            else:
                try:
                    re.compile(value)
                except re.error as error:
                    raise ConfigError(
                        f"prompt file {name}: key 'decoding.guided_regex' is not a valid regex ({error})"
                    ) from None
        elif field == "max_tokens" and value < 1:
            raise ConfigError(f"prompt file {name}: key 'decoding.max_tokens' = {value}; expected at least 1")
        changes[field] = value
    return msgspec.structs.replace(base, **changes)
