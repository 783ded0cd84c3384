"""A package's public names, imported on first use (PEP 562).

Each stage's `__init__` names what other stages may use without importing its
modules up front: `import engine.corpus.prepare` must not load spaCy, and
`needlejudge --help` loads no stage at all (tests/test_cli.py).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, exports: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`: `exports` maps each public
    name to the submodule (relative to `package`) that defines it."""

    def __getattr__(name: str) -> Any:
        try:
            module = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        return getattr(importlib.import_module(f"{package}.{module}"), name)

    def __dir__() -> list[str]:
        return sorted(exports)

    return __getattr__, __dir__
