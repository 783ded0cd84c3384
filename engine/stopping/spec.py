"""The ``[stopping]`` table of an experiment config: one Struct per rule.

``kind`` is the tag of a msgspec tagged union, so a table decodes into the
Struct of its rule and each rule has only its own settings (an ``epsilon``
under ``kind = "paper"`` is an unknown key, not a value silently ignored).
The rules themselves are in engine.stopping.rules.

Defaults per kind: ``min_docs`` unset means 100 for ``paper`` (the paper's
minimum) and 1 for ``ci`` (a CS is valid from the first document). ``max_docs``
unset means no cap beyond the corpus. ``resolved_min_docs`` is what a rule
really needs at least: ``n`` for fixed, at least ``window + 1`` for paper.

Every Struct validates on construction and on decoding (``__post_init__``),
raising ConfigError that names the key and the expected range; decoding keeps
msgspec's key path (``... - at `$.stopping```).
"""

from __future__ import annotations

from typing import ClassVar, Literal

import msgspec

from engine.contracts import ConfigError

CsMethod = Literal["hedged", "eb"]

PAPER_DEFAULT_MIN_DOCS = 100
CI_DEFAULT_MIN_DOCS = 1


def _config_error(key: str, expected: str, got: object) -> ConfigError:
    return ConfigError(f"{key}: expected {expected}, got {got!r}")


class _Spec(msgspec.Struct, frozen=True, forbid_unknown_fields=True, kw_only=True, tag_field="kind"):
    kind: ClassVar[str]

    def __post_init__(self) -> None:
        self.validate()

    def validate(self, prefix: str = "stopping") -> None:
        raise NotImplementedError

    @property
    def resolved_min_docs(self) -> int:
        """The fewest documents after which this rule can stop.

        The scheduler may dispatch that many at once: they are needed for sure.
        """
        raise NotImplementedError

    @property
    def doc_cap(self) -> int | None:
        """Most documents a cell can consume (for dry-run upper bounds); None: unbounded."""
        raise NotImplementedError


class FixedSpec(_Spec, frozen=True, tag="fixed"):
    """Exactly ``n`` documents per cell."""

    kind: ClassVar[str] = "fixed"
    n: int = 100

    def validate(self, prefix: str = "stopping") -> None:
        if self.n < 1:
            raise _config_error(_key(prefix, "n"), "an integer >= 1 (documents per cell)", self.n)

    @property
    def max_docs(self) -> int | None:  # the rules' shared bookkeeping reads it
        return None

    @property
    def resolved_min_docs(self) -> int:
        return self.n

    @property
    def doc_cap(self) -> int | None:
        return self.n


class _BoundedSpec(_Spec, frozen=True):
    min_docs: int | None = None  # None: the rule's default
    max_docs: int | None = None  # None: no cap

    def _validate_bounds(self, prefix: str) -> None:
        if self.min_docs is not None and self.min_docs < 1:
            raise _config_error(_key(prefix, "min_docs"), "an integer >= 1", self.min_docs)
        if self.max_docs is not None:
            if self.max_docs < 1:
                raise _config_error(_key(prefix, "max_docs"), "an integer >= 1", self.max_docs)
            if self.max_docs < self.resolved_min_docs:
                raise _config_error(
                    _key(prefix, "max_docs"),
                    f"an integer >= {self.resolved_min_docs} (the fewest documents this "
                    f"{self.kind} rule can stop after, from min_docs/window)",
                    self.max_docs,
                )

    @property
    def doc_cap(self) -> int | None:
        return self.max_docs


class PaperSpec(_BoundedSpec, frozen=True, tag="paper"):
    """The reference paper's rule: the running mean settled over ``window`` documents."""

    kind: ClassVar[str] = "paper"
    window: int = 10  # documents the running mean must be settled over
    tolerance: float = 1.0  # allowed movement of the running mean, points

    def validate(self, prefix: str = "stopping") -> None:
        if self.window < 1:
            raise _config_error(_key(prefix, "window"), "an integer >= 1 (documents)", self.window)
        if not (0.0 <= self.tolerance < 100.0):
            raise _config_error(_key(prefix, "tolerance"), "a number of points in [0, 100)", self.tolerance)
        self._validate_bounds(prefix)

    @property
    def resolved_min_docs(self) -> int:
        floor = PAPER_DEFAULT_MIN_DOCS if self.min_docs is None else self.min_docs
        return max(floor, self.window + 1)  # m_{n-window} must exist


class CiSpec(_BoundedSpec, frozen=True, tag="ci"):
    """An anytime-valid confidence sequence narrower than ``epsilon`` points."""

    kind: ClassVar[str] = "ci"
    epsilon: float = 2.0  # target half-width, points
    alpha: float = 0.05  # family-wise miscoverage over all cells
    method: CsMethod = "hedged"  # which confidence sequence

    def validate(self, prefix: str = "stopping") -> None:
        if not (0.0 < self.epsilon < 50.0):
            raise _config_error(_key(prefix, "epsilon"), "a half-width in points in (0, 50)", self.epsilon)
        if not (0.0 < self.alpha < 1.0):
            raise _config_error(_key(prefix, "alpha"), "a miscoverage probability in (0, 1)", self.alpha)
        self._validate_bounds(prefix)

    @property
    def resolved_min_docs(self) -> int:
        return CI_DEFAULT_MIN_DOCS if self.min_docs is None else self.min_docs


StoppingSpec = PaperSpec | FixedSpec | CiSpec
SPEC_TYPES: dict[str, type[_Spec]] = {"paper": PaperSpec, "fixed": FixedSpec, "ci": CiSpec}


def settings_of(kind: str) -> tuple[str, ...]:
    """The keys a ``[stopping]`` table of this kind accepts (for error messages)."""
    return ("kind", *SPEC_TYPES[kind].__struct_fields__)


def _key(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name
