"""The con needle (engine.needles.conjunctions) on real spaCy parses (the `nlp` session fixture).

The skip cases pin the defect classes of issue 14, each with a sentence from
the bundled Wikipedia sample or the issue's own example."""

from __future__ import annotations

import pytest

from engine.needles.conjunctions import FIXED_PHRASES, conjunction_refusals
from needle_helpers import any_shape_swap, con_refusal, edited, first_sentence


@pytest.mark.parametrize(
    ("text", "expected", "rule"),
    [
        ("The team won the league and the cup.", "The team won the league or the cup.", "con:and->or"),
        ("The delegates came by bus or by train to the talks.", "The delegates came by bus and by train to the talks.", "con:or->and"),
        ("The ships sailed OR sank.", "The ships sailed AND sank.", "con:or->and"),  # casing kept
        ("Marks & Spencer sells food and clothing in London.", "Marks & Spencer sells food or clothing in London.", "con:and->or"),
    ],
)
def test_one_conjunction_swapped_keeping_casing(nlp, text, expected, rule):
    sent = first_sentence(nlp, text)
    edit = any_shape_swap(sent)
    assert edit is not None and edit.apply(text) == expected and edit.rule == rule
    assert text[edit.start : edit.end] == edit.before


def test_exactly_one_swap_and_phrases_before_clauses(nlp):
    # bundled sample, doc 8721572: two "and"s; the phrase-level one is swapped, once
    text = "The Chincha fertilized their fields with dead birds and guano, and this knowledge was passed on to later peoples."
    assert edited(nlp, any_shape_swap, text) == (
        "The Chincha fertilized their fields with dead birds or guano, and this knowledge was passed on to later peoples."
    )


def test_the_pick_depends_on_the_sentence_only(nlp):
    text = "He studied law and literature in Dublin, Paris and Rome and later taught history or music."
    picks = {edited(nlp, any_shape_swap, text) for _ in range(3)}
    assert len(picks) == 1 and None not in picks


# every class of conjunction that must stay as it is, each pinned by real sentences
SKIPPED = {
    "correlative": ["Either the mayor or the council decides.", "It is unclear whether he left or stayed."],
    "both": ["Both the mayor and the council agreed.", "The Hay Head and Linley workings were both on a large scale."],
    "subject": ["He and his wife were born in Ohio."],  # "or" would break agreement
    "sentence-initial": ["And the crowd cheered loudly."],  # a discourse "And"
    "alias-or": [
        "The fungi, or mycobionts, are part of the lichen.",  # issue 14
        "The cap stone (or slab) was laid in the wall.",
        "The town is known as Newport, or simply Port.",
    ],
    # bundled sample, doc 27085143
    "quotation": ['Miss Hewitt said that the "lack of a piano encourages gambling and other violations of the rules."'],
    "fixed-phrase": [
        "The price of the stock rose more or less steadily over the year.",
        "The band played rock and roll in the clubs of Hamburg.",
        "The list includes towns, villages and so on.",
        "By and large the reforms worked in the villages.",
        "The band recorded twenty or so songs in 1990.",
        "He wrote novels and/or plays for the stage.",
        # bundled sample, doc 27084311: "one being at the Strand, London, or the other in Edinburgh"
        "He kept two shops, one being at the Strand, London, and the other in Edinburgh.",
    ],
    "between": ["The treaty settled the border between France and Spain."],  # issue 14: "between X or Y"
    "reciprocal": [
        "The two brothers met each other in Paris and Rome.",
        "The two clubs played one another in Leeds and York.",
        "The farmers and the traders worked together in the market.",
        "In 1901 he married Anna and Marie in turn.",
        # one total shared by the members (issue 27, session 9, from a speeches read): no or-reading
        "Leeds won four cups and York won eight, twelve cups between them.",
        "The two sisters won four medals in Oslo and Bergen between them.",
        "The heirs divided the farm and the mill among themselves.",
        # phrases that pick up the two members one by one, as "respectively" (session 19, sotu-1841): abstain
        "The mayor drew attention to the state of the harbour and the pier, and asked the council to deepen the one "
        "and, within the year, to rebuild the other.",
        "The report described the wool trade and the fishing fleet, and found the former in decline and the latter growing.",
    ],
    "name": [
        "The Pyrenees conifer and mixed forests ecoregion covers the mountains.",  # issue 14
        "The project was funded by the American Recovery and Reinvestment Act.",
        "He visited Bosnia and Herzegovina in 1996.",
    ],
}


