"""Derive the con rule's fixed resource, engine/needles/binomial_list.py, from WordNet 3.0.

    apt-get install wordnet-base          # Debian's WordNet 3.0 database, /usr/share/wordnet
    python3 scripts/derive_binomials.py [WORDNET_DIR] > engine/needles/binomial_list.py

Run once; the output is committed, so preparing a corpus reads no corpus-wide
count and a document's con needle does not depend on the other documents
prepared with it (issue 27, session 10). Two tables come out:

- BINOMIALS: "a and b" / "a or b", the word on each side of the conjunction
  inside a WordNet lemma written in lower case (so no proper name: "Bosnia and
  Herzegovina", "Laurel and Hardy" are left out): the whole lemma when it is
  just the pair ("bread_and_butter", "more_or_less"), else the pair inside a
  longer lemma when neither side is a function word ("use_of_goods_and_services"
  gives "goods and services"; "by_hook_or_by_crook" gives nothing);
- ANTONYM_NOUNS: pairs of lower-case noun lemmas WordNet marks as direct
  antonyms ("man"/"woman", "buyer"/"seller"): a coordination of the two as
  bare plurals names a whole class ("the men and women of the fleet");
- OF_TERMS: (head, object) of the lower-case noun lemmas "head_of_object"
  or "head_of_the_object" ("economy_of_scale", "balance_of_power",
  "freedom_of_speech", "freedom_of_the_press"): a term of
  a field, so a coordination that continues its object ("economies of
  scale and scope") extends the term, and "or" names no term.

The bundled Wikipedia sample (engine/data/wiki_sample.json) was tried as a
second source with the old corpus count (pairs in >= 3 articles, never
reversed): 12 pairs, most of them no binomial ("season and the", "towns and
cities", "directed and produced"); it is not used. Session 18 looked for a
source of the legal and fixed pairs WordNet lacks ("aid and comfort") and
found none to use: Debian's dict-gcide (GCIDE, GPL) has 210 "X and Y"
headwords, not that one; the pairs of the news and speech corpora's tuning
parts found in >= 3 documents and never reversed are 351, 7 of them in
WordNet and most free coordinations ("russia and china", "three or four").
"""

from __future__ import annotations

import sys
from pathlib import Path

# words that make no binomial on their own side of a conjunction inside a longer lemma
FUNCTION_WORDS = frozenset(
    "a an the of in on at by to for from with as all its it his her their one two day".split()
)
DATA_FILES = ("data.noun", "data.verb", "data.adj", "data.adv")
# the suffixes that make a relational adjective of a noun ("spirit-ual", "econom-ic", "custom-ary")
RELATIONAL_SUFFIXES = ("al", "ic", "ary", "ar", "an")


def synsets(path: Path):
    """(offset, words, pointers) of each synset line of one WordNet data file."""
    for line in path.read_text(encoding="latin-1").splitlines():
        if not line or line.startswith("  "):
            continue  # the licence header
        fields = line.split(" | ")[0].split()
        offset, count = fields[0], int(fields[3], 16)
        words = [fields[4 + 2 * k] for k in range(count)]
        rest = fields[4 + 2 * count :]
        pointers = [tuple(rest[1 + 4 * k : 5 + 4 * k]) for k in range(int(rest[0]))]
        yield offset, words, pointers


