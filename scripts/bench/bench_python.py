#!/usr/bin/env python3
"""One timed run of nmt.Translator.translate_batch, as `nmt bench translate` times its own (the
model loaded and one sentence translated first, untimed): one JSON line.

    python3 scripts/bench/bench_python.py MODEL_DIR SRC --threads T --batch-size B [--beam K] [--limit N]
    python3 scripts/bench/bench_python.py --import-time     # seconds of `import nmt`, alone
"""
import argparse
import json
import resource
import sys
import time


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model", nargs="?")
    p.add_argument("src", nargs="?")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--beam", type=int, default=1)
    p.add_argument("--alpha", type=float, default=0.6)
    p.add_argument("--limit", type=int, default=0)
    p.add_argument("--import-time", action="store_true")
    a = p.parse_args()
    t0 = time.perf_counter()
    import nmt
    import_s = time.perf_counter() - t0
    if a.import_time:
        print(json.dumps({"import_seconds": import_s}))
        return
    lines = open(a.src, encoding="utf-8").read().splitlines()
    if a.limit:
        lines = lines[: a.limit]
    t0 = time.perf_counter()
    translator = nmt.Translator(a.model, threads=a.threads)
    translator.translate_batch(lines[:1], beam=a.beam, alpha=a.alpha)  # untimed warm-up, as nmt bench does
    load_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    # As `nmt bench translate` and CTranslate2's default: the translations, no per-token scores.
    results = translator.translate_batch(lines, beam=a.beam, alpha=a.alpha, batch_size=a.batch_size,
                                         split_sentences=False, return_scores=False)
    secs = time.perf_counter() - t0
    tokens = sum(len(r.tokens) for r in results)
    print(json.dumps({"impl": "nmt-python", "sentences": len(lines), "seconds": secs,
                      "sentences_per_s": len(lines) / secs, "target_tokens": tokens,
                      "target_tokens_per_s": tokens / secs, "load_seconds": load_s, "import_seconds": import_s,
                      "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0}))


if __name__ == "__main__":
    sys.exit(main())
