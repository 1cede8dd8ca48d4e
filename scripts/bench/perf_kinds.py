#!/usr/bin/env python3
"""Sums the samples of `perf report --no-children --sort dso,sym --stdio -g none` by kind of work
and prints them as a Markdown table: where a training update's or a decoding run's time goes
(scripts/bench/profile-train.sh, scripts/bench/profile-translate.sh).

    perf report -i FILE --no-children --sort dso,sym --stdio -g none | python3 scripts/bench/perf_kinds.py
"""
import re
import sys

# First match wins: the order puts the specific kinds before the libraries that hold them.
KINDS = [
    ("BLAS: matrix products and their packing",
     lambda dso, sym: "openblas" in dso or "mkl" in dso.lower() or re.search(r"gemm|sgemm|mkl_blas", sym)),
    ("nmt int8 kernels (quantisation, products)", lambda dso, sym: "nmt::quant" in sym),
    ("nmt fused kernels", lambda dso, sym: "nmt::kernels" in sym),
    ("threads waiting (OpenMP, yield, scheduler)",
     lambda dso, sym: re.search(r"gomp|iomp", dso) or re.search(r"sched|yield|futex|finish_task_switch|kmp_", sym, re.I)),
    ("allocator and page faults",
     lambda dso, sym: re.search(r"malloc|free|page_fault|memcg|clear_page|mmap|munmap|madvise|alloc_pages|_int_", sym)),
    ("set-up (SentencePiece, loading)", lambda dso, sym: "sentencepiece" in dso or "ld-linux" in dso),
    ("LibTorch: other kernels", lambda dso, sym: "libtorch" in dso or "libc10" in dso),
]


def main() -> None:
    totals = {name: 0.0 for name, _ in KINDS}
    totals["other"] = 0.0
    for line in sys.stdin:
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(.*)", line)
        if not m:
            continue
        pct, dso, sym = float(m.group(1)), m.group(2), m.group(4)
        kind = next((name for name, matches in KINDS if matches(dso, sym)), "other")
        totals[kind] += pct
    print("| where | share of samples |")
    print("|---|---:|")
    for name, share in totals.items():
        print(f"| {name} | {share:.1f} % |")


if __name__ == "__main__":
    main()