@pytest.mark.parametrize(
    "text", [pytest.param(text, id=f"{kind}-{n}") for kind, texts in SKIPPED.items() for n, text in enumerate(texts)]
)
def test_conjunctions_that_must_stay_are_not_swapped(nlp, text):
    assert edited(nlp, any_shape_swap, text) is None


def test_a_quotation_opened_in_an_earlier_sentence_is_seen(nlp):
    doc = nlp('He said: "We came here at dawn. He walked in and the temperature of the room changed. Then we left." They left.')
    quoted, last_quoted = list(doc.sents)[1:3]
    assert any_shape_swap(quoted) is None
    assert any_shape_swap(quoted, opened="") is not None  # the same sentence out of its quotation is swapped
    closing = nlp('The priest and the mayor spoke first and last."')[:]  # closes a quotation the scan did not see open
    assert any_shape_swap(closing, opened="") is None


def test_fixed_phrase_list_is_documented():
    assert ("more", "or", "less") in FIXED_PHRASES and ("rock", "and", "roll") in FIXED_PHRASES


# -- issue 27: the con defect classes, each with sentences of our own ----------

ISSUE_27_SKIPPED = {
    "alias": [
        "The time unit, Tm or AM, appears in older astronomical tables.",  # an appositive "or"
        "The unit is written Tm or AM in older tables.",  # between two abbreviations
        "The chapel is also known as St Mary or the Lady Chapel.",
        # names of one thing after "known as" with "and" too, at any length ("ISIL, ISIS or Daesh" says the same)
        "The island - also known as Inishmore, Aranmore and Arainn - lies west of the bay.",
        "The drug is sold as Tylenol or Panadol in most countries.",
    ],
    "counted": [
        "The board met two partners: Acme and Globex.",  # "two partners: Acme or Globex"
        "The farm grows three crops, barley and oats and rye.",
    ],
    "reciprocal-noun": [
        "The museum displays the treaty of Spain and Portugal.",
        "The film shows the fight of Achilles and Hector over the body.",
        "The final was a match of Leeds versus York.",
    ],
    "no-change": [
        "The company paid no tax in 1998 and 1999.",  # "no tax in 1998 or 1999" says the same
        "The firm did not hire engineers or designers that year.",
        "The mayor refused talks with the union or the owners.",
        "Its output exceeded that of France, Spain, or Italy.",
        "The harvest was larger than in 1980 or 1981.",
        "Unlike in Norway and Sweden, the ferries here run at night.",
        "Members pay the full fee if they live in the city and half if not.",  # complementary conditions
        "The tax is due if the house is sold and waived otherwise.",
    ],
    "fixed": ["The plan will take a year or two to finish.", "He returned to the harbour time and again."],
    "correlative": ["She can either resign this week or he can fire her in the spring."],
}


@pytest.mark.parametrize(
    "text", [pytest.param(text, id=f"{kind}-{n}") for kind, texts in ISSUE_27_SKIPPED.items() for n, text in enumerate(texts)]
)
def test_issue_27_classes_are_not_swapped(nlp, text):
    assert edited(nlp, any_shape_swap, text) is None


def test_a_negation_in_one_conjunct_only_does_not_block_the_swap(nlp):
    # the "not" is inside the first clause; "and" joins the two clauses
    assert edited(nlp, any_shape_swap, "The ferry was not late, and the passengers boarded at noon.") == (
        "The ferry was not late, or the passengers boarded at noon."
    )


def test_a_list_after_a_colon_spelling_out_a_plural_is_refused_and_common_nouns_after_of_are_swapped(nlp):
    assert edited(nlp, any_shape_swap, "The shop sells two kinds of goods: fresh bread, cheese and wine.") is None  # counted
    # uncounted, the plural still names every member (engine.needles.coordination_parts, "members of a plural")
    assert edited(nlp, any_shape_swap, "The shop sells fresh goods: bread, cheese and wine.") is None
    assert edited(nlp, any_shape_swap, "The region has large ports in the country: Cork, Cobh and Dublin.") is None
    assert edited(nlp, any_shape_swap, "The harbour handles the export of timber and coal.") == (
        "The harbour handles the export of timber or coal."
    )


def test_predicates_that_share_a_negation_are_not_swapped(nlp):
    # "have not been repaired or repainted" != "have not been repaired and repainted"
    assert edited(nlp, any_shape_swap, "The old piers have not been repaired and repainted since the war.") is None


