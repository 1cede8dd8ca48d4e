#!/usr/bin/env python3
"""Checks that CTranslate2 translates as nmt does, on the same weights (issue #18, part 1).

    python3 scripts/ct2_check.py --model NMT_DIR --ct2 CT2_DIR --src SRC --ref REF --out WORK
        [--nmt build/nmt] [--threads 2] [--min-equal 0.99] [--max-bleu-gap 0.1]

Greedy translations of SRC by `nmt translate` and by scripts/ct2_translate.py --exact-limits
(nmt's length rule) are compared line by line and by BLEU (`nmt bleu`). For every line that
differs, the first diverging subword is shown with both engines' log-probabilities of the two
competing subwords after the common prefix (nmt's from `nmt score --per-token`, CTranslate2's from
its score_batch): a difference only where the two are within float rounding of each other is a
tie, not a conversion error. Exit status 1 when fewer lines than --min-equal are equal or the
BLEU scores differ by more than --max-bleu-gap.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, stdout=subprocess.PIPE, **kw).stdout


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read().split("\n")[:-1]


def bleu(nmt, ref, sys_path):
    return json.loads(run([nmt, "bleu", ref, "-i", sys_path, "--json"]))["score"]


def nmt_token_log_probs(nmt, model, src_lines, tgt_lines, work, threads):
    """nmt score --per-token: per line, the log-probabilities of the target's subwords then </s>."""
    src, tgt = os.path.join(work, "score.src"), os.path.join(work, "score.tgt")
    with open(src, "w", encoding="utf-8") as f:
        f.writelines(s + "\n" for s in src_lines)
    with open(tgt, "w", encoding="utf-8") as f:
        f.writelines(t + "\n" for t in tgt_lines)
    out = run([nmt, "score", "-q", "-m", model, "--src", src, "--tgt", tgt, "--per-token", "--threads", str(threads)])
    return [[float(x) for x in line.split("\t")[1].split()] for line in out.splitlines()]


def explain(a, sp, differing, src, nmt_out, ct2_out, ct2_piece_lines):
    """The two engines' log-probabilities of both competing subwords where the outputs part.

    Both outputs are taken as generated (nmt's ids from `nmt bench translate --dump-hyp-ids`,
    CTranslate2's pieces), scored by CTranslate2's score_batch; nmt's own figures come from
    `nmt score`, which re-segments text, so they are shown where the re-segmentation is what
    was generated."""
    import ctranslate2  # noqa: PLC0415

    ids_path = os.path.join(a.out, "nmt.ids.jsonl")
    run([a.nmt, "bench", "translate", "-m", a.model, "--src", a.src, "--threads", str(a.threads),
         "--dump-hyp-ids", ids_path])
    nmt_ids = [json.loads(line) for line in read(ids_path)]
    translator = ctranslate2.Translator(a.ct2, device="cpu", compute_type=a.compute_type, intra_threads=a.threads)
    sources = [sp.encode(src[i], out_type=str) for i in differing]
    mine = [[sp.id_to_piece(t) for t in nmt_ids[i]] for i in differing]
    theirs = [ct2_piece_lines[i].split() for i in differing]
    ct2_mine, ct2_theirs = translator.score_batch(sources, mine), translator.score_batch(sources, theirs)
    nmt_mine = nmt_token_log_probs(a.nmt, a.model, [src[i] for i in differing], [nmt_out[i] for i in differing],
                                   a.out, a.threads)
    nmt_theirs = nmt_token_log_probs(a.nmt, a.model, [src[i] for i in differing], [ct2_out[i] for i in differing],
                                     a.out, a.threads)
    lines = []
    for k, i in enumerate(differing):
        m, t = mine[k], theirs[k]
        j = next((j for j in range(min(len(m), len(t))) if m[j] != t[j]), min(len(m), len(t)))
        tok = lambda s: s[j] if j < len(s) else "</s>"  # noqa: E731
        resegmented = sp.encode(nmt_out[i], out_type=str) == m and sp.encode(ct2_out[i], out_type=str) == t
        nmt_view = f"{nmt_mine[k][j]:.6f} / {nmt_theirs[k][j]:.6f}" if resegmented else "n/a (text re-segments differently)"
        lines.append(f"  line {i + 1}, subword {j + 1}: nmt '{tok(m)}' vs CTranslate2 '{tok(t)}'; "
                     f"nmt: {nmt_view}; CTranslate2: {ct2_mine[k].log_probs[j]:.6f} / {ct2_theirs[k].log_probs[j]:.6f}")
        lines.append(f"    nmt: {nmt_out[i]}")
        lines.append(f"    ct2: {ct2_out[i]}")
    return lines


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--ct2", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--ref", required=True)
    p.add_argument("--out", required=True, help="work directory (translations, report)")
    p.add_argument("--nmt", default=os.path.join(HERE, "..", "build", "nmt"))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--compute-type", default="default", help="CTranslate2's compute type (default: as stored)")
    p.add_argument("--min-equal", type=float, default=0.99)
    p.add_argument("--max-bleu-gap", type=float, default=0.1)
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    nmt_txt, ct2_txt = os.path.join(a.out, "nmt.txt"), os.path.join(a.out, "ct2.txt")
    ct2_pieces = os.path.join(a.out, "ct2.pieces")
    run([a.nmt, "translate", "-q", "--threads", str(a.threads), "-m", a.model, "-i", a.src, "-o", nmt_txt])
    run([sys.executable, os.path.join(HERE, "ct2_translate.py"), a.ct2, "-i", a.src, "-o", ct2_txt,
         "--pieces-out", ct2_pieces, "--exact-limits", "--threads", str(a.threads),
         "--compute-type", a.compute_type])

    import sentencepiece  # noqa: PLC0415

    sp = sentencepiece.SentencePieceProcessor(model_file=os.path.join(a.ct2, "spm.model"))
    src, nmt_out, ct2_out = read(a.src), read(nmt_txt), read(ct2_txt)
    assert len(src) == len(nmt_out) == len(ct2_out), "line counts differ"
    equal = sum(x == y for x, y in zip(nmt_out, ct2_out))
    b_nmt, b_ct2 = bleu(a.nmt, a.ref, nmt_txt), bleu(a.nmt, a.ref, ct2_txt)
    differing = [i for i in range(len(src)) if nmt_out[i] != ct2_out[i]]

    report = [f"lines equal: {equal} / {len(src)} ({100.0 * equal / len(src):.1f} %)",
              f"BLEU: nmt {b_nmt:.2f}, CTranslate2 {b_ct2:.2f} (difference {abs(b_nmt - b_ct2):.2f})"]
    if differing:
        report.append("differing lines (first diverging subword; log p of nmt's choice / CTranslate2's choice after the"
                      " common prefix):")
        report += explain(a, sp, differing, src, nmt_out, ct2_out, read(ct2_pieces))
    text = "\n".join(report)
    print(text)
    with open(os.path.join(a.out, "report.txt"), "w", encoding="utf-8") as f:
        f.write(text + "\n")
    with open(os.path.join(a.out, "summary.json"), "w", encoding="utf-8") as f:
        json.dump({"lines": len(src), "equal": equal, "bleu_nmt": b_nmt, "bleu_ct2": b_ct2}, f)
    ok = equal >= a.min_equal * len(src) and abs(b_nmt - b_ct2) <= a.max_bleu_gap
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
