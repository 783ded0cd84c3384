"""Rating scales: a property of a prompt, stored raw and rescaled to 0–100.

A scale is a closed interval [low, high]. Integer scales (0–100, 1–7,
−3…3) expect whole numbers from a judge; continuous ones (0–1, the 0–5 STS
scale) accept decimals. Every raw score is kept as the judge gave it and
mapped linearly onto 0–100 for comparison across prompts.

Canonical names: "low-high" ("0-100", "1-7", "0-1", "0-5"), and "low..high"
when low is negative ("-3..3"), so that the name never reads as a negative
upper bound.
"""

from __future__ import annotations

import re

import msgspec

from engine.contracts import ConfigError


class Scale(msgspec.Struct, frozen=True, kw_only=True):
    low: float
    high: float
    integer: bool  # the canonical answer form is a whole number

    @property
    def name(self) -> str:
        low, high = _number_text(self.low), _number_text(self.high)
        return f"{low}..{high}" if self.low < 0 else f"{low}-{high}"

    def contains(self, raw: float) -> bool:
        return self.low <= raw <= self.high

    def rescale(self, raw: float) -> float:
        """Linear map of [low, high] onto [0, 100]."""
        return 100.0 * (raw - self.low) / (self.high - self.low)

    def answer_regex(self) -> str:
        """A regex matching exactly the canonical answer form (for guided decoding)."""
        if self.integer:
            return _integer_range_regex(int(self.low), int(self.high))
        if (self.low, self.high) == (0.0, 1.0):
            return r"(0(\.[0-9]{1,3})?|1(\.0{1,3})?)"
        if self.low == 0 and float(self.high).is_integer() and 1 <= self.high <= 9:
            top = int(self.high)
            return rf"([0-{top - 1}](\.[0-9]{{1,2}})?|{top}(\.0{{1,2}})?)"
        # Any other continuous scale: plain decimal numbers; range checked by the parser.
        return r"-?[0-9]{1,6}(\.[0-9]{1,3})?"


BUILTIN_SCALES: dict[str, Scale] = {
    "0-100": Scale(low=0, high=100, integer=True),
    "1-7": Scale(low=1, high=7, integer=True),
    "-3..3": Scale(low=-3, high=3, integer=True),
    "0-1": Scale(low=0, high=1, integer=False),
    "0-5": Scale(low=0, high=5, integer=False),
}

_SCALE_TEXT = re.compile(r"^\s*([-−]?\d+(?:\.\d+)?)\s*(?:\.\.|…|-|–|—|to)\s*([-−]?\d+(?:\.\d+)?)\s*$")


def parse_scale(text: str, *, where: str = "scale") -> Scale:
    """A scale from its name: a built-in ("0-100", "1-7", "-3..3", "0-1",
    "0-5", also written with "..", "…", "–" or "to") or any "low-high" with
    low < high (integer when both bounds are whole numbers)."""
    match = _SCALE_TEXT.match(text)
    if match is None:
        raise ConfigError(
            f"{where}: {text!r} is not a scale; expected 'low-high' such as "
            f"{', '.join(repr(name) for name in BUILTIN_SCALES)}"
        )
    low, high = (float(part.replace("−", "-")) for part in match.groups())
    if not low < high:
        raise ConfigError(f"{where}: {text!r} needs low < high")
    for scale in BUILTIN_SCALES.values():
        if (scale.low, scale.high) == (low, high):
            return scale
    return Scale(low=low, high=high, integer=low.is_integer() and high.is_integer())


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _integer_range_regex(low: int, high: int) -> str:
    """Exactly the integers in [low, high] in plain decimal form. Small
    ranges are spelled out, longest first so that an unanchored engine
    prefers "100" over "10"; wide ranges fall back to a digit pattern and
    the parser's range check."""
    if (low, high) == (0, 100):
        return "(100|[1-9]?[0-9])"
    if high - low > 200:
        return "(-?[1-9][0-9]*|0)"
    values = sorted(range(low, high + 1), key=lambda value: (-len(str(value)), value))
    return "(" + "|".join(str(value) for value in values) + ")"
