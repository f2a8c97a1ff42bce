"""Build the support check's paraphrase lexicon from the WordNet 3.0 database files.

The support check (``affidavit.support.paraphrase``) knows which words restate which: synonyms
(two lemmas of one synset), hypernyms (a more general word), antonyms, and the derivations that
turn a verb into its noun ("establish" / "establishment"). It reads them from a compact file
shipped as package data, built by this script from the database Debian's ``wordnet-base``
package installs (``/usr/share/wordnet``; ``scripts/setup_testdata.sh`` installs it). The
package never needs Debian, or WordNet's own files, at run time.

    python scripts/build_wordnet_lexicon.py [--wordnet /usr/share/wordnet]
        [--out src/affidavit/support/data/wordnet.tsv.gz]

The output is deterministic (same input, same bytes: gzip without a time stamp): a text
header — a first line naming the format, WordNet's licence notice as ``#`` lines, and one line of
JSON naming each section's place in the payload — then the payload, little-endian int32 arrays
and one UTF-8 text, read at run time without parsing a line per entry:

    lemmas        "lemma\tpos" keys, one a line, sorted (lower case, spaces as "_"; pos is
                  n | v | a | r); the n-th key is lemma number n
    sense_at      per lemma, where its synsets start in ``senses`` (one more entry at the end)
    senses        synset numbers, each lemma's most frequent sense first
    hyper_at      per synset, where its hypernyms (and instance hypernyms) start in ``hyper``
    hyper         synset numbers
    similar_at    per synset (adjectives), where its "similar to" synsets start in ``similar``
    similar       synset numbers
    antonym       lemma pairs (WordNet's lexical "!" pointer), both ways, sorted: a flat array
                  a0 b0 a1 b1 ...
    derived       derivationally related forms ("+"), likewise
    pertains      pertainyms ("\\": an adjective and its noun, an adverb and its adjective)

WordNet 3.0 Copyright 2006 by Princeton University. All rights reserved. (The full notice is
in the output's header and in ``src/affidavit/support/data/WORDNET-LICENSE``.)
"""

from __future__ import annotations

import argparse
import gzip
import io
import json
import sys
from array import array
from pathlib import Path

POS_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
ROOT = Path(__file__).resolve().parents[1]
LICENSE = ROOT / "src" / "affidavit" / "support" / "data" / "WORDNET-LICENSE"


def _pos(ss_type: str) -> str:
    return "a" if ss_type == "s" else ss_type


def read(wordnet: Path) -> dict[str, array[int] | str]:
    """The lexicon's sections, from the database in ``wordnet``."""
    number: dict[tuple[str, int], int] = {}
    synsets: list[tuple[list[str], list[tuple[str, str, int, str]]]] = []
    for pos, name in POS_FILES.items():
        for line in (wordnet / f"data.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue  # the licence header of the data file
            fields = line.split(" | ")[0].split()
            count = int(fields[3], 16)
            words = [_bare(fields[4 + 2 * k].lower()) for k in range(count)]
            at = 4 + 2 * count
            pointers: list[tuple[str, str, int, str]] = []
            for _ in range(int(fields[at])):
                symbol, target, target_pos, source_target = fields[at + 1 : at + 5]
                pointers.append((symbol, _pos(target_pos), int(target), source_target))
                at += 4
            number[(pos, int(fields[0]))] = len(synsets)
            synsets.append((words, pointers))
    pos_of = {n: pos for (pos, _), n in number.items()}
    keyed: dict[str, list[int]] = {}
    for pos, name in POS_FILES.items():
        for line in (wordnet / f"index.{name}").read_text(encoding="latin-1").splitlines():
            if line.startswith("  "):
                continue
            fields = line.split()
            count = int(fields[2])
            keyed[f"{fields[0]}\t{pos}"] = [number[(pos, int(o))] for o in fields[-count:]]
    hyper_at, hyper, similar_at, similar = array("i"), array("i"), array("i"), array("i")
    pairs: dict[str, set[tuple[str, str]]] = {"antonym": set(), "derived": set(), "pertains": set()}
    kinds = {"!": "antonym", "+": "derived", "\\": "pertains"}
    for n, (words, pointers) in enumerate(synsets):
        hyper_at.append(len(hyper))
        similar_at.append(len(similar))
        for symbol, target_pos, target, source_target in pointers:
            goal = number[(target_pos, target)]
            if symbol in ("@", "@i"):
                hyper.append(goal)
            elif symbol == "&":
                similar.append(goal)
            elif symbol in kinds:
                source, other = int(source_target[:2], 16), int(source_target[2:], 16)
                theirs = synsets[goal][0]
                links = (
                    [(words[source - 1], theirs[other - 1])]
                    if source and other
                    else [(w, o) for w in words for o in theirs]
                )
                for a, b in links:
                    a_key, b_key = f"{a}\t{pos_of[n]}", f"{b}\t{target_pos}"
                    if a_key in keyed and b_key in keyed:
                        pairs[kinds[symbol]] |= {(a_key, b_key), (b_key, a_key)}
    hyper_at.append(len(hyper))
    similar_at.append(len(similar))
    keys = sorted(keyed)
    index = {key: n for n, key in enumerate(keys)}
    sense_at, senses = array("i"), array("i")
    for key in keys:
        sense_at.append(len(senses))
        senses.extend(keyed[key])
    sense_at.append(len(senses))
    sections: dict[str, array[int] | str] = {
        "lemmas": "\n".join(keys),
        "sense_at": sense_at,
        "senses": senses,
        "hyper_at": hyper_at,
        "hyper": hyper,
        "similar_at": similar_at,
        "similar": similar,
    }
    for kind, found in pairs.items():
        flat = array("i")
        for a, b in sorted((index[a], index[b]) for a, b in found):
            flat.extend((a, b))
        sections[kind] = flat
    return sections


def _bare(word: str) -> str:
    """An adjective's lemma without its syntactic marker (``galore(ip)``)."""
    return word.split("(")[0]


def write(sections: dict[str, array[int] | str], out: Path) -> int:
    """Write the lexicon file; return its size in bytes."""
    payload = bytearray()
    places: dict[str, list[int | str]] = {}
    for name, data in sections.items():
        if isinstance(data, str):
            raw, typecode = data.encode("utf-8"), "utf-8"
        else:
            if sys.byteorder != "little":
                data = array("i", data)
                data.byteswap()
            raw, typecode = data.tobytes(), "int32le"
        places[name] = [len(payload), len(raw), typecode]
        payload += raw
    header = "AFFIDAVIT-WORDNET 1\n"
    header += "".join(f"# {line}".rstrip() + "\n" for line in LICENSE.read_text().splitlines())
    header += json.dumps(places, sort_keys=True) + "\n"
    buffer = io.BytesIO()
    with gzip.GzipFile(fileobj=buffer, mode="wb", mtime=0, compresslevel=9) as gz:
        gz.write(header.encode("utf-8") + bytes(payload))
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_bytes(buffer.getvalue())
    return len(buffer.getvalue())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--wordnet", type=Path, default=Path("/usr/share/wordnet"))
    parser.add_argument(
        "--out", type=Path, default=ROOT / "src" / "affidavit" / "support" / "data" / "wordnet.gz"
    )
    args = parser.parse_args()
    if not (args.wordnet / "data.noun").is_file():
        parser.error(
            f"no WordNet database in {args.wordnet}: install it (apt-get install wordnet-base, "
            "or scripts/setup_testdata.sh)"
        )
    sections = read(args.wordnet)
    size = write(sections, args.out)
    print(f"{args.out}: {size:,} bytes, {len(sections['hyper_at']) - 1:,} synsets")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
