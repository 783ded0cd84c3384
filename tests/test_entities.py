"""ner place swaps on a real en_core_web_sm parse (the `nlp` session
fixture): a place is replaced only by a known place of its own kind that
neither names, contains nor lies inside it, that stands to the sentence's
other places as it did, and never inside a title or a longer name."""

from __future__ import annotations

import pytest

from engine.needles.entities import document_entity_texts, entity_options
from engine.needles.places import place_of
from needle_helpers import offered_replacements

# one document of our own: cities, countries, a title naming a city, aliases
DOCUMENT = (
    "Ana Sousa was born in Lisbon in 1961. Ana Sousa studied in Porto before she left Portugal. "
    "In 1990 she moved to Spain, where she taught in Seville. Her first novel, A Night in Lisbon, appeared in 1985. "
    "Her brother stayed in Porto and never left Portugal. Trade between the UK and Spain grew, and Britain and France "
    "signed a treaty. Sousa later lived in Paris, France, and in Berlin."
)


def options_by_sentence(nlp, text):
    """sentence text -> {entity text: replacements} of a document."""
    doc = nlp(text)
    entities = document_entity_texts(doc)
    return {s.text.strip(): {o.text: o.replacements for o in entity_options(s, entities)} for s in doc.sents}


@pytest.fixture(scope="module")
def options(nlp):
    return options_by_sentence(nlp, DOCUMENT)


def test_a_city_is_replaced_by_a_city_and_never_by_the_country_around_it(options):
    assert options["Ana Sousa was born in Lisbon in 1961."]["Lisbon"] == ("Berlin", "Paris", "Porto", "Seville")


def test_a_place_keeps_how_it_stands_to_the_other_places_of_its_sentence(options):
    # no other Portuguese city and no country around Porto: nothing may replace either
    assert options["Ana Sousa studied in Porto before she left Portugal."] == {}
    # "Spain, where she taught in Seville": Portugal does not hold Seville, Porto is not in Spain
    assert set(options["In 1990 she moved to Spain, where she taught in Seville."]) == {"1990"}
    # "Paris, France": no other French city; Berlin stands apart from France, as its replacements do
    assert options["Sousa later lived in Paris, France, and in Berlin."] == {"Berlin": ("Porto", "Seville")}


def test_no_replacement_is_another_name_of_a_place_in_the_sentence(options):
    # "the UK ... Britain": neither can become the other, nor Spain or France become either
    trade = options["Trade between the UK and Spain grew, and Britain and France signed a treaty."]
    assert trade == {"Spain": ("Portugal",), "France": ("Portugal",)}


def test_a_place_in_a_title_is_no_option_nor_a_replacement(options):
    assert set(options["Her first novel, A Night in Lisbon, appeared in 1985."]) == {"1985"}
    assert all("Lisbon" not in replacements for sentence in options.values() for replacements in sentence.values())


# a second document of our own: a name that takes "the" parsed as a modifier, a region as a treaty's party
STATES = (
    "Mara Lind argued that the United States preferred trade to tariffs. The United States and the Netherlands "
    "signed the accord in 2004, and Canada joined it. Mara Lind said Canada and the Netherlands would gain. "
    "The commercial treaty with Hawaii lapsed in 1887, and Hawaii kept its sugar trade. "
    "Ohio and Texas sent farmers to Hawaii. Mara Lind grew up in Ohio."
)


def test_a_name_that_takes_the_is_replaced_by_one_that_does_wherever_the_parse_puts_it(nlp):
    states = options_by_sentence(nlp, STATES)
    # "States" parsed as a modifier of "trade": "the Canada preferred trade" must not arise
    assert states["Mara Lind argued that the United States preferred trade to tariffs."] == {"United States": ("Netherlands",)}


def test_a_region_named_as_a_party_to_a_treaty_is_no_place_of_the_data_anywhere_in_the_document(nlp):
    states = options_by_sentence(nlp, STATES)
    # the treaty's Hawaii is the kingdom, not the US state: no Hawaii swap, nor any in a sentence naming it
    assert "Hawaii" not in states["The commercial treaty with Hawaii lapsed in 1887, and Hawaii kept its sugar trade."]
    assert states["Ohio and Texas sent farmers to Hawaii."] == {}
    assert states["Mara Lind grew up in Ohio."] == {"Ohio": ("Texas",)}


