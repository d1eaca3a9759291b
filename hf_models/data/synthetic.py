"""A small synthetic birthplace task, in exactly the file formats of CS224N's birthplace data.

Fictional people (invented surnames, so no real person is described) each get a birthplace drawn from a
few dozen places with a skewed distribution: the most common place covers about 12% of the people, so
that "always answer the most common place" is a meaningful baseline, as "London" is on the real data.
Each person has a `wiki.txt` paragraph stating the birthplace in one of several phrasings, among filler
facts that mention other places (where they died, studied, live), so that the birthplace has to be
picked out rather than being the only place named.

Files written: `wiki.txt` (every person, one paragraph per line), `birth_places_train.tsv` (~80% of
`num_people`), `birth_dev.tsv` (the other ~20%), `birth_test_inputs.tsv` (questions for
`num_people // 10` extra people, who appear in `wiki.txt` only). `load_birthplace` and
`load_birthplace_corpus` read the folder like the real data.
"""

from __future__ import annotations

import os
import random
from pathlib import Path

from ..textio import atomic_write_text

# The first place is the most common one; the weights fall off so that no two places tie at the top.
PLACES = (
    "London, Paris, Berlin, Vienna, Glasgow, Dublin, Chicago, Toronto, Sydney, Melbourne, Boston, Madrid, "
    "Lisbon, Prague, Warsaw, Budapest, Oslo, Stockholm, Copenhagen, Helsinki, Athens, Rome, Naples, Milan, "
    "Geneva, Zurich, Brussels, Amsterdam, Edinburgh, Manchester, Liverpool, Cardiff, Montreal, Auckland, "
    "Cape Town, Mumbai"
).split(", ")
_PLACE_WEIGHTS = [12.0, 6.0, 5.0] + [3.0] * 12 + [2.0] * 21  # London ≈ 12% of the people

_FIRST_NAMES = (
    "Adam Alice Anna Arthur Bruno Carla Clara Daniel David Edith Elena Emil Ernst Eva Felix Frida George "
    "Greta Hannah Hugo Ida Ivan Jacob Jane John Julia Karl Laura Leon Lucy Marcel Maria Martin Nina Oscar "
    "Paul Peter Rosa Samuel Sofia Thomas Vera Victor Walter Zoe"
).split()
_FEMALE_FIRST_NAMES = set(
    (
        "Alice Anna Carla Clara Edith Elena Eva Frida Greta Hannah Ida Jane Julia Laura Lucy Maria Nina Rosa "
        "Sofia Vera Zoe"
    ).split()
)
# Surnames are built from syllables so that they are invented (no real person is described).
_SURNAME_HEADS = "Bar Cal Dor Fen Gar Hol Kes Lom Mar Nor Pel Quen Ros Sel Tam Vor Wen Zal".split()
_SURNAME_TAILS = "aby bridge den ford grave hurst ington kin lowe mont ner quist rick sley ton ville wick zek".split()

_OCCUPATIONS = (
    "painter, journalist, footballer, composer, politician, physicist, novelist, architect, actress, actor, "
    "historian, engineer, cricketer, photographer, poet, film director, botanist, lawyer, singer, sculptor"
).split(", ")
_MONTHS = "January February March April May June July August September October November December".split()

# Sentences stating the birthplace. `{full}` is the full name, `{last}` the surname.
_BIRTH_TEMPLATES = [
    "{full} was born in {place} in {year} .",
    "Born in {place}, {last} became {a_occupation} after leaving school .",
    "{full} ({day} {month} {year} {place} - {dday} {dmonth} {dyear} {death}) was {a_occupation} .",
    "{full} (born {year} in {place}) is {a_occupation} .",
    "{last} was born on {day} {month} {year} in {place} .",
    "{full} is {a_occupation} who was born in {place} and now lives in {other} .",
    "{last} was born at {place} in {year}, the {child} of {a_occupation2} .",
    "A native of {place}, {full} worked as {a_occupation} for most of {pronoun} life .",
]
# Filler facts; they name other places on purpose.
_FILLER_TEMPLATES = [
    "{last} studied at the University of {other} .",
    "{last} moved to {other} in {year2} .",
    "{last} died in {death} in {dyear} .",
    "{pronoun_cap} first exhibition was held in {other} in {year2} .",
    "{last} married {a_occupation2} from {other} .",
    "{last} was awarded a prize by the academy of {other} in {year2} .",
    "{last} spent the last years of {pronoun} life in {death} .",
]


