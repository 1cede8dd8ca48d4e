#!/usr/bin/env python3
"""Helper of scripts/bench/bench-constraints.sh: draws lexical constraints from reference translations
and reports coverage, quality and speed of constrained decoding. Standard library only.

  constraints_eval.py sample --ref REF --out FILE --min 1 --max 3 --seed 1 [--lines N]
  constraints_eval.py report OUT_DIR --sets test_2016_flickr,... --settings 1-3,1-2

Sampling (the protocol of Post & Vilar 2018, Hu et al. 2019: constraints are n-grams of the
reference, so that meeting them should help): for each reference line, with a generator seeded
by "SEED/MIN-MAX/LINE" (the same line gets the same phrases whatever --lines is), draw K
uniformly from MIN..MAX; then K times draw n uniformly from 1..3 and a start uniformly among the
spans of n whitespace tokens that overlap no phrase already chosen. The span is trimmed: whole
punctuation-only tokens come off its ends, and so do punctuation characters stuck to its first
and last token (Multi30k is not tokenised: "blanche." gives "blanche", '"Bonjour' gives
"Bonjour"); a span that is left empty (pure punctuation) or repeats a phrase already chosen is
not taken, and another n and start are drawn (at most 20 tries a phrase). A short line may so get
fewer than K phrases; one with no word gets an empty line (no constraints).
"""
import argparse
import json
import os
import random
import re
import statistics
import sys
import unicodedata


def is_punct_char(c):
    return unicodedata.category(c)[0] in "PS"  # punctuation and symbols ("«", "-", "$")


def is_punct_token(tok):
    return all(is_punct_char(c) for c in tok)


def trim(tokens):
    """Drops punctuation-only tokens from both ends, then punctuation characters from the outer
    edges of the first and last token. Returns the phrase text ("" if nothing is left)."""
    toks = list(tokens)
    while toks and is_punct_token(toks[0]):
        toks.pop(0)
    while toks and is_punct_token(toks[-1]):
        toks.pop()
    if not toks:
        return ""
    i = 0
    while i < len(toks[0]) and is_punct_char(toks[0][i]):
        i += 1
    toks[0] = toks[0][i:]
    j = len(toks[-1])
    while j > 0 and is_punct_char(toks[-1][j - 1]):
        j -= 1
    toks[-1] = toks[-1][:j]
    return " ".join(toks).strip()


def sample_line(ref, lo, hi, seed, line_no):
    rng = random.Random(f"{seed}/{lo}-{hi}/{line_no}")
    tokens = ref.split()
    k = rng.randint(lo, hi)
    taken = [False] * len(tokens)
    phrases = []
    for _ in range(k):
        for _try in range(20):
            n = rng.randint(1, 3)
            starts = [i for i in range(len(tokens) - n + 1) if not any(taken[i:i + n])]
            if not starts:
                continue
            i = rng.choice(starts)
            phrase = trim(tokens[i:i + n])
            if not phrase or phrase in phrases:
                continue
            for t in range(i, i + n):
                taken[t] = True
            phrases.append(phrase)
            break
    return phrases


def cmd_sample(a):
    with open(a.ref, encoding="utf-8") as f:
        refs = f.read().split("\n")
    if refs and refs[-1] == "":
        refs.pop()
    if a.lines:
        refs = refs[:a.lines]
    with open(a.out, "w", encoding="utf-8") as out:
        for no, ref in enumerate(refs, 1):
            out.write("\t".join(sample_line(ref, a.min, a.max, a.seed, no)) + "\n")


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def found_at_word_start(phrase, text):
    """Independent check of one phrase: it occurs in the text starting at a word (after the start
    or whitespace), as nmt's subword match wants a piece beginning with "▁"; its end is not
    checked ("homme" is found in "hommes", where nmt's subwords may differ)."""
    return re.search(r"(?:^|(?<=\s))" + re.escape(phrase), text) is not None