# a third: places that take "the" and places that take none
ARTICLES = (
    "Officials in Japan expected growth in 2016. The Netherlands said exports would rise in 2015. "
    "Exporters in the Netherlands and Japan hired staff. Rising Chile and Peru sold copper to Japan. "
    "Copper from Chile reached the Netherlands."
)


def test_a_country_brings_or_drops_its_own_article_where_nothing_else_hangs_on_it(nlp):
    articles = options_by_sentence(nlp, ARTICLES)
    assert articles["Officials in Japan expected growth in 2016."]["Japan"] == ("Peru", "the Netherlands")
    # the option spans the article: "The Netherlands said" -> "Japan said"
    assert articles["The Netherlands said exports would rise in 2015."]["The Netherlands"] == ("Japan", "Peru")
    assert articles["Copper from Chile reached the Netherlands."] == {"the Netherlands": ("Japan", "Peru")}
    # "the Netherlands and Japan": the coordination keeps each name's article as it is
    assert articles["Exporters in the Netherlands and Japan hired staff."] == {"Japan": ("Peru",)}


def test_a_possessive_written_as_a_bare_apostrophe_takes_only_a_name_ending_in_s(nlp):
    doc = nlp("Rising costs hit the US in 2016. Exports from Japan fell in 2016. Analysts said the US' fight against smuggling might widen.")
    entities = document_entity_texts(doc)
    last = list(doc.sents)[-1]
    assert all("Japan" not in o.replacements for o in entity_options(last, entities) if o.label == "GPE")


def _last_sentence_place_replacements(nlp, text):
    """Every GPE replacement entity_options offers in the text's last sentence."""
    doc = nlp(text)
    last = list(doc.sents)[-1]
    return {r for o in entity_options(last, document_entity_texts(doc)) if o.label == "GPE" for r in o.replacements}


def test_a_possessive_s_never_takes_a_plural_form_name(nlp):
    # "Peru's plan" never becomes "the Philippines's plan"; a name ending in s written bare still may ("Laos's")
    replacements = _last_sentence_place_replacements(
        nlp,
        "Ships from the Philippines reached Peru in 2015. Traders in Laos sold rice to Chile in 2015. "
        "Officials said Chile's plan for the port would cost more.",
    )
    assert "Peru" in replacements and not {"Philippines", "the Philippines"} & replacements


def test_a_name_joined_by_a_hyphen_to_the_next_word_gives_no_evidence_of_its_article(nlp):
    # "US-headquartered" modifies: it never shows the document writing "US" bare, so "Chile's plan" is not "US's plan"
    replacements = _last_sentence_place_replacements(
        nlp,
        "Copper from Peru reached the port in 2015. It became the first US-headquartered bank in the market. "
        "Officials said Chile's plan for the port would cost more.",
    )
    assert "Peru" in replacements and "US" not in replacements


# a fourth, of an old document: places as the document relates them then, a currency and laws named with a year
HISTORY = (
    "Maine, at present a part of Massachusetts, asked for a separate court in 1802. Farmers in Maine sold timber "
    "to merchants in 1803. Settlers from Vermont and Massachusetts reached Ohio in 1804. The Territory of Michigan "
    "asked Ohio for a road in 1805. Traders in Michigan bought furs in 1806. Our possessions in the Bahamas need a "
    "governor. Portugal and Spain sold wine to the Bahamas in 1808. Cuba, then a colony of Spain, rose in revolt in "
    "1809. Officials in Spain and Portugal met in 1809. The banks paid in Canada bonds, and Canada sold timber in "
    "1810. Britain bought timber from Canada in 1812. The Tariff Act of 1789 raised duties. The Jay Treaty of 1794 "
    "settled debts with Britain. The treaty of 1783 ended the war. Britain sold cloth in 1811."
)


@pytest.fixture(scope="module")
def history(nlp):
    return options_by_sentence(nlp, HISTORY)


def test_a_place_the_document_says_lies_in_another_is_never_replaced_by_it(history):
    # the gazetteers see two states; the document says one was then part of the other
    assert history["Farmers in Maine sold timber to merchants in 1803."]["Maine"] == ("Ohio", "Vermont")
    assert "Massachusetts" not in history["Settlers from Vermont and Massachusetts reached Ohio in 1804."]


