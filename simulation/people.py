"""Simulated people for the quickstart's "People" section: stand-ins that rate
a label sample the way the simulated judge's planted truth says, with no
position bias, more noise than a model and the habit of rounding to fives.

Their labels are SIMULATED and marked so in every record (`simulated: true`)
and in the report: they show what the analysis does, not how good a judge is.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from engine.labelling.log import LabelRecord
from engine.labelling.sample import LabelItem
from engine.seeding import item_seed
from simulation.judge import ItemInfo, SimJudgeParams, _normal_and_uniform, mean_score

# what the simulated people think the pairs are worth: the judge's planted
# needle means, without its early-position penalty, its rand-hay leniency or
# its length slope (people are not fooled by where the needle sits)
PEOPLE = SimJudgeParams(seed=7, early_penalty=0.0, rand_hay_leniency=0.0, length_slope=0.0, noise_sd=8.0, doc_sd=3.0)
LABELLERS = ("simulated-person-1", "simulated-person-2")


def rate(item: LabelItem, labeller: str, params: SimJudgeParams = PEOPLE) -> float:
    info = ItemInfo(needle=item.needle, hay=item.hay, i=item.i, j=item.j, doc_id=item.doc_id)
    noise, _ = _normal_and_uniform(item_seed(params.seed, "sim-person", labeller, item.item_id))
    return float(min(max(5 * round((mean_score(params, info) + params.noise_sd * noise) / 5), 0), 100))


def simulated_labels(sample: Sequence[LabelItem], labellers: Sequence[str] = LABELLERS) -> list[LabelRecord]:
    """Every overlap item rated by each labeller; the others by one, in turn."""
    records, at, turn = [], time.time(), 0
    for item in sample:
        who = list(labellers) if item.overlap else [labellers[turn % len(labellers)]]
        turn += not item.overlap
        for name in who:
            value = rate(item, name)
            records.append(LabelRecord(item_id=item.item_id, doc_id=item.doc_id, needle=item.needle, hay=item.hay, i=item.i,
                                       j=item.j, replicate=item.replicate, labeller=name, label=value, raw=value,
                                       scale="0-100", at=at, inclusion=item.inclusion, simulated=True))
    return records