def coverage(constraint_lines, json_rows, hyps):
    sents = sents_with = phrases = met_json = all_met_json = met_text = met_substring = 0
    disagree = []
    for no, (c, row, hyp) in enumerate(zip(constraint_lines, json_rows, hyps), 1):
        sents += 1
        ps = [p for p in c.split("\t") if p]
        if not ps:
            continue
        sents_with += 1
        phrases += len(ps)
        unmet = row.get("unmet_constraints")
        if unmet is None:
            raise SystemExit(f"constraints_eval: line {no}: the JSON has no unmet_constraints")
        met_json += len(ps) - len(unmet)
        all_met_json += not unmet
        for p in ps:
            text_ok = found_at_word_start(p, hyp)
            met_text += text_ok
            met_substring += p in hyp
            if text_ok != (p not in unmet):
                disagree.append((no, p, hyp, p not in unmet))
    return dict(sentences=sents, sentences_with=sents_with, phrases=phrases, met=met_json,
                all_met=all_met_json, met_text=met_text, met_substring=met_substring, disagree=disagree)


def pct(a, b):
    return "n/a" if not b else f"{100.0 * a / b:.1f}%"


def cmd_report(a):
    out = a.out_dir
    res = {}
    with open(os.path.join(out, "results.jsonl"), encoding="utf-8") as f:
        for line in f:
            j = json.loads(line)
            res.setdefault(j["key"], []).append(j["value"])
    m = res["machine"][0]
    print(f"CPU: {m['cpu']} ({m['isa'] or 'no avx2/avx512f/avx512_vnni'}). {m['nmt']}, commit {m['commit']}; "
          f"OpenBLAS kernels {m['blas'].get('blas_core') or 'library default'} "
          f"(matmul peak {m['blas']['peak_gflops']:.1f} GFLOP/s at {m['blas']['threads']} threads). {m['date']}.")
    print(f"Model {m['model']}; beam {m['beam']}, batch {m['batch']} sentences, {m['threads']} threads; "
          f"{m['lines']}; seed {m['seed']}; median of {m['rounds']} alternating rounds (wall-clock of the whole "
          f"`nmt translate`, model load included); load average before/after: {m['load']} / "
          f"{open('/proc/loadavg').read().split()[0]}; start-up (model load + one sentence): "
          f"{statistics.median(res['startup']):.2f} s.")
    print(f"Command: `{m['command']}`")
    settings = a.settings.split(",")
    bad = 0
    for s in a.sets.split(","):
        base_json = [json.loads(l) for l in read_lines(os.path.join(out, f"{s}.none.jsonl"))]
        base_hyp = [r["translation"] for r in base_json]
        base_bleu = json.load(open(os.path.join(out, f"{s}.none.bleu.json")))
        t_base = res.get(f"{s}/none", [])
        print(f"\n### {s}\n")
        print("| constraints per sentence | sentences | with constraints | phrases | phrases met | "
              "sentences with all met | met unconstrained | BLEU without | BLEU with | chrF2 without | chrF2 with | "
              "time without (s) | time with (s) | with / without | load excluded |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        notes = []
        for st in settings:
            cons = read_lines(os.path.join(out, f"{s}.c{st}.tsv"))
            rows = [json.loads(l) for l in read_lines(os.path.join(out, f"{s}.c{st}.jsonl"))]
            hyps = [r["translation"] for r in rows]
            if not (len(cons) == len(rows) == len(base_json)):
                raise SystemExit(f"constraints_eval: {s} {st}: {len(cons)} constraint lines, {len(rows)} outputs, "
                                 f"{len(base_json)} unconstrained outputs")
            cov = coverage(cons, rows, hyps)
            # How many phrases the unconstrained output already has (the independent text check).
            base_met = sum(found_at_word_start(p, h) for c, h in zip(cons, base_hyp) for p in c.split("\t") if p)
            bleu = json.load(open(os.path.join(out, f"{s}.c{st}.bleu.json")))
            t_with = res.get(f"{s}/c{st}", [])
            ratio = ratio_net = "n/a"
            net = None
            t_load = res.get("startup", [])
            if t_base and len(t_base) == len(t_with):
                ratio = f"{statistics.median(w / b for w, b in zip(t_with, t_base)):.2f}x"
                if len(t_load) == len(t_base) and all(b - l > 0.05 for b, l in zip(t_base, t_load)):
                    net = statistics.median((w - l) / (b - l) for w, b, l in zip(t_with, t_base, t_load))
                    ratio_net = f"{net:.2f}x"
                elif len(t_load) == len(t_base):
                    ratio_net = "n/a (start-up dominates)"
            print(f"| {st} | {cov['sentences']} | {cov['sentences_with']} | {cov['phrases']} | "
                  f"{cov['met']} ({pct(cov['met'], cov['phrases'])}) | "
                  f"{cov['all_met']} ({pct(cov['all_met'], cov['sentences_with'])}) | "
                  f"{base_met} ({pct(base_met, cov['phrases'])}) | "
                  f"{base_bleu[0]['score']:.2f} | {bleu[0]['score']:.2f} | {base_bleu[1]['score']:.2f} | "
                  f"{bleu[1]['score']:.2f} | {statistics.median(t_base):.2f} | {statistics.median(t_with):.2f} | "
                  f"{ratio} | {ratio_net} |")
            notes.append(f"{st}: phrases found in the constrained output by a text check (at a word start) "
                         f"{cov['met_text']} / {cov['phrases']}, as plain substrings {cov['met_substring']}; "
                         f"{len(cov['disagree'])} disagree with unmet_constraints")
            for no, p, hyp, json_met in cov["disagree"][:5]:
                notes.append(f"  line {no}: \"{p}\" {'met' if json_met else 'unmet'} per JSON, "
                             f"{'absent' if json_met else 'present'} in \"{hyp}\"")
            if len(cov["disagree"]) > len(cov["disagree"][:5]):
                notes.append(f"  ... {len(cov['disagree']) - 5} more")
            if st == a.speed_setting and net is None and t_load:
                notes.append(f"  speed target (<= 2x with {st} phrases): not judged, the start-up dominates these "
                             f"timings (more LINES)")
            elif st == a.speed_setting and t_base and len(t_base) == len(t_with):
                target = net if net is not None else statistics.median(w / b for w, b in zip(t_with, t_base))
                notes.append(f"  speed target (<= 2x with {st} phrases): {target:.2f}x "
                             f"({'start-up excluded' if net is not None else 'start-up included'}), "
                             f"{'met' if target <= 2.0 else 'NOT met'}")
            bad += len(cov["disagree"])
        same = res.get(f"{s}/deterministic", [])
        if same and not all(same):
            notes.append("outputs differed between rounds (see rounds/)")
        print()
        for n in notes:
            print(n)
    print(f"\nBLEU and chrF2: nmt bleu (sacreBLEU 2.6.0 defaults: {base_bleu[0]['signature']}; "
          f"{base_bleu[1]['signature']}) against the reference. Coverage per --json's unmet_constraints "
          f"(nmt's subword match); 'met unconstrained': the same phrases found in the unconstrained output by the "
          f"text check.")
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("--ref", required=True)
    s.add_argument("--out", required=True)
    s.add_argument("--min", type=int, default=1)
    s.add_argument("--max", type=int, default=3)
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--lines", type=int, default=0)
    r = sub.add_parser("report")
    r.add_argument("out_dir")
    r.add_argument("--sets", required=True)
    r.add_argument("--settings", required=True)
    r.add_argument("--speed-setting", default="1-2")
    a = p.parse_args()
    if a.cmd == "sample":
        if not 1 <= a.min <= a.max:
            p.error("need 1 <= --min <= --max")
        cmd_sample(a)
        return 0
    return cmd_report(a)


if __name__ == "__main__":
    sys.exit(main())