def test_a_place_the_document_calls_a_territory_colony_or_possession_is_no_option_nor_a_replacement(history):
    assert "Michigan" not in history["Traders in Michigan bought furs in 1806."]  # "the Territory of Michigan"
    assert history["Our possessions in the Bahamas need a governor."] == {}
    assert "Cuba" not in history["Cuba, then a colony of Spain, rose in revolt in 1809."]
    # the owner is no dependency: Spain stays a country to swap
    assert history["Officials in Spain and Portugal met in 1809."]["Spain"] == ("Britain",)
    replacements = {r for sentence in history.values() for option in sentence.values() for r in option}
    assert not replacements & {"Michigan", "Bahamas", "the Bahamas", "The Bahamas", "Cuba"}


def test_a_country_naming_a_currency_is_no_replacement(history):
    replacements = {r for sentence in history.values() for option in sentence.values() for r in option}
    assert "Canada" not in replacements  # "Canada bonds"
    assert "Canada" not in history["The banks paid in Canada bonds, and Canada sold timber in 1810."]


def test_a_year_inside_the_name_of_a_law_or_treaty_is_no_date_to_swap(history, nlp):
    assert "1789" not in history["The Tariff Act of 1789 raised duties."]
    assert "1794" not in history["The Jay Treaty of 1794 settled debts with Britain."]
    assert "1783" not in history["The treaty of 1783 ended the war."]
    cited = options_by_sentence(nlp, "The act of Congress approved March 3, 1869, cut the army. A law passed in 1882 and a law of May 4, 1880, followed.")
    assert "March 3, 1869" not in cited["The act of Congress approved March 3, 1869, cut the army."]
    # a year in prose is still swapped, and a name's year is still a year to put there
    assert {"1789", "1802"} <= set(history["Britain sold cloth in 1811."]["1811"])


def test_the_land_of_a_country_is_no_dependency(nlp):
    land = options_by_sentence(nlp, "Settlers crossed the territory of the United States in 1806. Spain sold wine to the United States in 1807.")
    assert "the United States" in land["Settlers crossed the territory of the United States in 1806."]  # the option spans "the"


# a fifth, dated by its record: an old document names as countries places that were not states then
OLD_LETTER = (
    "Our affairs with France remain as they were, and the President of the United States has received the envoy "
    "of Spain. Troops marched toward Canada in the spring of 1813. Merchants from France bought grain in Greece. The "
    "United States bought wine from Spain in 1814. Traders in Canada sold furs to France in 1815. Sailors from Greece "
    "reached Spain in 1816."
)


def test_an_old_document_swaps_only_countries_it_treats_as_states(nlp):
    doc = nlp(OLD_LETTER)

    def places(year):
        entities = document_entity_texts(doc, year)
        found = {}
        for sent in doc.sents:
            for option in entity_options(sent, entities):
                if option.label != "DATE":
                    found.setdefault(option.text, set()).update(option.replacements)
        return found

    then = places(1816)  # Canada and Greece are named, never as states: neither span nor replacement
    assert {"France", "Spain"} <= then.keys() and not {"Canada", "Greece"} & then.keys()
    assert not {"Canada", "Greece"} & set().union(*then.values())
    assert "France" in then["Spain"] and "Spain" in then["France"]
    undated = places(None)  # read as of now (as a recent document): all four are states
    assert {"Canada", "Greece"} <= undated.keys() and places(2005) == undated


def test_an_old_document_treats_a_country_it_has_differences_with_as_a_state(nlp):
    # "our differences with X": a dispute between two states, as "our dispute with X" (engine.needles.states_then)
    doc = nlp(
        "Our differences with Portugal were left to the envoys in 1809. The President of the United States received "
        "the envoy of Sweden in 1810. Merchants from Portugal bought timber in Sweden in 1811. Farmers in Sweden "
        "sold oats to Portugal in 1812."
    )
    entities = document_entity_texts(doc, 1812)
    found: dict[str, set[str]] = {}
    for sent in doc.sents:
        for option in entity_options(sent, entities):
            if option.label != "DATE":
                found.setdefault(option.text, set()).update(option.replacements)
    assert "Portugal" in found and "Portugal" in set().union(*found.values())