# -- issue 27, second pass (news tuning part, docs-seed 3127): classes read as
# wrong, and refusals that cost documents without a reason -------------------


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("The festival drew visitors from 40 towns and villages.", "counted"),  # "40 towns or villages": the same
        ("The scheme covers more than 300 farms and orchards.", "counted"),
        ("The old port was a haunt of wheelers and dealers.", "fixed phrase"),  # a binomial idiom
        ("The crew repainted all of the boats of the ferry line and the fishing fleet.", "downward operator"),
        ("The mayor thanked the pilot and the engineer, who had both stayed on board.", "both"),
        ("The pilot and the engineer stayed on board.", "subject"),
        ("She, a pilot and engineer, stayed on board.", "apposition"),
        # a title inside an apposition: "director of sales or marketing" is no office
        ("Anna Berg, director of sales and marketing at the ferry line, left the firm.", "apposition"),
        # restricting a plural: "dockers in Rotterdam or Hamburg" names the same dockers
        ("Dockers in Rotterdam and Hamburg are recent arrivals from the south.", "modifier of a plural"),
        ("The inspectors praised the crew members from Norway and Iceland for their courage.", "modifier of a plural"),
        ("The harbour and river pilots have found the new rules costly.", "modifier of a plural"),
        ("The ferry stops at the third and fifth piers on Sundays.", "modifier of a plural"),
        # a list entry whose verbs are relative clauses; such a clause cut from its noun
        ("Twelve fishing boats, only three of which carry radios, and most of which are older than the harbour.", "relative clause"),
        ("Only two of which were built of stone, and all of which are empty now.", "relative clause"),
        # issue 27, held-out classes (engine.needles.coordination_sense), sentences of our own:
        # free choice under ability or permission: "or" already offers each option
        ("Visitors can pay at the gate by card or in cash.", "free choice"),
        ("Members are able to vote by post and online.", "free choice"),
        ("Residents may park on the street or in the square.", "free choice"),
        # an infinitive with its own subject, parsed as a ccomp under "allowing" (issue 27, session 23, short news)
        ("The storm gave the crews time, allowing them to regroup and adapt before the race.", "free choice"),
        ("Students are allowed to borrow books and journals.", "free choice"),
        # at any length (issue 27, session 11: the fresh read's "may include A, B or C"): each member is offered
        ("Visitors can pay with cards, cheques or cash.", "free choice"),
        ("Visitors may bring dogs, cats and birds on the ferry.", "free choice"),
        ("The storm might damage the pier, the quay and the slipway.", "free choice"),
        # issue 27, session 15: an adjective of liability ("vulnerable to" = "can suffer") offers each member
        ("After the storm, many families were vulnerable to hunger, disease and eviction.", "free choice"),
        ("Young trees are susceptible to frost and drought.", "free choice"),
        # issue 27, session 15 (s15-con3): the infinitive of a noun of permission or ability, however the tagger
        # reads its second verb ("protest" as a noun) or the parser hangs the infinitive (on the verb)
        ("The union said it was a clear breach of the right to organise and protest.", "free choice"),
        ("The pupils got a chance to swim and sail.", "free choice"),
        ("Workers won the freedom to travel and work abroad.", "free choice"),
        # a second example the parser hangs inside the first: abstain when the pair may be the examples
        ("The council cancelled several projects, including a plan asking the town to study the cost of the pier "
         "and the new harbour road that opened last year.", "examples"),
        # an infinitival indirect question under any word; a list of indirect questions parsed as the root
        ("The mayor is worried about how to repair the pier and fund the new ferry.", "embedded questions"),
        ("The fare depends on where you board, what ferry is taken and how far the island is.", "embedded questions"),
        # two bare plurals under a preposition with a classifier before the first (session-15 ruling: W);
        # two bare nouns sharing a restriction of place whose object is a bare plural class
        ("The new rules cut crimes that happen in public parks and locker rooms.", "members of a plural"),
        ("Many people left to escape violence and poverty in countries such as Chad and Mali.", "members of a plural"),
        # a bare infinitive the parser hung on a finite "be" (the rest of an indirect question between dashes)
        ("Officials are clearly worried about how to repair the old piers and best fund -- and ultimately expand -- "
         "the small ferry service along the coast.", "stray infinitive"),
        # a list of examples: either conjunction names the same examples
        ("The museum holds objects such as coins and seals.", "examples"),
        ("The shop sells fruit, for example apples or pears.", "examples"),
        ("The fund backs small firms, including bakeries and cafes.", "examples"),
        # a later example parsed as an apposition to an earlier one, the list's "and" on it (issue 27, session 23)
        ("The leaflet lists serious illnesses with suspected links to the dump, including cancer, Alzheimer's and "
         "Parkinson's disease, hormone disruption, birth defects, and nerve damage.", "examples"),
        # auxiliaries sharing one complement
        ("The report asks what the region is and might become.", "shared complement"),
        # prepositions sharing one object
        ("The council ignored reports of and complaints about the smell from the plant.", "shared complement"),
        ("The paper printed views of and questions about the harbour plan.", "shared complement"),
        # collective predicates: the claim needs every member together
        ("She was co-author of the report with Lee and Park.", "collective"),
        ("The two banks were co-guarantors of the loans to the farmers and the fishermen.", "collective"),
        ("The boy was born to a Welsh mother and an Irish father.", "collective"),
        # an absolute "with A and B" whose count has no comma (issue 27, session 20): the parser hangs the
        # count on the verb, or takes it for one more conjunct
        ("The club has done everything to keep its members loyal, with a summer regatta and a free winter lecture "
         "at the Royal Harbour Hall just two signs of a policy of goodwill.", "collective"),
        ("The port authority has tried hard to win over the fishermen, with a new slipway and a longer quay at the "
         "Western Dock just two parts in a plan of renewal.", "collective"),
        # words that count a pair by themselves
        ("The harbour master praised the old trawler and the green ferry, a pair of sturdy boats from Cork.", "collective"),
        ("The museum bought a silver cup and a gold ring, the twin treasures of the local hoard.", "collective"),
        # a post's or a body's name
        ("She was appointed director of trade and industrial policy in 2015.", "title"),
        ("The minister for culture and sport opened the museum.", "title"),
        ("He chaired the committee on roads and bridges for a decade.", "title"),
        ("He worked for the department of health and social care until 2019.", "title"),
        # a treaty's or a society's name written lower-case (issue 27, session 11)
        ("The two kingdoms signed a treaty of amity, commerce, and navigation in 1850.", "title"),
        ("He led the society of arts and sciences for a decade.", "title"),
        # a grade of partnership between states is a name (issue 27, session 14)
        ("The two countries raised ties to a comprehensive strategic and cooperative partnership last year.", "title"),
        # a garbled source repeating a phrase back to back
        ("The troops were stationed in Cork stationed in Cork and the capital.", "repeated phrase"),
        # a verb right after the coordination agrees with it as its subject, whatever the parse says
        # a count as the head before the colon fixes "and"; a gapped "and with it" (issue 27, session 11)
        ("For example, the region has three of the four largest ports in the country: Cork, Cobh and Dublin.", "renaming"),
        ("The town has changed so quickly, and with it the harbour.", "fixed phrase"),
        ("The storm dealt two blows to the town: it flooded the quay, and it sank the ferry.", "renaming"),
        ("The ferry often waits days or even weeks before it sails.", "fixed phrase"),
        # complementary conditions (the external scheme's W): "with and without" says the same (issue 27, session 19)
        ("The skipper kept sailing with or without a licence from the harbour board.", "fixed phrase"),
        ("The boats were tested with and without their new sails last spring.", "fixed phrase"),
        ("For example, the coast boasts three of the four widely known fishing ports in the west: Cobh, Dingle and Howth.",
         "renaming"),
        ("Speaking of our fleet, everyone knows that years of bad planning and a long recession have pushed the yard "
         "to the brink.", "agreement"),
        # issue 27, session 21 (set-aside part 3): a conjunction inside a hyphenated word
        ("The ferry crossing takes three-and-a-half hours in winter.", "hyphenated"),
        ("The club still shows black-and-white films on Sundays.", "hyphenated"),
        # two numbers side by side joined by "or": one approximate count
        ("Nine or ten boats left the harbour at dawn.", "approximate count"),
        ("The skipper checks the nets 20 or 30 times a day.", "approximate count"),
        # a number or an amount beside the conjunction: a range, a restatement, shares or kinds of one plural
        # (issue 27, session 23: part 3's "8%-and 16%-of the vote", read 5931's "1% pension and 13.8% ...")
        ("The yard must pay 2% harbour dues and 11.5% port insurance charges on every boat.", "amounts"),
        ("The board cut 30 berths and $4 million from the harbour plan.", "amounts"),
        ("The two ferry lines carried 40% and 25% of the island's freight last year.", "amounts"),
        # ", or" + an amount restating the amount before it, whatever the parser hangs it on
        ("The ferry company's shares fell $1.40, or 3 percent, on Tuesday.", "gloss"),
        ("The harbour index rose 120.5, or 0.6%, to close at a new high.", "gloss"),
        # a verb that sets its object's members apart (WordNet's synonym of the listed "separate")
        ("The old feud has divided the north and the south of the island for years.", "symmetric"),
        # one-word names before one singular common noun: the name of one thing
        ("Voters in the Ashby, Croxley and Penrith by-election went to the polls on a wet Thursday.", "in a name"),
        ("The fishermen of the Cork and Cobh harbour board met the mayor.", "in a name"),
        # a "by" phrase of the doer after two bare plurals of acts, wherever the parser hangs it
        ("The village saw raids and arrests by police during the long strike.", "members of a plural"),
    ],
)
def test_wrong_swaps_found_on_news_are_refused_with_their_reason(nlp, text, why):
    # also the held-out classes: swaps that change nothing, collective predicates, posts' titles
    refused, reasons = con_refusal(nlp, text)
    assert refused and why in reasons


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # inside the subject's phrase, not the subject: the verb agrees with "price" either way
        ("The price of fresh fish and bread rose in the spring.", "The price of fresh fish or bread rose in the spring."),
        # a "both" of a later coordination of its own
        (
            "The storm flooded the quay and damaged boats of both the ferry line and the fishing fleet.",
            "The storm flooded the quay or damaged boats of both the ferry line and the fishing fleet.",
        ),
        ("The ferry carried two trucks and a bus.", "The ferry carried two trucks or a bus."),  # not one counted list
        # years are dates, not amounts; a number away from the conjunction counts its own member only
        ("The ferry sailed in 2015 and 2016 under a Welsh flag.", "The ferry sailed in 2015 or 2016 under a Welsh flag."),
        (
            "The museum lent five paintings and a statue to the gallery in Cork.",
            "The museum lent five paintings or a statue to the gallery in Cork.",
        ),
        # "exposed to" reports what happened, no liability; a liability adjective in a clause of its own
        ("The fishermen were exposed to wind and rain for days.", "The fishermen were exposed to wind or rain for days."),
        ("The crew was vulnerable and the ship was old.", "The crew was vulnerable or the ship was old."),
        # near misses of s15-con3's classes: a noun of no permission; a second member with an article of its
        # own; a bare pair inside one example; a "to" with no question word; clauses that ask nothing
        ("The board took the decision to close the pier and the quay.", "The board took the decision to close the pier or the quay."),
        ("The pupils got a chance to swim and a warm meal.", "The pupils got a chance to swim or a warm meal."),
        # (no phrase of place after the pair: "roads and bridges in the north" share one restriction, session 20)
        (
            "The council cancelled several projects, including a plan to repair roads and bridges after the floods.",
            "The council cancelled several projects, including a plan to repair roads or bridges after the floods.",
        ),
        ("The mayor decided to repair the pier and the quay.", "The mayor decided to repair the pier or the quay."),
        ("The crew is tired and will go home.", "The crew is tired or will go home."),
        ("The crew was tired and went home early.", "The crew was tired or went home early."),
        (
            "The new rules cut crimes that happen in the public parks and locker rooms.",
            "The new rules cut crimes that happen in the public parks or locker rooms.",
        ),
        (
            "The new rules cut crimes that happen in public parks and new locker rooms.",
            "The new rules cut crimes that happen in public parks or new locker rooms.",
        ),
        (
            "Many people left to escape violence and poverty in the countries of the south.",
            "Many people left to escape violence or poverty in the countries of the south.",
        ),
        (
            "The fare depends on where you board, the ferry is slow and the island is far.",
            "The fare depends on where you board, the ferry is slow or the island is far.",
        ),
    ],
)
def test_coordinations_inside_a_subject_or_beside_a_later_both_are_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("She sold a house in Lisbon and a flat in Porto.", "She sold a house in Lisbon or a flat in Porto."),  # no plural
        # a verb's preposition before the conjunction: two acts on one object, "or" weakens the claim
        (
            "The club applied for and received a licence for the new bar in 1961.",
            "The club applied for or received a licence for the new bar in 1961.",
        ),
        # adjectives that hold at once of one thing: "or" says less (on a plural: coordination_scope refuses)
        ("The talks began a long and bitter quarrel over the quays.", "The talks began a long or bitter quarrel over the quays."),
    ],
)
def test_a_singulars_modifiers_are_still_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected



# -- issue 27, held-out classes (engine.needles.coordination_sense): swaps that
# change nothing, collective predicates, posts' titles; sentences of our own --


@pytest.mark.parametrize(
    "text",
    [
        "The city has only two bridges, the Iron Bridge and the Stone Bridge.",  # counted: "only two X, A and B"
        "The farm is owned jointly by the brothers and their cousin.",
        "The brothers and their cousin own the farm together.",
        "The deal needs the consent of both the union and the owners.",
    ],
)
def test_other_collective_predicates_stay_refused(nlp, text):
    assert edited(nlp, any_shape_swap, text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a clause with its own subject is outside the modal: "or" between reported facts (M)
        ("Visitors can pay at the gate, and the staff count the cash at noon.",
         "Visitors can pay at the gate, or the staff count the cash at noon."),
        # no modal, no examples marker, no post: reported facts, "or" weakens them (M)
        ("The bakers sold bread and cakes at the fair.", "The bakers sold bread or cakes at the fair."),
        ("The director praised the bakers and the cooks.", "The director praised the bakers or the cooks."),
        # a list of three without a modal reads as a list (the scheme's C); under one, free choice (refused, below)
        ("Visitors paid with cards, cheques or cash.", "Visitors paid with cards, cheques and cash."),
        # a count after the coordination but no absolute "with": the verb's, not the pair's
        ("The fleet lost a trawler and a ferry in the storm and two barges in the spring.",
         "The fleet lost a trawler or a ferry in the storm and two barges in the spring."),
        # a "co-" word inside one conjunct makes no joint claim
        ("He wrote eight acts as principal author and six others as co-author.",
         "He wrote eight acts as principal author or six others as co-author."),
        # the modal of a main clause does not reach into an adjunct; a subject's "including" names no examples of verbs
        # (adjectives of quality: relational ones, "the economic and political weight", are kinds of one thing,
        # the protocol's session-15 ruling, refused since session 17)
        ("Given the long and costly history of the firm, the trial could be long.",
         "Given the long or costly history of the firm, the trial could be long."),
        ("In 1837 seven professors including two brothers staged a protest and lost their jobs.",
         "In 1837 seven professors including two brothers staged a protest or lost their jobs."),
        ("The storm dealt heavy blows to the town: it flooded the quay, and it sank the ferry.",
         "The storm dealt heavy blows to the town: it flooded the quay, or it sank the ferry."),
        ("The ferry waits for days and even weeks before it sails.", "The ferry waits for days or even weeks before it sails."),
        # no name noun; a repeated word, not a repeated phrase
        ("She studied the history of roads and bridges.", "She studied the history of roads or bridges."),
        ("The ferry called at Cork, at Cobh and at Kinsale in May.", "The ferry called at Cork, at Cobh or at Kinsale in May."),
        # a verb after the coordination whose subject, holding it, agrees with it: the parse is consistent
        ("The prices of the fish and bread were high in the spring.", "The prices of the fish or bread were high in the spring."),
        ("The boats that carried fish and crabs have left the harbour.",
         "The boats that carried fish or crabs have left the harbour."),
        # the verb is not right after one noun phrase: an adverb's coordination, a relative clause in between
        ("The ferry left early and only a few boats remain.", "The ferry left early or only a few boats remain."),
        ("The hall served as a school, a court, and a place where fines were paid.",
         "The hall served as a school, a court, or a place where fines were paid."),
        # "the former ... the latter" before the coordination point to an earlier pair
        ('The gap between "ceilidh" and "seisiun" is that the former is a dance, while the latter is about reels and jigs.',
         'The gap between "ceilidh" and "seisiun" is that the former is a dance, while the latter is about reels or jigs.'),
        # "the one" and "the other" modifying nouns of their own refer back to nothing
        ("The mayor repaired the pier and the slipway, and the one boat left in the harbour sailed to the other side.",
         "The mayor repaired the pier or the slipway, and the one boat left in the harbour sailed to the other side."),
        # a modal over the attributive adjectives of one noun: no free choice (a pair is refused as before)
        ("The car could be tested on the steep, curvy and snowy road.",
         "The car could be tested on the steep, curvy or snowy road."),
        # near misses of the session-21 (part 3) classes:
        # spaced words around the conjunction: no hyphenated word
        ("The ferry crossing takes three hours and the bus takes four.", "The ferry crossing takes three hours or the bus takes four."),
        # numbers that are not side by side
        ("The harbour keeps nine boats or ten small trawlers in winter.", "The harbour keeps nine boats and ten small trawlers in winter."),
        # years joined by ", or": no amount restated
        ("The boats left in 2010, or 2011 at the latest.", "The boats left in 2010, and 2011 at the latest."),
        # a symmetric verb's clause joined to another: two acts, not the verb's parties
        ("The council divided the land and built new houses on it.", "The council divided the land or built new houses on it."),
        # names not followed by a common noun
        ("The boats sailed to Cork and Cobh last week.", "The boats sailed to Cork or Cobh last week."),
        # a hyphen on one side only: typed for a space, no hyphenated word
        ("All three skippers have appealed the fine-and have time to wait for the result.",
         "All three skippers have appealed the fine-or have time to wait for the result."),
        # a meeting verb's own conjunct right after the conjunction: two acts
        ("The two mayors met and talked about the new pier on Monday.",
         "The two mayors met or talked about the new pier on Monday."),
        # a WordNet symmetric verb ("classify") joined to a finite clause of its own
        ("Our harbour staff should be classified, and appointments should be made to the several grades.",
         "Our harbour staff should be classified, or appointments should be made to the several grades."),
        # a "by" phrase of an amount
        ("The firm cut costs and jobs by 10 percent last year.", "The firm cut costs or jobs by 10 percent last year."),
        # the doer of the act an "of" hangs on, not of the pair's
        ("The church asked for rent for the occupation of halls and chapels by the army during the war.",
         "The church asked for rent for the occupation of halls or chapels by the army during the war."),
    ],
)
def test_coordinations_near_but_outside_those_classes_are_still_swapped(nlp, text, expected):
    assert edited(nlp, any_shape_swap, text) == expected


