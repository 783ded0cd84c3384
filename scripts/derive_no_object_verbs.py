"""Derive engine/corpus/no_object_verbs.json from WordNet 3.0: verbs that take no object and no complement.

    apt-get install wordnet-base          # Debian's WordNet 3.0 database, /usr/share/wordnet
    python3 scripts/derive_no_object_verbs.py [WORDNET_DIR] > engine/corpus/no_object_verbs.json

WordNet lists, per verb sense, the sentence frames it takes. A verb of the
table has, in every sense, only frames where nothing but a preposition's
phrase or a to-infinitive follows it (NO_OBJECT_FRAMES: "Something ----s",
"Somebody ----s PP", "Somebody ----s to INFINITIVE"): "rise", "soar",
"arrive"; not "grow" ("grow tomatoes"), "remain" ("remain members"), "die"
("die laughing"). A capitalised word right after such a verb cannot be its
object (engine.corpus.run_on_headings: "Harbour dues to fall Kinsale expects
...": a headline run into a sentence).
Run once; the output is committed. WordNet 3.0 Copyright 2006 by Princeton
University; its licence is quoted in engine/needles/binomial_list.py.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from derive_object_control_verbs import frames_by_lemma

# 1 "Something ----s", 2 "Somebody ----s", 3 "It is ----ing", 4 "Something is ----ing PP", 12 "Something ----s to
# somebody", 13 "Somebody ----s on something", 22 "Somebody ----s PP", 23 "Somebody's (body part) ----s",
# 27 "Somebody ----s to somebody", 28 "Somebody ----s to INFINITIVE"
NO_OBJECT_FRAMES = frozenset({1, 2, 3, 4, 12, 13, 22, 23, 27, 28})


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    frames = frames_by_lemma(root / "data.verb")
    verbs = sorted(lemma for lemma, numbers in frames.items() if numbers <= NO_OBJECT_FRAMES and lemma.isalpha())
    source = "WordNet 3.0 verb frames 1-4, 12, 13, 22, 23, 27, 28 only, scripts/derive_no_object_verbs.py"
    print(json.dumps({"source": source, "VERBS": verbs}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
