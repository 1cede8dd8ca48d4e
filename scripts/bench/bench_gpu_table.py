#!/usr/bin/env python3
"""The table of scripts/bench/bench-gpu.sh from its results.jsonl (also of a run that was cut short:
the rows measured so far). Usage: bench_gpu_table.py RESULTS.jsonl DEVICE VERSIONS"""
import json, sys
rows = {}
for line in open(sys.argv[1]):
    j = json.loads(line)
    rows[j["key"]] = j
print(f"Device: {sys.argv[2]}. {sys.argv[3]}.\n")
print("| model | measure | nmt | PyTorch eager | nmt / PyTorch | peak GPU MiB (nmt / PyTorch) | GPU util % (nmt / PyTorch) |")
print("|---|---|---:|---:|---:|---|---|")
def cell(j, key):
    v = j["result"].get(key) if j else None
    return v
def fmt(v, spec=".0f"):
    return "-" if v is None or v < 0 else format(v, spec)
for key in rows:
    if not key.endswith("/nmt"):
        continue
    base = key[: -len("/nmt")]
    model, rest = base.split("/", 1)
    n, t = rows[key], rows.get(base + "/torch")
    metric = "tokens_per_s" if "/train/" in key else "sentences_per_s"
    nv, tv = cell(n, metric), cell(t, metric)
    ratio = f"{nv / tv:.2f}x" if nv and tv else "-"
    if n["result"].get("failed") or (t and t["result"].get("failed")):
        ratio = "failed: " + ", ".join(side for side, j in (("nmt", n), ("PyTorch", t)) if j and j["result"].get("failed"))
    what = rest.replace("train/", "training tokens/s, ").replace("beam1/", "greedy sentences/s, ").replace("beam5/", "beam 5 sentences/s, ")
    mem = f"{fmt(cell(n, 'peak_gpu_mb'))} / {fmt(cell(t, 'peak_gpu_mb'))}"
    util = f"{fmt(n.get('gpu_util'))} / {fmt(t.get('gpu_util') if t else None)}"
    print(f"| {model} | {what} | {fmt(nv, '.1f')} | {fmt(tv, '.1f')} | {ratio} | {mem} | {util} |")
