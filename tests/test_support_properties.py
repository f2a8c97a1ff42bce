"""Properties of the support check over generated sentences (issue 22): a change of what meaning
hangs on — numbers swapped between their slots, the two names of a relation exchanged, a
quantifier or hedge changed, a comparative flipped, a negation after a dash dropped — is never
*supported*; a faithful restatement — a number in words or in another unit, a WordNet synonym of a
content word, active ↔ passive with the roles kept — is never *unsupported*."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from affidavit.support import SUPPORTED, UNSUPPORTED, check, wordnet

EXAMPLES = settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow], derandomize=True
)

NAMES = st.sampled_from(
    ["Anna Berg", "Peter Holm", "Maria Lopez", "Jonas Eklund", "Omar Haddad", "Lena Fischer"]
)
WORKS = st.sampled_from(["The Long Road", "Winter Harbour", "The Glass Tower", "Quiet Fields"])
YEARS = st.integers(1850, 2020)
COUNTS = st.integers(2, 950)
PLACES = st.sampled_from(["the village", "the valley", "the old port", "the island"])
RELATIONS = st.sampled_from(
    [("defeated", "was defeated by"), ("hired", "was hired by"), ("sued", "was sued by")]
)
MAKERS = st.sampled_from(
    [("designed", "was designed by"), ("wrote", "was written by"), ("painted", "was painted by")]
)
UNITS = {"metres": 1, "kilometres": 1000}
WORDS = {
    2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine",
    10: "ten", 11: "eleven", 12: "twelve", 20: "twenty", 30: "thirty", 40: "forty", 50: "fifty",
}  # fmt: skip


def _distinct(a: int, b: int) -> bool:
    return a != b


# --- changes are never supported ----------------------------------------------------------------


@EXAMPLES
@given(a=COUNTS, b=COUNTS, year=YEARS, place=PLACES)
def test_numbers_swapped_between_their_slots_are_never_supported(
    a: int, b: int, year: int, place: str
) -> None:
    if a == b:
        return
    moved = check(
        f"In {year} the tax in {place} rose from {b} % to {a} %.",
        [f"In {year} the tax in {place} rose from {a} % to {b} %"],
    )
    assert moved.verdict != SUPPORTED, moved
    nouns = check(
        f"In {year} {place} had {b} houses and {a} shops.",
        [f"In {year} {place} had {a} houses and {b} shops"],
    )
    assert nouns.verdict != SUPPORTED, nouns


@EXAMPLES
@given(first=NAMES, second=NAMES, relation=RELATIONS, year=YEARS)
def test_the_two_names_of_a_relation_exchanged_are_never_supported(
    first: str, second: str, relation: tuple[str, str], year: int
) -> None:
    if first == second:
        return
    active, passive = relation
    quote = f"In {year} {first} {active} {second}"
    for text in (
        f"In {year} {second} {active} {first}.",
        f"In {year} {first} {passive} {second}.",
    ):
        verdict = check(text, [quote])
        assert verdict.verdict != SUPPORTED, (text, verdict)


QUANTIFIED = st.sampled_from(
    [
        ("a few", "all"), ("some", "all"), ("some", "every"), ("many", "all"), ("a few", "most"),
        ("most", "all"),
    ]
)  # fmt: skip
HEDGES = st.sampled_from(["may have", "might have", "perhaps", "possibly", "probably"])


@EXAMPLES
@given(pair=QUANTIFIED, place=PLACES, count=COUNTS)
def test_a_stronger_quantifier_is_never_supported(
    pair: tuple[str, str], place: str, count: int
) -> None:
    weak, strong = pair
    noun = "farm" if strong == "every" else "farms"
    verb = "grows" if strong == "every" else "grow"
    quote = f"{weak.capitalize()} farms in {place} grow barley on {count} hectares"
    verdict = check(
        f"{strong.capitalize()} {noun} in {place} {verb} barley on {count} hectares.", [quote]
    )
    assert verdict.verdict != SUPPORTED, verdict


@EXAMPLES
@given(hedge=HEDGES, name=NAMES, work=WORKS, year=YEARS)
def test_a_dropped_hedge_is_never_supported(hedge: str, name: str, work: str, year: int) -> None:
    if hedge.endswith("have"):
        quote = f"{name} {hedge} written {work} in {year}"
    else:
        quote = f"{name} {hedge} wrote {work} in {year}"
    verdict = check(f"{name} wrote {work} in {year}.", [quote])
    assert verdict.verdict != SUPPORTED, verdict


COMPARED = st.sampled_from(
    [("larger", "smaller"), ("older", "younger"), ("higher", "lower"), ("longer", "shorter")]
)


@EXAMPLES
@given(pair=COMPARED, first=PLACES, second=PLACES)
def test_a_flipped_comparative_is_never_supported(
    pair: tuple[str, str], first: str, second: str
) -> None:
    if first == second:
        return
    word, opposite = pair
    quote = f"The tower in {first} is {word} than the tower in {second}"
    for text in (
        f"The tower in {first} is {opposite} than the tower in {second}.",
        f"The tower in {second} is {word} than the tower in {first}.",
    ):
        verdict = check(text, [quote])
        assert verdict.verdict != SUPPORTED, (text, verdict)


@EXAMPLES
@given(years=COUNTS, dash=st.sampled_from(["—", "–", "-", " - ", " — "]), place=PLACES)
def test_a_negation_after_a_dash_is_never_dropped(years: int, dash: str, place: str) -> None:
    quote = f"For {years} years{dash}no ship reached {place}"
    verdict = check(f"For {years} years a ship reached {place}.", [quote])
    assert verdict.verdict != SUPPORTED, verdict


# --- faithful restatements are never unsupported ------------------------------------------------


@EXAMPLES
@given(number=st.sampled_from(sorted(WORDS)), place=PLACES, unit=st.sampled_from(sorted(UNITS)))
def test_a_number_restated_in_words_is_never_unsupported(
    number: int, place: str, unit: str
) -> None:
    verdict = check(
        f"The wall around {place} is {WORDS[number]} {unit} long.",
        [f"The wall around {place} is {number} {unit} long"],
    )
    assert verdict.verdict != UNSUPPORTED, verdict


@EXAMPLES
@given(km=st.integers(2, 90), place=PLACES)
def test_a_number_restated_in_another_unit_is_never_unsupported(km: int, place: str) -> None:
    metres = f"{km * 1000:,}"
    verdict = check(
        f"The road to {place} is {km} km long.", [f"The road to {place} is {metres} metres long"]
    )
    assert verdict.verdict != UNSUPPORTED, verdict


SYNONYMS = [
    ("completed", "finished", "v"),
    ("began", "started", "v"),
    ("bought", "purchased", "v"),
    ("large", "big", "a"),
    ("quickly", "rapidly", "r"),
    ("built", "constructed", "v"),
]


def test_the_synonym_pairs_are_wordnet_synonyms() -> None:
    lemmas = {"completed": "complete", "finished": "finish", "began": "begin", "started": "start"}
    lemmas |= {"bought": "buy", "purchased": "purchase", "built": "build"}
    lemmas |= {"constructed": "construct"}
    for a, b, pos in SYNONYMS:
        assert wordnet.synonyms(lemmas.get(a, a), lemmas.get(b, b), pos), (a, b)


@EXAMPLES
@given(pair=st.sampled_from(SYNONYMS), name=NAMES, year=YEARS)
def test_a_wordnet_synonym_of_a_content_word_is_never_unsupported(
    pair: tuple[str, str, str], name: str, year: int
) -> None:
    word, synonym, pos = pair
    if pos == "v":
        quote, text = f"{name} {word} the hall in {year}", f"{name} {synonym} the hall in {year}."
    elif pos == "a":
        quote = f"In {year} {name} owned a {word} house"
        text = f"In {year} {name} owned a {synonym} house."
    else:
        quote = f"In {year} {name} {word} sold the house"
        text = f"In {year} {name} {synonym} sold the house."
    verdict = check(text, [quote])
    assert verdict.verdict != UNSUPPORTED, verdict


@EXAMPLES
@given(name=NAMES, work=WORKS, maker=MAKERS, year=YEARS)
def test_active_and_passive_with_the_roles_kept_are_never_unsupported(
    name: str, work: str, maker: tuple[str, str], year: int
) -> None:
    active, passive = maker
    assert (
        check(f"{work} {passive} {name} in {year}.", [f"{name} {active} {work} in {year}"]).verdict
        != UNSUPPORTED
    )
    assert (
        check(f"{name} {active} {work} in {year}.", [f"{work} {passive} {name} in {year}"]).verdict
        != UNSUPPORTED
    )
