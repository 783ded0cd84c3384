"""Derive engine/needles/communication_verbs.json from WordNet 3.0: verbs of saying, judging and urging.

    apt-get install wordnet-base          # Debian's WordNet 3.0 database, /usr/share/wordnet
    python3 scripts/derive_communication_verbs.py [WORDNET_DIR] > engine/needles/communication_verbs.json

The neg needle refuses a root that reports what someone said (engine.needles.negation):
"not" on it denies only the saying, while the document gives what was said
beside it (a quotation, a "calling it ..." clause, the next sentence), which
the reading protocol marks W. The hand list REPORTING_VERBS holds the verbs
of saying proper; news reports speech with many more ("did not speak with
fondness about", "did not chastise", "did not defend the order, calling it
...", "did not call for", "do not write: ..."; issue 27, the read of short
news articles no rule was tuned on: 8 of its 9 neg defects).

The table is the seed verbs below and every verb whose first (most
frequent) WordNet sense is a troponym, at any depth, of a seed's first
sense ("chastise" < "criticize", "lobby" < "advocate", "beg" < "call_for"),
one word or a verb and its particle ("call_for", "speak_out"). WordNet's
whole verb.communication class is not used: it holds acts done by saying
("approve the budget", "sign the bill", "record an album", "stage a coup"),
whose negation is a clean claim. Run once; the output is committed. WordNet
3.0 Copyright 2006 by Princeton University; its licence is quoted in
engine/needles/binomial_list.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

# saying, talking, judging aloud, urging and asking for: the first senses these name are the roots
SEEDS = (
    "say speak talk state express voice write criticize praise condemn blame accuse defend advocate "
    "urge warn call_for "
    # session 25: verbs of reporting the first seeds missed, whose first senses sit under "inform", "declare" or
    # nothing ("He did not complain of ...", "He did not describe, according to police notes, attending ...":
    # two of the four neg defects of the set-aside read of news part 2). "inform" itself is not a seed: its
    # troponyms include acts that are claims ("introduce", "issue", "teach", "train", "translate")
    "complain explain describe admit insist claim mention lament report announce narrate tell thank boast disclose"
).split()


def synsets(path: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    """(offset -> its verb hypernyms' offsets, offset -> its lemmas), from data.verb."""
    hypernyms: dict[str, list[str]] = {}
    lemmas: dict[str, list[str]] = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):
            continue  # the licence header
        fields = line.split(" | ")[0].split()
        offset, count = fields[0], int(fields[3], 16)
        lemmas[offset] = [fields[4 + 2 * k].lower() for k in range(count)]
        k = 4 + 2 * count
        pointers = int(fields[k])
        k += 1
        hypernyms[offset] = []
        for _ in range(pointers):
            symbol, target, pos = fields[k : k + 3]
            k += 4
            if symbol == "@" and pos == "v":
                hypernyms[offset].append(target)
    return hypernyms, lemmas


def first_senses(path: Path) -> dict[str, str]:
    """lemma -> the offset of its first (most frequent) sense, from index.verb."""
    out = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):
            continue
        fields = line.split()
        count = int(fields[2])
        out[fields[0]] = fields[-count]
    return out


def communication_verbs(wordnet: Path) -> list[str]:
    hypernyms, _ = synsets(wordnet / "data.verb")
    first = first_senses(wordnet / "index.verb")
    roots = {first[seed] for seed in SEEDS}

    def under_a_root(offset: str) -> bool:
        """`offset` is a root or a troponym of one at any depth (its hypernyms, walked once each)."""
        seen, stack = {offset}, [offset]
        while stack:
            current = stack.pop()
            if current in roots:
                return True
            for hypernym in hypernyms.get(current, ()):
                if hypernym not in seen:
                    seen.add(hypernym)
                    stack.append(hypernym)
        return False

    return sorted(lemma for lemma, offset in first.items() if lemma.count("_") <= 1 and "-" not in lemma and under_a_root(offset))


def main() -> None:
    wordnet = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("/usr/share/wordnet")
    json.dump({"COMMUNICATION_VERBS": communication_verbs(wordnet)}, sys.stdout, indent=0)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
