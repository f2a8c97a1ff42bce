"""Train the support check's entailment classifier on the public VitaminC pairs.

Usage (needs the [embeddings] extra; ~2 minutes on 2 cores):

    .venv/bin/python scripts/train_entailment.py [--data ../shared/data/contradictions/vitaminc_pairs_public.jsonl]

Every (claim, revision) of the data set is one item: premise = the revision's evidence sentence,
hypothesis = the claim, label = 1 when the revision's verdict is ``True`` (it supports the claim),
0 for ``False`` or ``Neither``. Items are split by Wikipedia page (SHA-256 of the page title), so
no page is on both sides: 60 % train, 40 % held out. The L2 strength is picked by 5-fold cross
validation inside the training pages only. The script writes the weights to
``src/affidavit/support/entailment_weights.json`` and the data card, with the held-out scores, to
``docs/entailment.md``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))

from affidavit.retrieval.embeddings import require_embedder  # noqa: E402
from affidavit.support.entailment import (  # noqa: E402
    LEXICAL_FEATURES,
    MODEL_NAME,
    WEIGHTS_PATH,
    pair_features,
)

DATA = ROOT.parent / "shared" / "data" / "contradictions" / "vitaminc_pairs_public.jsonl"
CARD = ROOT / "docs" / "entailment.md"
LAMBDAS = (10.0, 100.0, 300.0, 1000.0, 3000.0, 10000.0, 30000.0)


def load(path: Path) -> list[tuple[str, str, int, str]]:
    items = []
    for line in path.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        for revision in row["revisions"]:
            label = 1 if revision["label"] == "True" else 0
            items.append((revision["evidence"], row["claim"], label, row["page"]))
    return items


def held_out(page: str) -> bool:
    return hashlib.sha256(page.encode()).digest()[0] < 102  # 40 % of pages


def fit(x: np.ndarray, y: np.ndarray, lam: float, iterations: int = 25) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method (IRLS); the bias is not penalised."""
    n, d = x.shape
    xb = np.hstack([x, np.ones((n, 1))])
    w = np.zeros(d + 1)
    penalty = np.full(d + 1, lam)
    penalty[-1] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-(xb @ w)))
        grad = xb.T @ (p - y) + penalty * w
        hess = (xb * (p * (1 - p))[:, None]).T @ xb + np.diag(penalty + 1e-9)
        step = np.linalg.solve(hess, grad)
        w -= step
        if np.abs(step).max() < 1e-6:
            break
    return w[:-1], float(w[-1])


def predict(x: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    return np.asarray(1.0 / (1.0 + np.exp(-(x @ w + b))))


def log_loss(p: np.ndarray, y: np.ndarray) -> float:
    p = np.clip(p, 1e-7, 1 - 1e-7)
    return float(-(y * np.log(p) + (1 - y) * np.log(1 - p)).mean())


def auc(p: np.ndarray, y: np.ndarray) -> float:
    order = np.argsort(p)
    ranks = np.empty(len(p))
    ranks[order] = np.arange(1, len(p) + 1)
    pos = y == 1
    n_pos, n_neg = pos.sum(), (~pos).sum()
    return float((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    args = parser.parse_args()
    items = load(args.data)
    embedder = require_embedder()
    x = pair_features(embedder, [(p, h) for p, h, _, _ in items], np)
    y = np.asarray([label for _, _, label, _ in items], dtype=np.float64)
    test = np.asarray([held_out(page) for *_, page in items])
    train = ~test
    mean = x[train].mean(axis=0)
    scale = x[train].std(axis=0) + 1e-6
    xs = (x - mean) / scale

    # 5-fold cross validation by page inside the training pages picks the L2 strength.
    pages = [page for *_, page in items]
    fold = np.asarray([hashlib.sha256(("fold" + p).encode()).digest()[0] % 5 for p in pages])
    best = (float("inf"), LAMBDAS[0])
    for lam in LAMBDAS:
        losses = []
        for k in range(5):
            tr, va = train & (fold != k), train & (fold == k)
            w, b = fit(xs[tr], y[tr], lam)
            losses.append(log_loss(predict(xs[va], w, b), y[va]))
        loss = float(np.mean(losses))
        print(f"lambda {lam:>6}: cv log loss {loss:.4f}")
        best = min(best, (loss, lam))
    lam = best[1]
    w, b = fit(xs[train], y[train], lam)
    p_test = predict(xs[test], w, b)
    y_test = y[test]

    # Thresholds as the support check uses them: at or above `accept` an uncertain text is
    # supported; below `reject` it is unsupported. Picked on the training pages.
    p_train = predict(xs[train], w, b)
    neg_train = np.sort(p_train[y[train] == 0])
    accept = float(neg_train[int(len(neg_train) * 0.99)])  # ≤ 1 % of negatives above it
    pos_train = np.sort(p_train[y[train] == 1])
    reject = float(pos_train[int(len(pos_train) * 0.05)])  # ≤ 5 % of positives below it
    reject = min(reject, accept)

    def rate(mask: np.ndarray) -> float:
        return float(mask.mean()) if len(mask) else 0.0

    neg, pos = p_test[y_test == 0], p_test[y_test == 1]
    scores = {
        "held_out_items": int(test.sum()),
        "train_items": int(train.sum()),
        "auc": auc(p_test, y_test),
        "accuracy_at_0.5": rate((p_test >= 0.5) == (y_test == 1)),
        "negatives_accepted": rate(neg >= accept),
        "positives_accepted": rate(pos >= accept),
        "positives_rejected": rate(pos < reject),
        "negatives_rejected": rate(neg < reject),
    }
    version = hashlib.sha256(np.concatenate([w, [b]]).tobytes()).hexdigest()[:12]
    WEIGHTS_PATH.write_text(
        json.dumps(
            {
                "model": MODEL_NAME,
                "version": version,
                "embedding": embedder.name + "@" + embedder.version,
                "features": [*LEXICAL_FEATURES, "u*v[384]", "|u-v|[384]"],
                "l2": lam,
                "accept": accept,
                "reject": reject,
                "bias": b,
                "weights": [round(float(v), 6) for v in w],
                "mean": [round(float(v), 6) for v in mean],
                "scale": [round(float(v), 6) for v in scale],
                "held_out": scores,
            },
            indent=None,
        )
        + "\n",
        encoding="utf-8",
    )
    print(json.dumps({"l2": lam, "accept": accept, "reject": reject, **scores}, indent=2))
    write_card(scores, lam, accept, reject, version)


def write_card(
    scores: dict[str, float], lam: float, accept: float, reject: float, version: str
) -> None:
    text = CARD.read_text(encoding="utf-8") if CARD.exists() else ""
    marker = "<!-- scores: written by scripts/train_entailment.py -->"
    table = "\n".join(
        [
            marker,
            f"Version `{version}`, L2 strength {lam} (5-fold CV by page), thresholds "
            f"accept ≥ {accept:.3f}, reject < {reject:.3f} (picked on the training pages).",
            "",
            "| held-out measure | value |",
            "|---|---|",
            *(
                f"| {k} | {v:.3f} |" if isinstance(v, float) else f"| {k} | {v} |"
                for k, v in scores.items()
            ),
            "<!-- end scores -->",
        ]
    )
    if marker in text:
        head, rest = text.split(marker, 1)
        tail = rest.split("<!-- end scores -->", 1)[1] if "<!-- end scores -->" in rest else ""
        text = head + table + tail
    else:
        text = text + "\n" + table + "\n"
    CARD.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
