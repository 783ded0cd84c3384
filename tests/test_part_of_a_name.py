"""ner spans that are part of a larger name (engine.needles.part_of_a_name) and
places that are no UN member state (engine.needles.places), on a real
en_core_web_sm parse (the `nlp` session fixture) of a document of our own."""

from __future__ import annotations

import pytest

from needle_helpers import sentence_entity_options
from engine.needles.places import place_of, same_kind_places

DOCUMENT = (
    "The US dollar rose against the euro, and Chile sold copper. The UK sold wheat to Chile, and the US sold maize. "
    "Farmers in the UK wanted more, and the US agreed. The Vienna talks on grain ended without a deal in April. "
    "Envoys then flew from Geneva to Ottawa. Vienna hosted a second round in May. Morocco shipped phosphate to Chile. "
    "Western Sahara holds much of the phosphate. Algeria bought grain from Chile."
)


@pytest.fixture(scope="module")
def options(nlp):
    return sentence_entity_options(nlp, DOCUMENT)


def test_a_place_that_names_a_currency_is_not_replaced_alone(options):
    # "The UK dollar" names no currency; Chile, a country in its own right, is still an option
    assert set(options["The US dollar rose against the euro, and Chile sold copper."]) == {"Chile"}
    # the same abbreviation heading its own noun phrase keeps its swaps
    assert options["Farmers in the UK wanted more, and the US agreed."]


def test_a_place_that_names_an_event_is_not_replaced_alone(options):
    # "the Geneva talks" is another event's name; the date of the sentence may still move
    assert set(options["The Vienna talks on grain ended without a deal in April."]) == {"April"}
    assert options["Vienna hosted a second round in May."]["Vienna"] == ("Geneva", "Ottawa")


def test_a_territory_that_is_no_un_member_is_never_offered_for_a_country_nor_replaced(options):
    assert "Western Sahara" not in options["Morocco shipped phosphate to Chile."]["Morocco"]
    assert options["Western Sahara holds much of the phosphate."] == {}
    assert place_of("Western Sahara").kind == "territory" and place_of("Morocco").kind == "country"
    assert same_kind_places("Spain", [], ["Taiwan", "Hong Kong", "Palestine", "Portugal"]) == ["Portugal"]
    # every member is a country, however the table writes its code (Greece and the UK as patterns there)
    assert all(place_of(name).kind == "country" for name in ("Greece", "United Kingdom", "GB", "Britain", "South Sudan"))
