"""Synthetic result rows with planted effects: a known truth for validating
the analysis (tests, the report benchmark) without running any judge.

A simulated judge scores an item as
    needle mean − early penalty[needle]·[i < j] + rand leniency·[rand hay, k > 1] + noise,
rounded and clipped to 0–100. The noise of an item is drawn from a
generator keyed by (seed, judge, needle, position, hay), except at (0, 0)
where orig and rand are the same input and share it, so a deterministic
judge is perfectly stable there.
"""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import numpy as np

from engine.contracts import ResultRow
from engine.seeding import item_rng


class PlantedEffects(msgspec.Struct, frozen=True, kw_only=True):
    needle_means: dict[str, float] = msgspec.field(default_factory=lambda: {"none": 97.0, "con": 80.0, "ner": 72.0, "neg": 62.0})
    early_penalty: dict[str, float] = {}  # points subtracted when the needle is early (i < j)
    rand_leniency: float = 0.0  # points added under rand hay (k > 1)
    noise_sd: float = 6.0
    order_shift: float = 0.0  # points added when Documents 1 and 2 are swapped
    order_noise_sd: float = 0.0  # extra noise of the swapped judgment
    null_edit_mean: float = 97.0
    negative_mean: float = 4.0
    control_sd: float = 2.0
    refusal_rate: dict[str, float] = {}  # "needle/hay" -> share refused
    levels: float = 1.0  # scores are rounded to multiples of this


class SyntheticJudge(msgspec.Struct, frozen=True, kw_only=True):
    name: str
    prompt_id: str = "bands"
    prompt_version: str = "v1-synth"
    effects: PlantedEffects = PlantedEffects()


def _score(mu: np.ndarray | float, z: np.ndarray, effects: PlantedEffects) -> np.ndarray:
    raw = np.asarray(mu) + effects.noise_sd * z
    return np.clip(np.round(raw / effects.levels) * effects.levels, 0.0, 100.0)


def synthetic_rows(
    judges: list[SyntheticJudge],
    *,
    size: int = 5,
    docs_per_cell: int = 40,
    swapped_docs: int = 5,
    controls: int = 30,
    seed: int = 0,
    run_id: str = "synthetic",
) -> list[ResultRow]:
    """Rows for every judge × needle × hay × (i, j) in 0..size−1, plus order
    swaps of the first `swapped_docs` documents of each cell and `controls`
    null-edit and negative control items per judge."""
    rows: list[ResultRow] = []
    for judge in judges:
        fx = judge.effects
        common = dict(run_id=run_id, judge=judge.name, adapter="fake", model=f"sim-{judge.name}",
                      prompt_id=judge.prompt_id, prompt_version=judge.prompt_version, scale="0-100")  # fmt: skip
        for needle, base in fx.needle_means.items():
            for hay in ("orig", "rand"):
                refusal = fx.refusal_rate.get(f"{needle}/{hay}", 0.0)
                for i in range(size):
                    for j in range(size):
                        same_input = i == 0 and j == 0
                        rng = item_rng(seed, "synthetic", judge.name, needle, i, j, "same" if same_input else hay)
                        z = rng.standard_normal(docs_per_cell)
                        mu = base - fx.early_penalty.get(needle, 0.0) * (i < j) + fx.rand_leniency * (hay == "rand" and not same_input)
                        scores = _score(mu, z, fx)
                        refused = item_rng(seed, "refusal", judge.name, needle, hay, i, j).random(docs_per_cell) < refusal
                        swap_z = item_rng(seed, "swap", judge.name, needle, hay, i, j).standard_normal(docs_per_cell)
                        for d in range(docs_per_cell):
                            item = dict(common, needle=needle, hay=hay, i=i, j=j, doc_id=f"doc{d:04d}", doc_index=d,
                                        hay_doc_id=f"doc{(d + 7) % 997:04d}" if hay == "rand" else None)  # fmt: skip
                            if refused[d]:
                                rows.append(ResultRow(**item, status="refused", raw_text="I cannot help with that.", completion_tokens=6))
                                continue
                            s = float(scores[d])
                            rows.append(ResultRow(**item, score=s, raw_score=s, raw_text=f"Score: {s:g}", completion_tokens=4))
                            if d < swapped_docs:
                                swapped = float(np.clip(np.round(s + fx.order_shift + fx.order_noise_sd * swap_z[d]), 0, 100))
                                rows.append(ResultRow(**item, order="21", score=swapped, raw_score=swapped,
                                                      raw_text=f"Score: {swapped:g}", completion_tokens=4))  # fmt: skip
        for control, mean in (("null_edit", fx.null_edit_mean), ("negative", fx.negative_mean)):
            z = item_rng(seed, "control", judge.name, control).standard_normal(controls)
            for d in range(controls):
                s = float(np.clip(np.round(mean + fx.control_sd * z[d]), 0, 100))
                rows.append(ResultRow(**common, needle="none", hay="orig", i=2, j=2, doc_id=f"doc{d:04d}", doc_index=d,
                                      control=control, score=s, raw_score=s, raw_text=f"Score: {s:g}", completion_tokens=4))  # fmt: skip
    return rows


def write_run(run_dir: Path, rows: list[ResultRow], manifest: dict | None = None) -> Path:
    """Write rows as results.jsonl (+ manifest.json) the way an exported run looks."""
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    encoder = msgspec.json.Encoder()
    with (run_dir / "results.jsonl").open("wb") as handle:
        for row in rows:
            handle.write(encoder.encode(row) + b"\n")
    if manifest is not None:
        (run_dir / "manifest.json").write_text(json.dumps(manifest, indent=2), encoding="utf-8")
    return run_dir


EARLY_PENALTY_NEG = 5.0
RAND_LENIENCY = 6.0


def reference_judges() -> list[SyntheticJudge]:
    """Two simulated judges with known truth:

    - `planted`: a sound instrument with a 5-point early-position penalty
      for neg only (so the early-positionality bias of neg is +5, of every
      other needle 0) and a 6-point leniency under rand hay.
    - `faulty`: no position or hay effect, but it fails the instrument
      checks: order-sensitive (+8 when swapped), null edits scored 80,
      negatives scored 50, 20% refusals on ner/rand, scores on multiples of 10.
    """
    return [
        SyntheticJudge(
            name="planted", effects=PlantedEffects(early_penalty={"neg": EARLY_PENALTY_NEG}, rand_leniency=RAND_LENIENCY)
        ),
        SyntheticJudge(
            name="faulty",
            effects=PlantedEffects(
                order_shift=8.0, order_noise_sd=4.0, null_edit_mean=80.0, negative_mean=50.0, control_sd=8.0,
                refusal_rate={"ner/rand": 0.2}, levels=10.0,
            ),  # fmt: skip
        ),
    ]
