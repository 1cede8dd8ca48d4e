"""Compares the CPU engine's translations with LibTorch's (engine-equivalence.sh runs both).

  engine_equivalence.py differences NATIVE.json TORCH.json SRC OUT_PREFIX
      writes OUT_PREFIX.src (the sources of the lines that differ), OUT_PREFIX.native and
      OUT_PREFIX.torch (each engine's translation of them), for forced scoring on the other engine.
  engine_equivalence.py table NAME SEARCH NATIVE.json TORCH.json OUT_PREFIX ALPHA
      reads OUT_PREFIX.torch_on_native and OUT_PREFIX.native_on_torch (`nmt score --per-token`:
      LibTorch's hypotheses scored on the engine and the engine's scored on LibTorch) and prints
      one Markdown row.

Where the tokens agree, the per-token log-probabilities are compared (the largest difference is
printed). Where they part, each engine scores the other's hypothesis: in greedy search, at the
first token that differs, the gap between the two candidates' log-probabilities on each engine
(a tie when neither gap exceeds 1e-5: float32 rounding chose between them); in beam search, the
gap between the two hypotheses' length-normalised scores on each engine. A hypothesis whose
re-tokenised text gives other pieces (its prefix scores differ by over 1e-4 from the
translation's) cannot be scored so and is counted as unverified.
"""
import json
import sys

TIE = 1e-5
SAME = 1e-4


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def differing(a, b):
    return [i for i, (x, y) in enumerate(zip(a, b)) if x["tokens"] != y["tokens"]]


def differences(native_path, torch_path, src_path, out):
    native, torch = read_json(native_path), read_json(torch_path)
    with open(src_path, encoding="utf-8") as f:
        src = f.read().split("\n")
    if len(native) != len(torch):
        sys.exit(f"engine_equivalence: {len(native)} native lines, {len(torch)} torch lines")
    idx = differing(native, torch)
    for suffix, lines in (("src", [src[i] for i in idx]), ("native", [native[i]["translation"] for i in idx]),
                          ("torch", [torch[i]["translation"] for i in idx])):
        with open(f"{out}.{suffix}", "w", encoding="utf-8") as f:
            f.write("".join(line + "\n" for line in lines))


def read_per_token(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.rstrip("\n").split("\t")
            rows.append([float(v) for v in fields[1].split()] if len(fields) > 1 else [])
    return rows


def gnmt(log_prob, n, alpha):
    return log_prob / (((5 + n) / 6) ** alpha)


def first_difference(x, y):
    return next(t for t in range(min(len(x), len(y)) + 1) if t >= min(len(x), len(y)) or x[t] != y[t])


def gap(own, other_scored, search, alpha):
    """The chooser's margin for its own hypothesis over the other's, on the chooser's engine."""
    if len(other_scored["values"]) != len(other_scored["tokens"]) + 1:
        return None
    t = other_scored["t"]
    mine = own["token_log_probs"]
    if any(abs(p - q) > SAME for p, q in zip(mine[:t], other_scored["values"][:t])):
        return None  # the other's text re-tokenises into other pieces
    if search == "greedy":
        return mine[t] - other_scored["values"][t]
    return own["score"] - gnmt(sum(other_scored["values"]), len(other_scored["values"]), alpha)


def table(name, search, native_path, torch_path, out, alpha):
    native, torch = read_json(native_path), read_json(torch_path)
    idx = differing(native, torch)
    torch_on_native = read_per_token(f"{out}.torch_on_native")
    native_on_torch = read_per_token(f"{out}.native_on_torch")
    same_max = 0.0
    for x, y in zip(native, torch):
        if x["tokens"] == y["tokens"]:
            same_max = max([same_max] + [abs(p - q) for p, q in zip(x["token_log_probs"], y["token_log_probs"])])
    ties = non_ties = unverified = 0
    worst = 0.0
    for k, i in enumerate(idx):
        t = first_difference(native[i]["tokens"], torch[i]["tokens"])
        g_native = gap(native[i], {"values": torch_on_native[k], "tokens": torch[i]["tokens"], "t": t}, search, alpha)
        g_torch = gap(torch[i], {"values": native_on_torch[k], "tokens": native[i]["tokens"], "t": t}, search, alpha)
        if g_native is None or g_torch is None:
            unverified += 1
            continue
        g = max(abs(g_native), abs(g_torch))
        worst = max(worst, g)
        if g <= TIE:
            ties += 1
        else:
            non_ties += 1
    n = len(native)
    print(f"| {name} | {search} | {n} | {n - len(idx)} | {len(idx)} | {ties} | {non_ties} | {unverified} | "
          f"{same_max:.1e} | {worst:.1e} |")


if __name__ == "__main__":
    if sys.argv[1] == "differences" and len(sys.argv) == 6:
        differences(*sys.argv[2:6])
    elif sys.argv[1] == "table" and len(sys.argv) == 8:
        table(*sys.argv[2:7], float(sys.argv[7]))
    else:
        sys.exit(__doc__)
