"""The stages import downwards only and no product module imports in a circle
(ARCHITECTURE.md "Layers"): import-linter's contracts in .importlinter, checked
on the real tree, and shown to fail on a planted circle and a planted upward
import in a copy of it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("engine", "adapters", "simulation", "analysis")
LINT = "import sys; from importlinter.cli import lint_imports; sys.exit(lint_imports(no_cache=True, no_logo=True))"


def lint(root: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", LINT], cwd=root, env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        capture_output=True, text=True, timeout=120,
    )


@pytest.fixture
def tree_copy(tmp_path: Path) -> Path:
    """The product's Python sources and the contracts, copied (no data files)."""
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("data", "__pycache__", "*.toml", "*.md"))
    shutil.copy(ROOT / ".importlinter", tmp_path / ".importlinter")
    return tmp_path


def test_the_tree_keeps_every_contract() -> None:
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "2 kept, 0 broken" in result.stdout


def test_a_planted_circle_breaks_the_acyclic_contract(tree_copy: Path) -> None:
    # engine.needles.oracle <-> engine.needles.negation: same layer, a circle
    oracle = tree_copy / "engine" / "needles" / "oracle.py"
    oracle.write_text(oracle.read_text() + "\nfrom engine.needles import negation  # planted\n")
    negation = tree_copy / "engine" / "needles" / "negation.py"
    negation.write_text(negation.read_text() + "\nfrom engine.needles import oracle  # planted\n")
    result = lint(tree_copy)
    assert result.returncode == 1
    assert "No import circles, at any depth of any product package BROKEN" in result.stdout
    assert "engine.needles" in result.stdout


def test_a_planted_upward_import_breaks_the_layers(tree_copy: Path) -> None:
    # the cache (layer 2) reaching up into the run (layer 6)
    store = tree_copy / "engine" / "cache" / "store.py"
    store.write_text(store.read_text() + "\nfrom engine.run import results  # planted\n")
    result = lint(tree_copy)
    assert result.returncode == 1
    assert "Layers: each stage imports only from the stages below it BROKEN" in result.stdout
    assert "engine.cache.store -> engine.run.results" in result.stdout