def test_a_verb_after_a_second_conjunction_is_not_the_coordinations_own(nlp):
    # "in winter and spring and are followed": the verb belongs to the clause the second "and" joins
    sent = first_sentence(nlp, "Flowers open in winter and spring and are followed by pods.")
    reasons = [why for _t, why in conjunction_refusals(sent, shapes="any")]
    assert "agreement" not in reasons


def test_a_coordination_after_as_well_as_is_no_renaming(nlp):
    # "as well as" adds what follows; the parser hangs its "as" on the participle as it does "known as"
    # (issue 27, session 12: the gold con_fresh sentence of this shape was refused as a renaming)
    text = "The weavers had occasionally expressed sympathy for Chartism, as well as Owen and Cobbett for their attacks on the factory owners."
    assert edited(nlp, any_shape_swap, text) == text.replace("Owen and", "Owen or")
    refused, reasons = con_refusal(nlp, "The island, also known as Inishmore and Aranmore, lies west of the bay.")
    assert refused and "renaming" in reasons  # the participle's own "as" still renames


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # issue 27, session 14: "neither"/"both" quantifying a noun of another clause is no correlative
        ("Neither side would comment, and the mayor left for the harbour and the market.",
         "Neither side would comment, and the mayor left for the harbour or the market."),
        ("Both towns sent boats, and the crews rowed to the pier and the lighthouse.",
         "Both towns sent boats, and the crews rowed to the pier or the lighthouse."),
    ],
)
def test_a_correlative_word_of_another_clause_does_not_refuse_the_swap(nlp, text, expected):
    sent = first_sentence(nlp, text)
    reasons = [why for _t, why in conjunction_refusals(sent, shapes="any")]
    assert "correlative" not in reasons and "negated" not in reasons
    assert edited(nlp, any_shape_swap, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "They sold both fish and crabs at the quay.",
        "The crew could either stay or leave the ship.",
        # "whether" opens the clause that holds the coordination
        "The doctor will test whether the sailor was drunk with rum or gin.",
    ],
)
def test_a_correlative_over_the_coordination_still_refuses(nlp, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and "correlative" in reasons


@pytest.mark.parametrize(
    "text",
    [
        # an "or" between bare singular nouns under one "the" renames one thing ("that is")
        "The captain changed the course or direction of the ship.",
        "She joined the guild or society of weavers in the town.",
        "The launch angle is a ship's initial sailing trajectory or direction.",  # a possessive: one thing too
    ],
)
def test_a_gloss_or_under_one_definite_article_is_refused(nlp, text):
    refused, reasons = con_refusal(nlp, text)
    assert refused and "gloss" in reasons


def test_alternatives_with_an_article_each_are_no_gloss(nlp):
    text = "The captain chose the knife or the fork."
    assert edited(nlp, any_shape_swap, text) == "The captain chose the knife and the fork."


@pytest.mark.parametrize(
    "text",
    [
        # issue 27, session 14 redo: classes the earlier checks already refuse, pinned with sentences of our own
        "The bakery sells pastries, for instance croissants and tarts.",  # examples
        "The town hosts events, such as fairs or markets, every summer.",
        "Every sailor has the right to rest and eat during the voyage.",  # a right to A and B
        "The harbour board published a joint report of the council and the port.",  # joint source
        "The festival is a collaboration between the school and the museum.",
        "He visited the village where his aunt and uncle lived.",  # a relative clause of place
        "Among the boats and barges moored there are two old trawlers.",  # inverted "Among A and B are"
    ],
)
def test_the_redone_session_13_classes_are_refused(nlp, text):
    refused, _reasons = con_refusal(nlp, text)
    assert refused


def test_a_contracted_negation_outside_the_coordination_does_not_block_the_swap(nlp):
    # a parsed "n't" is read for its clause like "not" (_negated), not refused wherever it stands
    concessive = "Although the ferry wasn't late, the passengers complained to the captain and the crew."
    assert edited(nlp, any_shape_swap, concessive) == concessive.replace("captain and", "captain or")
    relative = "The mayor, who wasn't at the meeting, praised the engineers and the builders."
    assert edited(nlp, any_shape_swap, relative) == relative.replace("engineers and", "engineers or")


def test_a_contracted_negation_over_the_coordination_or_left_unparsed_is_refused(nlp):
    assert con_refusal(nlp, "The council didn't repair the bridge and the road.") == (True, {"negated"})
    assert con_refusal(nlp, 'The council didn"t repair the bridge and the road.') == (True, {"contracted negation"})


def test_a_downward_verb_counts_only_as_a_verb(nlp):
    # issue 27, session 18: "decline" as a noun or "top" as an adjective is no downward operator
    noun = "The decline of coal and steel emptied the valley towns."
    assert edited(nlp, any_shape_swap, noun) == noun.replace("coal and", "coal or")
    # the verb still is: "declined offers of tea and cake" = "of tea or cake"
    assert con_refusal(nlp, "The villagers declined offers of tea and cake.") == (True, {"downward operator"})


def test_before_as_a_member_of_a_coordination_of_periods_scopes_over_nothing(nlp):
    # issue 27, session 19: "before and during the famine" names two periods; "or" makes the time vaguer (M)
    periods = "The mill was run by the monks before and during the famine."
    assert edited(nlp, any_shape_swap, periods) == periods.replace("before and", "before or")
    # "before" above the coordination still is an operator: "before the floods or fires" = "... and fires"
    assert con_refusal(nlp, "The mill closed before the floods and fires.") == (True, {"downward operator"})


def test_two_people_named_in_full_by_both_models_are_no_name_holding_and(agreed_nlp):
    # issue 27, session 20 (tuning draw news 5804, news-1337): a list of people's names was refused as
    # "in a name" because capitalised words sit on both sides of "and"; both models end one person
    # right before it and start another right after it
    listed = "The programme was led by Anne Walsh and David Brennan until 2004."
    assert edited(agreed_nlp, any_shape_swap, listed) == listed.replace("Walsh and", "Walsh or")
    # a capitalised word after the second name: one name holding "and"
    expedition = "The museum told the story of the Lewis and Clark Expedition in a new film."
    assert edited(agreed_nlp, any_shape_swap, expedition) is None



def test_names_before_a_hyphenated_verb_are_no_name_of_one_thing(nlp):
    # issue 27, session 21: "A and B co-founded" is two people and a verb, not names before a hyphenated noun
    # ("the A and B by-election"); the pair is refused for its "co-" word, not as a name
    _refused, reasons = con_refusal(nlp, "The firm bought the shipyard that Walsh and Brennan co-founded in 1990.")
    assert "in a name" not in reasons


def test_a_conjunction_in_the_topic_of_a_bodys_name_is_part_of_the_name(agreed_nlp):
    # issue 27, session 21 (read news 5911): the models' entity ends before "and the", yet the run from
    # the capitalised head noun ("Conference") with its topic's preposition to the capitalised "Region" is one name
    named = "The ferry owners sent a letter to the Bergen Maritime Conference on Norway and the Barents Region in March."
    assert edited(agreed_nlp, any_shape_swap, named) is None
    assert "in a name" in con_refusal(agreed_nlp, named)[1]
    # lowercase prose around it: "talks" heads no name, and "the Kurdish forces" ends on a lowercase noun
    prose = "The envoys held talks on Syria and the Kurdish forces in the north."
    assert "in a name" not in con_refusal(agreed_nlp, prose)[1]
    assert edited(agreed_nlp, any_shape_swap, prose) == prose.replace("Syria and", "Syria or")