def test_a_place_naming_an_act_or_agreement_is_no_option(nlp):
    acts = options_by_sentence(
        nlp,
        "Traders in Berlin and Milan sold silk to Paris in 1805. The Berlin and Milan decrees closed the ports in 1807. "
        "The Louisiana Purchase doubled the land in 1803. Farmers in Louisiana and Ohio grew corn in 1810. Paris "
        "bought silk from Milan in 1808. The envoys met aboard the Italy steamer Vesta in 1809. Italy and France "
        "traded in 1811.",
    )
    assert "Italy" not in acts["The envoys met aboard the Italy steamer Vesta in 1809."]  # a ship's designation
    assert not {"Berlin", "Milan"} & acts["The Berlin and Milan decrees closed the ports in 1807."].keys()
    assert "Louisiana" not in acts["The Louisiana Purchase doubled the land in 1803."]
    assert "Milan" in acts["Paris bought silk from Milan in 1808."]  # the city in prose still is one


def test_a_place_coordinated_with_colonies_is_not_called_one(nlp):
    # "its colonies and the United States": two parties, not a list in apposition to "colonies"
    trade = options_by_sentence(
        nlp,
        "Spain closed the trade between its colonies and the United States in 1816. France sold wine to the United "
        "States in 1817. Portugal sold cork to France in 1818.",
    )
    assert "the United States" in trade["France sold wine to the United States in 1817."]


def test_a_us_state_is_a_place_to_swap_only_from_its_admission(nlp):
    # the `us` package's statehood years: Oregon was a territory until 1859, Ohio a state from 1803
    doc = nlp(
        "Miners in Oregon sold gold in Ohio. Farmers in Ohio sold corn in Kentucky. Traders in Kentucky bought furs in "
        "Oregon."
    )

    def spans(year):
        entities = document_entity_texts(doc, year)
        found: dict[str, set[str]] = {}
        for sent in doc.sents:
            for option in entity_options(sent, entities):
                found.setdefault(option.text, set()).update(option.replacements)
        return found

    assert "Oregon" not in spans(1850) and spans(1850)["Ohio"] == {"Kentucky"}
    assert spans(1860) == spans(None) and spans(None)["Ohio"] == {"Kentucky", "Oregon"}


# a document of our own: an abbreviated country modifying nouns, countries written in full
MODIFIERS = (
    "Kenya and Egypt sent ministers to the summit in Cairo. Some US officials said Kenya would sign. "
    "The US military kept a base in Kenya. Egypt lost to a touring Kenya side in 2018. "
    "Ghana wrote to US diplomats, and Ghana waited. The talks moved to Ghana, and US forces left Egypt."
)


@pytest.fixture(scope="module")
def modifiers(nlp):
    return options_by_sentence(nlp, MODIFIERS), options_by_sentence(nlp, MODIFIERS.replace("Ghana wrote", "The Ghana delegation wrote"))


def test_a_country_written_in_full_never_modifies_a_noun_where_english_writes_its_adjective(modifiers):
    plain, _ = modifiers
    # "Some Egypt officials", "the Ghana military": no country written in full replaces the modifier "US"
    assert "US" not in plain["Some US officials said Kenya would sign."]
    assert "US" not in plain["The US military kept a base in Kenya."]
    # a national team's noun takes the country's own name: "a touring Ghana side"
    assert plain["Egypt lost to a touring Kenya side in 2018."]["Kenya"] == ("Ghana", "US")


def test_a_country_the_document_writes_as_a_modifier_may_modify_a_noun_anywhere_in_it(modifiers):
    _, delegation = modifiers
    # "the Ghana delegation": the document writes Ghana so, and "Some Ghana officials" reads as it does
    assert delegation["Some US officials said Kenya would sign."]["US"] == ("Ghana",)
    assert delegation["The US military kept a base in Kenya."]["US"] == ("Ghana",)


# a third document of our own: a city and its suburb, a borough, a town near a capital, a state and a namesake
URBAN = (
    "Lena Ortiz grew up in Paris. Lena Ortiz taught in Lyon before she moved to Brooklyn. "
    "Her sister opened a bakery in Boulogne-Billancourt, a suburb of Paris. The old abbey stands in Frascati, "
    "near Rome, and Lena Ortiz visited it from Milan. In 1998 Lena Ortiz gave talks in Texas. Collectors came "
    "from Ohio and from Savannah."
)


@pytest.fixture(scope="module")
def urban(nlp):
    return options_by_sentence(nlp, URBAN)


