"""Same verdicts before and after a change to the support check: record, then compare.

The inputs are what the check decides in real use: every VitaminC claim against each revision of
its evidence (alone, with the article's title as context, and as a heading would be checked, with
half the content words to cover), those claims against two revisions joined (more than one
quote), and every active claim of a vault (``--vault``, e.g. one ``bench/bench_ingest.py --vault
DIR`` left behind) against its quotes' spans and the headings above them, as the gate and lint
check it. Each verdict, its missing words and its reason are written to ``--save FILE`` (one JSON
line per input); ``--compare FILE`` runs the current code over the same inputs and fails on the
first difference.

    .venv/bin/python bench/support_same.py --save before.jsonl [--vault DIR] [--items 0] [--writer]
    .venv/bin/python bench/support_same.py --compare before.jsonl [--vault DIR] [--items 0] [--writer]
    .venv/bin/python bench/support_same.py --compare before.jsonl --attacks 600
    .venv/bin/python bench/support_same.py --fixture tests/data/support_verdicts.jsonl --writer

``--kept FILE`` runs the checks with that file as the vault's kept parses
(:mod:`affidavit.support.kept`): a first run fills it, a second (a new process) reads every parse
from it; both must give the recorded verdicts.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path

from same import save_or_compare

from affidavit.support import check, headings_above

SHARED = Path(
    os.environ.get("AFFIDAVIT_SHARED_DATA", Path(__file__).resolve().parents[2] / "shared" / "data")
)

FIXTURE_EVERY = 40
Item = tuple[str, tuple[str, ...], float, tuple[str, ...]]


def vitaminc(limit: int) -> Iterator[Item]:
    path = SHARED / "contradictions" / "vitaminc_pairs_public.jsonl"
    with path.open(encoding="utf-8") as handle:
        for n, line in enumerate(handle):
            if limit and n >= limit:
                return
            row = json.loads(line)
            title = row["page"].replace("-LRB-", "(").replace("-RRB-", ")")
            evidence = [r["evidence"] for r in row["revisions"]]
            for quote in evidence:
                yield row["claim"], (quote,), 0.0, ()
                yield row["claim"], (quote,), 0.0, (title,)
                yield row["claim"], (quote,), 0.5, ()
                yield title, (quote,), 0.5, ()
            yield row["claim"], tuple(evidence[:2]), 0.0, (title,)
            yield evidence[0], (evidence[-1],), 0.0, ()


def vault_claims(directory: Path) -> Iterator[Item]:
    """Every active claim of the vault with its spans and headings, as the gate reads them."""
    from affidavit.sources.store import SourceStore
    from affidavit.vault import open_vault

    vault = open_vault(directory)
    store = SourceStore(vault)
    rows = vault.db.execute(
        'SELECT c.id, c.text, e.source_id, e.start, e."end", e.quote FROM claims c '
        "JOIN evidence e ON e.claim_id = c.id WHERE c.status = 'active' ORDER BY c.id, e.idx"
    ).fetchall()
    claims: dict[str, tuple[str, list[str], list[str]]] = {}
    for claim_id, text, source_id, start, end, quote in rows:
        entry = claims.setdefault(claim_id, (text, [], []))
        if start is None:
            entry[1].append(quote)
            continue
        source = store.text(source_id)
        entry[1].append(source[start:end])
        entry[2].extend(headings_above(source, start))
    for text, quotes, context in claims.values():
        yield text, tuple(quotes), 0.0, tuple(dict.fromkeys(context))
        yield text, tuple(quotes), 0.5, ()
    vault.close()


def writer() -> Iterator[Item]:
    """The public writer set's claims (with the article title as context), titles and summaries,
    as ``bench_support_writer.py`` checks them (both splits)."""
    from bench_support_writer import items as writer_items
    from bench_support_writer import load

    for _what, _label, text, quotes, context, share in writer_items(load("all")):
        yield text, tuple(quotes), share, tuple(context)


def attacks(sentences: int) -> Iterator[Item]:
    """The attack generator's items (``attacks_support.py --sentences N``, seed 7): every attack
    and control, as it checks them (a claim's share, no context)."""
    from attacks_support import pairs
    from attacks_support import sentences as attack_sentences

    for _kind, claim, quotes in pairs(attack_sentences(sentences, 7), 7):
        yield claim, tuple(quotes), 0.0, ()


def verdicts(items: list[Item]) -> Iterator[str]:
    for text, quotes, share, context in items:
        found = check(text, quotes, share=share, context=context)
        yield json.dumps([found.verdict, list(found.missing), found.reason], ensure_ascii=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    side = parser.add_mutually_exclusive_group(required=True)
    side.add_argument("--save", type=Path)
    side.add_argument("--compare", type=Path)
    side.add_argument(
        "--fixture",
        type=Path,
        help="write every 40th VitaminC input and every 4th of the writer set with its verdict",
    )
    parser.add_argument("--vault", type=Path, action="append", default=[])
    parser.add_argument("--items", type=int, default=0, help="VitaminC claims (0: all)")
    parser.add_argument("--writer", action="store_true", help="also the public writer set")
    parser.add_argument(
        "--attacks", type=int, default=0, help="the attack generator's items of N sentences"
    )
    parser.add_argument("--kept", type=Path, help="a kept-parses file to read and fill")
    args = parser.parse_args()
    items = list(vitaminc(args.items))
    if args.fixture is not None:
        items = items[::FIXTURE_EVERY]
    if args.writer:
        items += list(writer())[:: 4 if args.fixture is not None else 1]
    if args.attacks:
        items += list(attacks(args.attacks))
    for directory in args.vault:
        items += vault_claims(directory)
    started = time.process_time()
    if args.kept is not None:
        from affidavit.support.kept import ParseStore
        from affidavit.support.parse import keeping

        store = ParseStore(args.kept, limit=1 << 30)
        with keeping(store):
            out = list(verdicts(items))
        print(f"kept parses: {store.count()} in {args.kept}")
    else:
        out = list(verdicts(items))
    if args.fixture is not None:
        args.fixture.write_text(
            "".join(
                json.dumps(
                    {"text": t, "quotes": q, "share": s, "context": c, "found": json.loads(o)},
                    ensure_ascii=False,
                )
                + "\n"
                for (t, q, s, c), o in zip(items, out, strict=True)
            ),
            encoding="utf-8",
        )
        return 0
    cpu = time.process_time() - started
    print(f"{len(items)} inputs, {cpu:.2f} s CPU ({cpu / len(items) * 1e6:.0f} µs each)")
    return save_or_compare(
        out,
        args.save,
        args.compare,
        lambda n: f"input {n} {items[n]!r}",
        "all verdicts, missing words and reasons identical",
    )


if __name__ == "__main__":
    raise SystemExit(main())
