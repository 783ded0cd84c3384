"""Derive engine/corpus/object_control_verbs.json from WordNet 3.0: verbs that take an object and a to-infinitive.

    apt-get install wordnet-base          # Debian's WordNet 3.0 database, /usr/share/wordnet
    python3 scripts/derive_object_control_verbs.py [WORDNET_DIR] > engine/corpus/object_control_verbs.json

WordNet lists, per verb sense, the sentence frames it takes. Frame 24 is
"Somebody ----s somebody to INFINITIVE" ("urge", "force", "allow"). A
verb of the table has a sense with frame 24, so a bare verb right after
its object is a lost "to" ("would urge the town pay for ..."). The verbs
that may also take a bare infinitive after their object are left out
(BARE_INFINITIVE_VERBS: causation and perception, "make", "let", "help",
"have", "see", "hear", "watch", ...; WordNet's frame 25, "Somebody ----s
somebody INFINITIVE", also names "allow", "permit", "cause", "get", which
take "to" today, so it is not used). WordNet gives "enable" no frame 24
(its senses list frames 8 to 10 only): ADDED holds it. THAT_CLAUSE_VERBS
are those of the table with frame 26, "Somebody ----s that CLAUSE" ("say",
"think"): after them a noun and a verb may be a finite clause.
Run once; the output is committed (engine.corpus.lost_words reads it).
WordNet 3.0 Copyright 2006 by Princeton University; its licence is quoted
in engine/needles/binomial_list.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TO_INFINITIVE_FRAME = 24
THAT_CLAUSE_FRAME = 26  # "Somebody ----s that CLAUSE": "say", "think", "urge"
BARE_INFINITIVE_VERBS = frozenset(
    {"make", "let", "help", "have", "see", "hear", "watch", "feel", "notice", "observe", "bid", "dare", "can"}
)
ADDED = frozenset({"enable"})


def frames_by_lemma(path: Path) -> dict[str, set[int]]:
    """{lemma: the frame numbers of its senses} from WordNet's data.verb."""
    frames: dict[str, set[int]] = {}
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):
            continue  # the licence header
        fields = line.split(" | ")[0].split()
        count = int(fields[3], 16)
        words = [fields[4 + 2 * k] for k in range(count)]
        at = 4 + 2 * count
        at += 1 + 4 * int(fields[at])  # the pointers
        for k in range(int(fields[at])):
            _, frame, word = fields[at + 1 + 3 * k : at + 4 + 3 * k]
            for n in [int(word, 16) - 1] if int(word, 16) else range(count):
                frames.setdefault(words[n].lower(), set()).add(int(frame))
    return frames


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    frames = frames_by_lemma(root / "data.verb")
    verbs = sorted(
        {lemma for lemma, numbers in frames.items() if TO_INFINITIVE_FRAME in numbers and lemma.isalpha()}
        - BARE_INFINITIVE_VERBS
        | ADDED
    )
    # of those, the verbs that also take a that-clause ("said the crews go out" may be a finite clause, mistagged)
    clause = sorted(lemma for lemma in verbs if THAT_CLAUSE_FRAME in frames.get(lemma, ()))
    source = "WordNet 3.0 frames 24 and 26, scripts/derive_object_control_verbs.py"
    print(json.dumps({"source": source, "VERBS": verbs, "THAT_CLAUSE_VERBS": clause}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