def _make_people(n: int, rng: random.Random) -> list[tuple[str, str]]:
    names: set[tuple[str, str]] = set()
    max_names = len(_FIRST_NAMES) * len(_SURNAME_HEADS) * len(_SURNAME_TAILS)
    if n > max_names:
        raise ValueError(f"at most {max_names} distinct synthetic people, asked for {n}")
    while len(names) < n:
        names.add((rng.choice(_FIRST_NAMES), rng.choice(_SURNAME_HEADS) + rng.choice(_SURNAME_TAILS)))
    return sorted(names)  # sorted, then shuffled by the caller: independent of set iteration order


def _paragraph(first: str, last: str, place: str, rng: random.Random) -> str:
    others = [p for p in PLACES if p != place]
    year = rng.randint(1820, 1990)
    fields = {
        "full": f"{first} {last}",
        "last": last,
        "place": place,
        "year": year,
        "year2": year + rng.randint(18, 40),
        "day": rng.randint(1, 28),
        "month": rng.choice(_MONTHS),
        "dday": rng.randint(1, 28),
        "dmonth": rng.choice(_MONTHS),
        "dyear": year + rng.randint(45, 90),
        "death": rng.choice(others),
        "other": rng.choice(others),
        "occupation": rng.choice(_OCCUPATIONS),
        "occupation2": rng.choice(_OCCUPATIONS),
    }
    female = first in _FEMALE_FIRST_NAMES
    fields["pronoun"], fields["child"] = ("her", "daughter") if female else ("his", "son")
    fields["pronoun_cap"] = fields["pronoun"].capitalize()
    for key in ("occupation", "occupation2"):
        fields[f"a_{key}"] = ("an " if fields[key][0] in "aeiou" else "a ") + fields[key]
    sentences = [rng.choice(_BIRTH_TEMPLATES).format(**fields)]
    for template in rng.sample(_FILLER_TEMPLATES, rng.randint(0, 3)):
        sentences.append(template.format(**fields))
    # The name opens the paragraph, as in wiki.txt ("Khatchig Mouradian. Khatchig Mouradian is ...").
    head, rest = sentences[0], sentences[1:]
    rng.shuffle(rest)
    return f"{first} {last}. " + " ".join([head, *rest])


def write_synthetic_birthplace(output_dir: str | os.PathLike, num_people: int = 500, seed: int = 0) -> Path:
    """Write a synthetic birthplace data set to `output_dir` and return that folder.

    `num_people` people are split ~80/20 between `birth_places_train.tsv` and `birth_dev.tsv`;
    `num_people // 10` extra people form `birth_test_inputs.tsv` (questions only). All of them have a
    paragraph in `wiki.txt`. The same `seed` always gives the same files.
    """
    if num_people < 10:
        raise ValueError(f"num_people must be at least 10, got {num_people}")
    rng = random.Random(seed)
    num_test = num_people // 10
    people = _make_people(num_people + num_test, rng)
    rng.shuffle(people)
    birthplaces = rng.choices(PLACES, weights=_PLACE_WEIGHTS, k=len(people))
    records = [
        (f"{first} {last}", first, last, place) for (first, last), place in zip(people, birthplaces, strict=True)
    ]
    num_train = round(0.8 * num_people)
    train, dev, test = records[:num_train], records[num_train:num_people], records[num_people:]

    out = Path(output_dir)
    out.mkdir(parents=True, exist_ok=True)
    paragraphs = [_paragraph(first, last, place, rng) for _, first, last, place in records]
    rng.shuffle(paragraphs)  # wiki order independent of the split
    atomic_write_text(out / "wiki.txt", "".join(p + "\n" for p in paragraphs))
    for filename, rows in (("birth_places_train.tsv", train), ("birth_dev.tsv", dev)):
        atomic_write_text(out / filename, "".join(f"Where was {full} born?\t{place}\n" for full, _, _, place in rows))
    atomic_write_text(out / "birth_test_inputs.tsv", "".join(f"Where was {full} born?\n" for full, _, _, _ in test))
    return out
