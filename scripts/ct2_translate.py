#!/usr/bin/env python3
"""Translates with a CTranslate2 model written by scripts/nmt_to_ctranslate2.py, as nmt would.

    python3 scripts/ct2_translate.py CT2_DIR [-i SRC] [-o OUT] [--beam K] [--batch-size B]
        [--threads T] [--compute-type int8] [--pieces-out FILE]
    python3 scripts/ct2_translate.py CT2_DIR --bench -i SRC ...   # one JSON line, like `nmt bench translate`

Sources are segmented with the model directory's spm.model (the SentencePiece model nmt trained,
or spm.src.model when the model has separate vocabularies;
the same normalisation, as its rules travel inside the model), </s> is appended by CTranslate2
(add_source_eos) and output pieces are decoded by SentencePiece, as nmt decodes its ids.

Length limit: nmt stops a row after floor(a * source subwords) + b subwords (translate
--max-len-a/-b, 1.5 and 10 by default). CTranslate2 has one max_decoding_length per call, so
--exact-limits translates each group of equal source length with that group's limit (output
identical in rule to nmt's; the equivalence check uses it); otherwise each batch of B
length-sorted sentences (nmt's batches) gets the limit of its longest source, never less than
nmt gives any of its rows.
"""
import argparse
import json
import os
import resource
import sys
import time


def limit_of(n_pieces, a, b):
    return max(1, int(a * n_pieces) + b)


def read_lines(path):
    with (open(path, encoding="utf-8") if path else sys.stdin) as f:
        return [line.rstrip("\n") for line in f]


def batches(order, size):
    return [order[i : i + size] for i in range(0, len(order), size)]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model", help="CTranslate2 model directory (with spm.model)")
    p.add_argument("-i", "--input", help="source text (default: stdin)")
    p.add_argument("-o", "--output", help="translations (default: stdout)")
    p.add_argument("--pieces-out", help="also write the output pieces, space separated, one line per sentence")
    p.add_argument("--scores-out", help="also write each output's log-probability (sum over its pieces and </s>)")
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--alpha", type=float, default=0.6, help="CTranslate2's length_penalty for beam search")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--batch-type", choices=["examples", "tokens"], default="examples",
                   help="tokens: CTranslate2's own token-budget batching of the whole input (--batch-size tokens)")
    p.add_argument("--threads", type=int, default=1, help="intra_threads (inter_threads is 1)")
    p.add_argument("--compute-type", default="default", help="float32, int8, ... (default: as stored)")
    p.add_argument("--max-len-a", type=float, default=1.5)
    p.add_argument("--max-len-b", type=int, default=10)
    p.add_argument("--exact-limits", action="store_true", help="nmt's per-sentence length limit exactly (see above)")
    p.add_argument("--limit", type=int, default=0, help="only the first N sentences (0 = all)")
    p.add_argument("--bench", action="store_true", help="print one JSON line of speed figures instead of text")
    a = p.parse_args()
    if a.bench and not a.input:
        p.error("--bench needs -i")

    t_load = time.perf_counter()
    import ctranslate2  # noqa: PLC0415
    import sentencepiece  # noqa: PLC0415

    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(a.model, "spm.model"))
    # A model with separate vocabularies segments its sources with its own source model.
    src_spm = os.path.join(a.model, "spm.src.model")
    sp_src = sentencepiece.SentencePieceProcessor(model_file=src_spm) if os.path.exists(src_spm) else sp
    translator = ctranslate2.Translator(a.model, device="cpu", compute_type=a.compute_type,
                                        intra_threads=a.threads, inter_threads=1)
    load_s = time.perf_counter() - t_load

    lines = read_lines(a.input)
    if a.limit:
        lines = lines[: a.limit]
    sources = [sp_src.encode(line, out_type=str) for line in lines]
    options = dict(beam_size=a.beam, length_penalty=a.alpha, return_scores=a.scores_out is not None)

    def run(ids, max_len, **extra):
        return translator.translate_batch([sources[i] for i in ids], max_decoding_length=max_len, **options, **extra)

    def translate_all():
        out = [None] * len(sources)
        if a.exact_limits:
            groups = {}
            for i, s in enumerate(sources):
                groups.setdefault(len(s), []).append(i)
            parts = [(ids, limit_of(n, a.max_len_a, a.max_len_b)) for n, ids in groups.items()]
            parts = [(chunk, lim) for ids, lim in parts for chunk in batches(ids, a.batch_size)]
        elif a.batch_type == "tokens":
            ids = list(range(len(sources)))
            longest = max((len(s) for s in sources), default=0)
            parts = [(ids, limit_of(longest, a.max_len_a, a.max_len_b))]
        else:
            order = sorted(range(len(sources)), key=lambda i: len(sources[i]))
            parts = [(chunk, limit_of(max(len(sources[i]) for i in chunk), a.max_len_a, a.max_len_b))
                     for chunk in batches(order, a.batch_size)]
        extra = dict(max_batch_size=a.batch_size, batch_type="tokens") if a.batch_type == "tokens" else {}
        for ids, max_len in parts:
            for i, r in zip(ids, run(ids, max_len, **extra)):
                out[i] = r
        return out

    if a.bench:
        run([0], limit_of(len(sources[0]), a.max_len_a, a.max_len_b))  # untimed warm-up, as nmt bench does
        t0 = time.perf_counter()
        results = translate_all()
        secs = time.perf_counter() - t0
        tokens = sum(len(r.hypotheses[0]) for r in results)
        print(json.dumps({
            "impl": "ctranslate2", "version": ctranslate2.__version__, "compute_type": translator.compute_type,
            "batch_size": a.batch_size, "batch_type": a.batch_type, "beam": a.beam, "sentences": len(lines),
            "seconds": secs, "sentences_per_s": len(lines) / secs, "target_tokens": tokens,
            "target_tokens_per_s": tokens / secs, "load_seconds": load_s,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
        }))
        return

    results = translate_all()
    hyps = [r.hypotheses[0] for r in results]
    text = "".join(sp.decode(h) + "\n" for h in hyps)
    if a.output:
        with open(a.output, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
        sys.stdout.flush()
    if a.pieces_out:
        with open(a.pieces_out, "w", encoding="utf-8") as f:
            f.writelines(" ".join(h) + "\n" for h in hyps)
    if a.scores_out:
        with open(a.scores_out, "w", encoding="utf-8") as f:
            f.writelines(f"{r.scores[0]:.6f}\n" for r in results)


if __name__ == "__main__":
    main()