def main() -> int:
    root = Path(sys.argv[1] if len(sys.argv) > 1 else "/usr/share/wordnet")
    pairs: set[str] = set()
    for name in DATA_FILES:
        for _offset, words, _pointers in synsets(root / name):
            for word in words:
                word = word.split("(")[0]  # adjective markers: "cut_and_dried(p)"
                if word != word.lower():
                    continue  # a proper name
                tokens = word.replace(",", "").split("_")
                for k, token in enumerate(tokens):
                    if token not in ("and", "or") or k == 0 or k == len(tokens) - 1:
                        continue
                    a, b = tokens[k - 1], tokens[k + 1]
                    if not (a.isalpha() and b.isalpha()) or len(a) < 2 or len(b) < 2 or a == b:
                        continue
                    if len(tokens) > 3 and (a in FUNCTION_WORDS or b in FUNCTION_WORDS):
                        continue
                    pairs.add(f"{a} {token} {b}")
    nouns = {offset: (words, pointers) for offset, words, pointers in synsets(root / "data.noun")}
    antonyms: set[tuple[str, str]] = set()
    for words, pointers in nouns.values():
        for symbol, target, pos, source_target in pointers:
            if symbol != "!" or pos != "n":
                continue
            a = words[int(source_target[:2], 16) - 1]
            b = nouns[target][0][int(source_target[2:], 16) - 1]
            if a == a.lower() and b == b.lower() and "_" not in a + b and a != b:
                antonyms.add(tuple(sorted((a, b))))
    of_terms: set[tuple[str, str]] = set()
    for words, _pointers in nouns.values():
        for word in words:
            # "freedom_of_the_press" as ("freedom", "press"): the article is no part of the pair a coordination continues
            parts = [p for k, p in enumerate(word.split("_")) if not (k == 2 and p == "the")]
            head, of, obj = (parts + ["", "", ""])[:3]
            if len(parts) == 3 and of == "of" and head.isalpha() and obj.isalpha() and word == word.lower():
                of_terms.add((head, obj))
    relational = relational_adjectives(root, nouns)
    print(HEADER)
    print("BINOMIALS = frozenset(")
    print("    (")
    for pair in sorted(pairs):
        print(f'        "{pair}",')
    print("    )")
    print(")  # fmt: skip")
    print("ANTONYM_NOUNS = frozenset(")
    print("    (")
    for a, b in sorted(antonyms):
        print(f'        ("{a}", "{b}"),')
    print("    )")
    print(")  # fmt: skip")
    print("OF_TERMS = frozenset(")
    print("    (")
    for head, obj in sorted(of_terms):
        print(f'        ("{head}", "{obj}"),')
    print("    )")
    print(")  # fmt: skip")
    print("RELATIONAL_ADJECTIVES = frozenset(")
    print("    (")
    for word in sorted(relational):
        print(f'        "{word}",')
    print("    )")
    print(")  # fmt: skip")
    return 0


def relational_adjectives(root: Path, nouns: dict) -> set[str]:
    """The adjectives with a pertainym noun, or with a relational suffix and a
    derivationally related noun that is their stem."""
    out: set[str] = set()
    for _offset, words, pointers in synsets(root / "data.adj"):
        for k, word in enumerate(words, 1):
            word = word.split("(")[0]
            if not word.isalpha() or word != word.lower():
                continue
            for symbol, target, pos, source_target in pointers:
                source, goal = int(source_target[:2], 16), int(source_target[2:], 16)
                if pos != "n" or source not in (0, k):
                    continue
                if symbol == "\\":
                    out.add(word)
                elif symbol == "+" and goal and word.endswith(RELATIONAL_SUFFIXES):
                    noun = nouns[target][0][goal - 1].lower()
                    stem = noun[:-1] if noun[-1:] in ("e", "y", "s") else noun
                    if len(noun) < len(word) and len(stem) >= 3 and word.startswith(stem):
                        out.add(word)
    return out


HEADER = '''"""The con rule's fixed WordNet tables: binomials, antonym nouns, "X of Y" terms
(engine.needles.coordination_joint) and relational adjectives (engine.needles.coordination_scope).

Generated by scripts/derive_binomials.py from WordNet 3.0 (Debian's
wordnet-base); do not edit by hand, run the script again. The list is fixed:
preparing a corpus reads no corpus-wide count, so a document's con needle does
not depend on which other documents are prepared with it.

WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved.
Permission to use, copy, modify and distribute this software and database and
its documentation for any purpose and without fee or royalty is hereby
granted, provided that you agree to comply with the following copyright
notice and statements, including the disclaimer, and that the same appear on
ALL copies of the software, database and documentation, including
modifications that you make for internal use or for distribution.
THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES
NO REPRESENTATIONS OR WARRANTIES, EXPRESS OR IMPLIED. BY WAY OF EXAMPLE, BUT
NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES OF
MERCHANTABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE
LICENSED SOFTWARE, DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY
PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS. The name of Princeton
University or Princeton may not be used in advertising or publicity
pertaining to distribution of the software and/or database. Title to
copyright in this software, database and any associated documentation shall
at all times remain with Princeton University and LICENSEE agrees to
preserve same.
"""

from __future__ import annotations
'''

if __name__ == "__main__":
    sys.exit(main())