def test_a_borough_or_a_town_near_a_larger_city_is_never_offered_as_a_city(urban):
    # Brooklyn lies in New York City's area, Frascati in Rome's: neither stands in for Paris
    assert urban["Lena Ortiz grew up in Paris."] == {"Paris": ("Milan", "Rome")}


def test_a_city_keeps_its_nearness_to_the_other_cities_of_its_sentence(urban):
    # "a suburb of Paris" and "Frascati, near Rome": a far city would make either false
    assert urban["Her sister opened a bakery in Boulogne-Billancourt, a suburb of Paris."] == {}
    assert urban["The old abbey stands in Frascati, near Rome, and Lena Ortiz visited it from Milan."] == {"Milan": ("Paris",)}


def test_a_state_is_replaced_by_a_state_never_by_a_city_read_as_a_foreign_region(urban):
    assert urban["In 1998 Lena Ortiz gave talks in Texas."] == {"Texas": ("Ohio",)}


# a fourth document of our own: distinct cities near larger ones, and a town's name that is an island's here
ISLAND = (
    "Marta Gil sailed from Oakland in May. The Cocos Island Marine Park is closed in winter. "
    "Only live-aboard boats reach Cocos from Costa Rica. Marta Gil also spoke in Yokohama and in Porto."
)


@pytest.fixture(scope="module")
def island(nlp):
    return options_by_sentence(nlp, ISLAND)


def test_a_large_city_beside_a_larger_one_in_another_division_or_of_its_own_size_is_offered(island):
    # Oakland holds half of San Francisco's people; Yokohama lies in Kanagawa, Tokyo in Tokyo (engine.needles.places.distinct_city)
    assert island["Marta Gil sailed from Oakland in May."] == {"Oakland": ("Porto", "Yokohama")}
    assert island["Marta Gil also spoke in Yokohama and in Porto."] == {"Yokohama": ("Oakland",), "Porto": ("Oakland",)}


def test_a_small_towns_name_written_as_an_islands_is_the_island(island):
    # "Cocos" beside "the Cocos Island Marine Park" is the island, not the Brazilian town of that name
    assert island["Only live-aboard boats reach Cocos from Costa Rica."] == {}
    assert all("Cocos" not in replacements for sentence in island.values() for replacements in sentence.values())


def test_a_person_tagged_with_a_courtesy_title_is_neither_span_nor_replacement(nlp):
    # "Ms Yellen" tagged whole: as a replacement, "President Ms Yellen"; as a span, the title stays with another name
    text = (
        "President Tom Baker met the bankers on Monday. Ms Carla Venn told reporters the rate would rise. "
        "Tom Baker said growth would come. Ms Carla Venn said she saw no conflict. Rosa Lind and Tom Baker agreed."
    )
    options = options_by_sentence(nlp, text)
    offered = offered_replacements(options)
    assert not any("Ms" in r for r in offered), offered
    assert all("Ms Carla Venn" not in sentence for sentence in options.values())
    assert options["Tom Baker said growth would come."] == {"Tom Baker": ("Rosa Lind",)}


# a document of our own that names one country and one city and no other place of either kind
LONE_PLACES = (
    "Officials in Kenya said on Monday that the new road would open next year. "
    "The minister told reporters in Mombasa that the work was on time. "
    "Kenya will pay for most of the road, the minister said on Monday."
)


def _options(doc, entities):
    return {s.text.strip(): {o.text: o.replacements for o in entity_options(s, entities)} for s in doc.sents}


def test_a_place_without_a_same_kind_place_in_its_document_takes_one_from_the_gazetteers(nlp):
    from engine.needles.entities import with_gazetteer
    from engine.needles.places import gazetteer_likes

    doc = nlp(LONE_PLACES)
    entities = document_entity_texts(doc)
    assert all("Kenya" not in o and "Mombasa" not in o for o in _options(doc, entities).values())
    drawn = _options(doc, with_gazetteer(doc, entities))
    countries = drawn["Kenya will pay for most of the road, the minister said on Monday."]["Kenya"]
    assert countries and "Kenya" not in countries and set(countries) <= set(gazetteer_likes("Kenya"))
    cities = drawn["The minister told reporters in Mombasa that the work was on time."]["Mombasa"]
    assert cities and "Mombasa" not in cities and set(cities) <= set(gazetteer_likes("Mombasa"))
    assert "Nairobi" not in cities or "Nairobi" in gazetteer_likes("Mombasa")  # a Kenyan city: the same country
    assert drawn == _options(doc, with_gazetteer(doc, entities))  # the same every time


