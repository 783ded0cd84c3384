"""The item-level oracle: a mechanical check of every pair before it is used.

Two checks, both on text alone (no parser):
1. the window: the perturbed document equals the original except for the
   needle sentence (original = P + needle_before + S and
   perturbed = P + needle_after + S for one occurrence of needle_before);
2. the needle sentence changed exactly as its type says:
   none: identical; neg: one "not" inserted after a word, or one word
   replaced by do-support ("do/does/did not <verb>"); con: exactly one
   and/or swapped (casing kept); ner: one listed entity span replaced
   by one of its listed same-label replacements.
Controls: null_edit must differ from the original only in whitespace;
negative must differ.

Functions return None when the pair passes, else the reason it fails.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from engine.contracts import Pair
from engine.needles.edits import EntityOption

_CONJUNCTION = re.compile(r"\b(and|or)\b", re.IGNORECASE)
_DO_SUPPORT = re.compile(r"\b(do|does|did|Do|Does|Did) not ([a-z]+)\b")
_WORD = re.compile(r"[^\W\d_]+")  # letters only


def check_pair(pair: Pair, *, ner_options: Sequence[EntityOption] = ()) -> str | None:
    if pair.control == "null_edit":
        if pair.original == pair.perturbed:
            return "null_edit: perturbed is identical to the original"
        if pair.original.split() != pair.perturbed.split():
            return "null_edit: more than whitespace changed"
        return None
    if pair.control == "negative":
        return None if pair.original != pair.perturbed else "negative: the two documents are identical"
    reason = check_window(pair.original, pair.perturbed, pair.needle_before, pair.needle_after)
    if reason:
        return reason
    return check_sentence(pair.needle, pair.needle_before, pair.needle_after, ner_options=ner_options)


def check_window(original: str, perturbed: str, before: str, after: str) -> str | None:
    if not before:
        return "window: empty needle sentence"
    start = original.find(before)
    if start < 0:
        return "window: the needle sentence is not in the original"
    while start >= 0:
        if perturbed == original[:start] + after + original[start + len(before) :]:
            return None
        start = original.find(before, start + 1)
    return "window: text outside the needle sentence differs"


def check_sentence(
    needle: str, before: str, after: str, *, ner_options: Sequence[EntityOption] = ()
) -> str | None:
    if needle == "none":
        return None if before == after else "none: the needle sentence changed"
    if before == after:
        return f"{needle}: the needle sentence is unchanged"
    if needle == "neg":
        return None if _is_not_insertion(before, after) or _is_do_support(before, after) else (
            "neg: not one 'not' insertion or do-support edit"
        )
    if needle == "con":
        return _check_conjunction_swap(before, after)
    if needle == "ner":
        return _check_entity_swap(before, after, ner_options)
    return f"unknown needle type {needle!r}"


def _is_not_insertion(before: str, after: str) -> bool:
    if len(after) != len(before) + 4:
        return False
    common = 0
    while common < len(before) and before[common] == after[common]:
        common += 1
    for at in range(max(1, common - 4), common + 1):
        if before[:at] + " not" + before[at:] == after and before[at - 1].isalpha() and not (
            at < len(before) and before[at].isalnum()
        ):
            return True
    return False


def _is_do_support(before: str, after: str) -> bool:
    for match in _DO_SUPPORT.finditer(after):
        head, tail = after[: match.start()], after[match.end() :]
        if len(head) + len(tail) >= len(before) or not (before.startswith(head) and before.endswith(tail)):
            continue
        verb = before[len(head) : len(before) - len(tail)]
        do, base = match.group(1).lower(), match.group(2)
        if (
            _WORD.fullmatch(verb)
            and verb[:1].isupper() == match.group(1)[:1].isupper()
            and _agrees(do, verb.lower(), base)
        ):
            return True
    return False


def _agrees(do: str, verb: str, base: str) -> bool:
    """Whether "<do> not <base>" can stand for `verb` (form, not meaning)."""
    if do == "does":  # third person singular present: works, goes, studies, has
        return verb in (base + "s", base + "es") or (verb.endswith("ies") and base == verb[:-3] + "y") or (
            verb == "has" and base == "have"
        )
    if do == "do":  # plural present: the base form itself
        return verb == base
    # did: any past form; an invariant past (put, cut) equals the base, but a
    # third person present ("works") never stands for "did not works"
    return verb != base or not verb.endswith("s")


def _swapped_case(word: str) -> str:
    target = "or" if word.lower() == "and" else "and"
    if len(word) > 1 and word.isupper():
        return target.upper()
    if word[:1].isupper():
        return target.capitalize()
    return target


def _check_conjunction_swap(before: str, after: str) -> str | None:
    parts_before = _CONJUNCTION.split(before)
    parts_after = _CONJUNCTION.split(after)
    if len(parts_before) != len(parts_after):
        return "con: the sentences differ beyond and/or"
    swapped = 0
    for k, (b, a) in enumerate(zip(parts_before, parts_after)):
        if k % 2 == 0:
            if a != b:
                return "con: text other than and/or changed"
        elif a != b:
            if a != _swapped_case(b):
                return f"con: {b!r} became {a!r}"
            swapped += 1
    if swapped != 1:
        return "con: nothing swapped" if not swapped else f"con: {swapped} conjunctions swapped, expected one"
    return None


def _check_entity_swap(before: str, after: str, options: Sequence[EntityOption]) -> str | None:
    if not options:
        return "ner: no entity options to check against"
    for option in options:
        if before[option.start : option.end] != option.text:
            continue
        head, tail = before[: option.start], before[option.end :]
        if not (after.startswith(head) and after.endswith(tail)) or len(head) + len(tail) > len(after):
            continue
        replacement = after[len(head) : len(after) - len(tail)]
        if replacement != option.text and replacement in option.replacements:
            return None
    return "ner: not one listed entity replaced by a listed same-label entity"