def test_no_gazetteer_place_for_a_document_of_or_about_a_time_before_today_s_map(nlp):
    from engine.needles.entities import with_gazetteer

    def drawn(doc, year=None):
        return _options(doc, with_gazetteer(doc, document_entity_texts(doc), year=year))

    doc = nlp(LONE_PLACES)
    assert drawn(doc, year=1990) == _options(doc, document_entity_texts(doc))  # written before 1992
    old = nlp(LONE_PLACES.replace("next year", "in 1988"))
    assert drawn(old) == _options(old, document_entity_texts(old))  # mentions a year before 1992
    recent = nlp(LONE_PLACES.replace("next year", "in 2019"))
    assert drawn(recent) != _options(recent, document_entity_texts(recent))


def test_a_continent_takes_one_from_the_gazetteers_on_a_document_of_any_year(nlp):
    from engine.needles.entities import with_gazetteer
    from engine.needles.places import gazetteer_likes

    # the continents' bounds do not move with the map of states: an old letter's lone continent takes another,
    # never one that holds a place of its sentence
    doc = nlp(
        "The merchants sent their wool to Europe in 1795. Our envoy at Lisbon wrote in 1796 that the ports of "
        "Europe and Portugal were closed."
    )
    entities = document_entity_texts(doc, 1796)
    assert not any(o.get("Europe") for o in _options(doc, entities).values())
    drawn = _options(doc, with_gazetteer(doc, entities, 1796))
    continents = drawn["The merchants sent their wool to Europe in 1795."]["Europe"]
    assert continents and "Europe" not in continents and set(continents) <= set(gazetteer_likes("Europe"))
    assert "Europe" not in drawn["Our envoy at Lisbon wrote in 1796 that the ports of Europe and Portugal were closed."]


def test_a_gazetteer_country_never_names_a_place_of_the_sentence_again(nlp):
    from engine.needles.entities import with_gazetteer

    # "India" and "Japan", in the sentence, are never offered for a country of it; the document's only
    # Kenyan city shares its sentence with "Kenya", so neither is swapped: any Kenyan city would lie inside
    # the Kenya the sentence names, any other would move the accord out of it (containment)
    doc = nlp("Kenya, India and Japan signed the accord in Mombasa on Monday. The minister said Kenya would sign it again.")
    drawn = _options(doc, with_gazetteer(doc, document_entity_texts(doc)))
    first = drawn["Kenya, India and Japan signed the accord in Mombasa on Monday."]
    assert not first.get("Mombasa") and not first.get("Kenya")
    assert first["Japan"]
    for text, replacements in first.items():
        assert not {"Kenya", "India", "Japan", "Mombasa"} & set(replacements), (text, replacements)


def test_a_name_set_beside_a_work_noun_by_commas_is_a_title_not_a_person(nlp):
    # "a biographical feature, Mara Quill,": a film named after a person is neither span nor replacement
    doc = nlp(
        "The studio released two films this year. The first was a biographical feature, Mara Quill, based on the "
        "life of a Welsh poet. Mara Quill opened in cinemas in April. The director Tomas Reyes said the cast had "
        "worked for little pay. Tomas Reyes wrote the script in Cardiff."
    )
    entities = document_entity_texts(doc)
    assert "Tomas Reyes" in entities.names["PERSON"]
    assert "Mara Quill" not in entities.names["PERSON"] and "Mara Quill" not in entities.labels




@pytest.mark.parametrize(
    ("document", "place"),
    [
        # both models tag "Tellby Shoal" PERSON: a shoal, reef or creek names a place, never a person
        (
            "Divers from the island of Pelago come to Karvin's Tellby Shoal every spring to watch the thresher sharks. "
            "Tellby Shoal was made into a marine park last year. The guide Nadia Rourke said the sharks are seen there "
            "at dawn. Nadia Rourke has led dives for twelve years.",
            "Tellby Shoal",
        ),
        # a listing line "Aqua Blue, Henry Walton Drive, Sandy Point": the model tags the street PERSON
        (
            '"It is a thrill," says Aqua Blue owner Joss Amery. Aqua Blue, Henry Walton Drive, Sandy Point, South Africa; '
            "0821 234 567; dives from $120 per person. Joss Amery runs the boat. The guide Nadia Rourke said the sharks "
            "come at dawn. Nadia Rourke has led dives for twelve years.",
            "Henry Walton Drive",
        ),
    ],
)
def test_a_natural_feature_or_a_street_tagged_person_is_neither_span_nor_replacement(nlp, document, place):
    assert place not in document_entity_texts(nlp(document)).names.get("PERSON", ())

# a document of our own whose only place, a country, has no other country beside it; no person, one date
HARBOUR = (
    "The old harbour of the town was rebuilt after the storms.",
    "Fishermen mended their nets on the quay every morning.",
    "The new pier was longer and wider than the old one.",
    "Tourists came to watch the boats and buy fresh fish.",
    "The council paid for the work with a loan from Peru.",
    "The engineers tested the stones and the mortar each week.",
    "The work finished early because the weather stayed dry.",
    "The harbour master opened the gates at dawn.",
    "Ferries now carry cars and trucks to the islands.",
    "The fish market moved to a larger hall near the pier.",
    "Visitors praised the clean water of the bay.",
)


def test_screening_takes_the_ner_needle_from_the_gazetteers_when_the_document_has_no_same_kind_place(nlp):
    """prepare.screen_document runs the gazetteer pass when the first pass finds
    no ner sentence: the needle replaces the document's only country by one of
    the gazetteers' countries; a document that mentions a year before 1992, or
    was written before it, abstains (no_ner)."""
    from engine.corpus.needle_gold import seeded_ner_output
    from engine.corpus.prepare import CorpusSettings, screen_document
    from engine.needles.oracle import check_sentence
    from engine.needles.places import gazetteer_likes

    settings = CorpusSettings(min_sentences=2, min_chars_per_sentence=10)
    doc = nlp(" ".join(HARBOUR))
    first_pass = document_entity_texts(doc)
    assert not any(entity_options(s, first_pass) for s in doc.sents)  # the document's own places give nothing
    kept, reason = screen_document("harbour", "t", doc, settings)
    assert kept is not None and reason == ""
    sentence = "The council paid for the work with a loan from Peru."
    assert kept.sentences[kept.ner_sentence] == sentence
    (option,) = kept.ner_options
    assert option.text == "Peru" and option.label == "GPE"
    assert set(option.replacements) == set(gazetteer_likes("Peru")) - {"Peru"}
    needle = seeded_ner_output(sentence, kept.ner_options, "harbour", seed=0)
    country = needle.removeprefix("The council paid for the work with a loan from ").removesuffix(".")
    assert country in gazetteer_likes("Peru") and country != "Peru"
    assert check_sentence("ner", sentence, needle, ner_options=kept.ner_options) is None  # the oracle passes it

    early = nlp(" ".join(HARBOUR) + " The first pier was built in 1985.")
    assert screen_document("harbour", "t", early, settings) == (None, "no_ner")
    assert screen_document("harbour", "t", doc, settings, year=1990) == (None, "no_ner")


def test_a_country_named_by_a_common_noun_takes_the_even_when_a_list_writes_it_bare(nlp):
    # "United Arab Emirates" is written bare only inside a bracketed list; in prose it takes "the"
    doc = nlp(
        "The drought hit Somalia hard this year. The Gulf states (Saudi Arabia, Qatar, Kuwait, United Arab Emirates "
        "and Oman) sent food. Traders from Somalia sold camels in Qatar. More companies now arrive in Somalia every month."
    )
    found = _options(doc, document_entity_texts(doc))["More companies now arrive in Somalia every month."]["Somalia"]
    assert "the United Arab Emirates" in found and "United Arab Emirates" not in found
    assert {"Kuwait", "Oman", "Qatar"} <= set(found)  # names of one word stay bare, as the document writes them


def test_a_name_after_a_post_and_of_or_at_is_an_organisation_not_a_person(nlp):
    # a firm named after its founder ("managing director of Rosa Klein") is neither span nor replacement;
    # after a kin noun ("the son of Rosa Klein") the same name is a person
    text = (
        "Ana Lima met Tom Ferris in London. Ana Lima said the bank would grow. Paul Sand, {post} Rosa Klein, said "
        "rates would rise. Ana Lima, {other} Rosa Klein, agreed with Paul Sand. Tom Ferris, the son of Rosa Klein, disagreed."
    )
    firm = document_entity_texts(nlp(text.format(post="managing director of", other="an economist at")))
    assert "Rosa Klein" not in firm.labels and "Rosa Klein" not in firm.names["PERSON"]
    assert "Paul Sand" in firm.names["PERSON"]
    kin = document_entity_texts(nlp(text.format(post="a friend of", other="the sister of")))
    assert kin.labels.get("Rosa Klein") == "PERSON" and "Rosa Klein" in kin.names["PERSON"]


def test_a_date_written_without_a_year_takes_another_date_of_the_document_without_its_year(nlp):
    """"12 June" has no date of its shape in its document; on the second
    pass (a document the first leaves without a needle) "3 March 2015" less
    its year is one ("3 March"), never the year alone nor a date with one."""
    text = (
        "The town library reopens on 12 June after a long wait. Its old wing closed on 3 March 2015 for repairs. "
        "The council approved the budget on 9 October 2016."
    )
    from engine.needles.entities import with_gazetteer

    doc = nlp(text)
    entities = document_entity_texts(doc)
    first = _options(doc, entities)
    assert "12 June" not in first["The town library reopens on 12 June after a long wait."]  # the document's dates alone
    found = _options(doc, with_gazetteer(doc, entities))  # the second pass, as screening makes it
    assert found["The town library reopens on 12 June after a long wait."]["12 June"] == ("3 March", "9 October")
    assert found["Its old wing closed on 3 March 2015 for repairs."]["3 March 2015"] == ("9 October 2016",)


# places an address line writes bare ("Nassau, Bahamas;") that prose writes with "the"
ADDRESSES = (
    "Reef tours leave from Nassau, Bahamas, twice a week. Reef tours also leave from Hurghada, Egypt, in spring. "
    "Fishing with nets is banned in Egypt, so the reefs stay full of fish. "
    "Divers from Kenya and Peru joined the tours in 2016. Divers said Kenya had the warmest water."
)


def test_a_country_the_data_write_with_the_is_no_bare_replacement_where_the_document_wrote_it_bare(nlp):
    # the address lines are the only bare uses of "Bahamas": "banned in Bahamas" must not arise
    replacements = {
        r
        for sentence, found in options_by_sentence(nlp, ADDRESSES).items()
        if sentence.startswith("Fishing")
        for r in found.get("Egypt", ())
    }
    assert replacements and "Bahamas" not in replacements



def test_a_country_the_data_write_bare_is_no_replacement_where_the_document_wrote_it_with_the(nlp):
    # "the France of 1968" is France's only noun-phrase use: "in the Netherlands" must not become "in the France"
    found = options_by_sentence(
        nlp,
        "Students marched in the France of 1968. Students marched in Italy in 1968 too. "
        "Workers in Italy struck in 1969. Students in the Netherlands marched in 1969.",
    )["Students in the Netherlands marched in 1969."]
    # the option "Netherlands" keeps the sentence's "the"; the option "the Netherlands" spans it
    assert "France" not in found.get("Netherlands", ()) and "Italy" in found.get("the Netherlands", ())


def test_a_possessive_mention_is_compared_without_its_s(nlp):
    from engine.needles.entities import _compared

    doc = nlp("Tomas Reyes's ferry left Valletta at dawn.")
    (person,) = [e for e in doc.ents if e.label_ == "PERSON"]
    start, end, _, text = _compared(person)
    assert text == "Tomas Reyes" == doc.text[start:end]


def test_a_date_replacement_never_names_another_date_of_the_sentence_however_written(nlp):
    """ "from April 1992 until October of 2006" with "April of 1992" for
    "October of 2006" names one date twice, leaving an empty span (W)."""
    found = options_by_sentence(
        nlp,
        "The ferry company was founded in April of 1992. It was sold in October 2006. "
        "Ticket prices went up from April 1992 until October of 2006 at the port.",
    )
    assert found["Ticket prices went up from April 1992 until October of 2006 at the port."] == {}
    # a date the sentence does not hold stays a replacement
    assert found["The ferry company was founded in April of 1992."] == {"April of 1992": ("October of 2006",)}
