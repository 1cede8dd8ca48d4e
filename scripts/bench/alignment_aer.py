#!/usr/bin/env python3
"""Helper of scripts/bench/alignment-aer.sh: grow-diag-final-and symmetrisation and the alignment error
rate (Och & Ney 2003). Standard library only.

  alignment_aer.py gdfa FWD REV > SYM           # Pharaoh "i-j" (source-target) files, line by line
  alignment_aer.py aer REF HYP                  # prints {"aer", "precision", "recall", counts}
  alignment_aer.py row LABEL REF HYP            # the same as one markdown table row
  alignment_aer.py diagonal SRC TGT > HYP       # the diagonal baseline: target word j -> source round(j*|s|/|t|)
  alignment_aer.py prepare JSONL SRC OUT_PREFIX # nmt --json --alignment output -> OUT_PREFIX.{src,tgt,hyp,keep}
  alignment_aer.py selftest                     # the pieces on hand-made inputs

AER with sure = possible = the reference links R and hypothesis links A, counts summed over the
corpus and the rates taken once: precision = |A∩R| / |A|, recall = |A∩R| / |R|,
AER = 1 - (|A∩S| + |A∩P|) / (|A| + |S|) = 1 - 2|A∩R| / (|A| + |R|).
"""
import json
import sys

from constraints_eval import read_lines  # one line per line, no trailing empty one

NEIGHBOURS = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]


def parse(line, where="alignment"):
    links = set()
    for tok in line.split():
        i, sep, j = tok.partition("-")
        if not sep or not i.isdigit() or not j.isdigit():
            raise SystemExit(f"alignment_aer: {where}: malformed link '{tok}' (want SOURCE-TARGET)")
        links.add((int(i), int(j)))
    return links


def fmt(links):
    return " ".join(f"{i}-{j}" for i, j in sorted(links))


def grow_diag_final_and(fwd, rev):
    """Koehn's grow-diag-final-and on sets of (source, target) links, exactly as fast_align's
    `atools -c grow-diag-final-and` computes it (checked against it on 5,000 random pairs): start
    from the intersection; sweep the union's other links in (source, target) order, adding each
    that has an already taken link among its 8 neighbours and a source or target word not yet
    aligned, and sweep again until a sweep adds nothing; then ("final-and") sweep the forward,
    then the reverse links in order, adding each whose source and target words are both still
    unaligned."""
    a = fwd & rev
    src_aligned = {i for i, _ in a}
    tgt_aligned = {j for _, j in a}

    def take(link):
        a.add(link)
        src_aligned.add(link[0])
        tgt_aligned.add(link[1])

    candidates = sorted((fwd | rev) - a)
    changed = True
    while changed:
        changed = False
        for (i, j) in candidates:
            if (i, j) in a or (i in src_aligned and j in tgt_aligned):
                continue
            if any((i + di, j + dj) in a for di, dj in NEIGHBOURS):
                take((i, j))
                changed = True
    for direction in (fwd, rev):
        for (i, j) in sorted(direction):
            if i not in src_aligned and j not in tgt_aligned:
                take((i, j))
    return a


def cmd_gdfa(fwd_path, rev_path):
    fwd, rev = read_lines(fwd_path), read_lines(rev_path)
    if len(fwd) != len(rev):
        raise SystemExit(f"alignment_aer: {fwd_path} has {len(fwd)} lines, {rev_path} {len(rev)}")
    for n, (f, r) in enumerate(zip(fwd, rev), 1):
        print(fmt(grow_diag_final_and(parse(f, f"{fwd_path}:{n}"), parse(r, f"{rev_path}:{n}"))))


def aer_counts(ref_lines, hyp_lines):
    c = dict(hyp=0, ref=0, both=0, sentences=0)
    for n, (r, h) in enumerate(zip(ref_lines, hyp_lines), 1):
        R, A = parse(r, f"reference:{n}"), parse(h, f"hypothesis:{n}")
        c["hyp"] += len(A)
        c["ref"] += len(R)
        c["both"] += len(A & R)
        c["sentences"] += 1
    return c


def rates(c):
    return dict(aer=(1 - 2 * c["both"] / (c["hyp"] + c["ref"])) if c["hyp"] + c["ref"] else 0.0,
                precision=c["both"] / c["hyp"] if c["hyp"] else 0.0,
                recall=c["both"] / c["ref"] if c["ref"] else 0.0, **c)


def cmd_aer(ref_path, hyp_path):
    ref, hyp = read_lines(ref_path), read_lines(hyp_path)
    if len(ref) != len(hyp):
        raise SystemExit(f"alignment_aer: {ref_path} has {len(ref)} lines, {hyp_path} {len(hyp)}")
    print(json.dumps(rates(aer_counts(ref, hyp))))


def cmd_row(label, ref_path, hyp_path):
    """One markdown row: | LABEL | links | reference links | shared | precision | recall | AER |"""
    ref, hyp = read_lines(ref_path), read_lines(hyp_path)
    if len(ref) != len(hyp):
        raise SystemExit(f"alignment_aer: {ref_path} has {len(ref)} lines, {hyp_path} {len(hyp)}")
    r = rates(aer_counts(ref, hyp))
    print(f"| {label} | {r['hyp']} | {r['ref']} | {r['both']} | {100 * r['precision']:.1f}% | "
          f"{100 * r['recall']:.1f}% | {100 * r['aer']:.1f}% |")


def cmd_header(cpu, isa, blas, nmt, commit, date):
    b = json.loads(blas)
    print(f"CPU: {cpu} ({isa or 'no avx2/avx512f/avx512_vnni'}). {nmt}, commit {commit}; OpenBLAS kernels "
          f"{b.get('blas_core') or 'library default'} (matmul peak {b['peak_gflops']:.1f} GFLOP/s at "
          f"{b['threads']} threads). {date}.")


def diagonal(ns, nt):
    if ns == 0 or nt == 0:
        return set()
    return {(min(ns - 1, int((j + 0.5) * ns / nt)), j) for j in range(nt)}


def cmd_diagonal(src_path, tgt_path):
    for s, t in zip(read_lines(src_path), read_lines(tgt_path)):
        print(fmt(diagonal(len(s.split()), len(t.split()))))


def cmd_prepare(jsonl, src_path, prefix):
    """nmt translate --json --alignment output and its source -> lower-cased whitespace tokens
    (PREFIX.src, PREFIX.tgt: the pairs with both sides non-empty, for the aligner), nmt's links of
    every line (PREFIX.hyp) and which lines the aligner sees (PREFIX.keep: 1 or 0)."""
    rows = [json.loads(l) for l in read_lines(jsonl)]
    srcs = read_lines(src_path)
    if len(rows) != len(srcs):
        raise SystemExit(f"alignment_aer: {jsonl} has {len(rows)} lines, {src_path} {len(srcs)}")
    with open(prefix + ".src", "w", encoding="utf-8") as fs, open(prefix + ".tgt", "w", encoding="utf-8") as ft, \
            open(prefix + ".hyp", "w", encoding="utf-8") as fh, open(prefix + ".keep", "w") as fk:
        for n, (row, src) in enumerate(zip(rows, srcs), 1):
            if "alignment" not in row:
                raise SystemExit(f"alignment_aer: {jsonl}:{n}: no \"alignment\" field (an nmt without --alignment?)")
            s, t = src.lower().split(), row["translation"].lower().split()
            links = parse(row["alignment"], f"{jsonl}:{n}")
            bad = [(i, j) for i, j in links if i >= len(s) or j >= len(t)]
            if bad:
                raise SystemExit(f"alignment_aer: {jsonl}:{n}: link {bad[0][0]}-{bad[0][1]} outside "
                                 f"{len(s)} source and {len(t)} target words")
            fh.write(fmt(links) + "\n")
            keep = bool(s and t)
            fk.write("1\n" if keep else "0\n")
            if keep:
                fs.write(" ".join(s) + "\n")
                ft.write(" ".join(t) + "\n")


def selftest():
    # grow-diag-final-and on a hand-made pair (3 source, 4 target words).
    fwd = parse("0-0 1-1 1-2 2-3")   # each target word once
    rev = parse("0-0 1-1 2-2")       # each source word once
    # intersection {0-0, 1-1}; grow: 1-2 (neighbour of 1-1, target 2 unaligned), 2-2 (diagonal
    # neighbour of 1-1, source 2 unaligned), then 2-3 (neighbour of 2-2, target 3 unaligned).
    got = grow_diag_final_and(fwd, rev)
    assert got == parse("0-0 1-1 1-2 2-2 2-3"), fmt(got)
    # A union link neighbouring nothing taken is left to final-and, which wants both words
    # unaligned: 2-3 is added (source 2, target 3 free), 0-3 is not (source 0 is aligned).
    got = grow_diag_final_and(parse("0-0 1-1 2-3"), parse("0-0 1-1 0-3"))
    assert got == parse("0-0 1-1 2-3"), fmt(got)
    # final-and adds a link whose both words are unaligned, and only then.
    got = grow_diag_final_and(parse("0-0 2-3"), parse("0-0"))
    assert got == parse("0-0 2-3"), fmt(got)
    got = grow_diag_final_and(parse("0-0 0-3"), parse("0-0"))
    assert got == parse("0-0"), fmt(got)
    # Sweep order matters; these are atools' results (a grow that visits taken links instead of
    # candidates in order gives 0-0 0-2 1-1 2-1 3-2 4-2 and 0-2 1-2 2-1 3-2 4-0 5-0).
    got = grow_diag_final_and(parse("0-0 1-1 4-2"), parse("0-2 1-1 2-1 3-2 4-1"))
    assert got == parse("0-0 0-2 1-1 2-1 3-2 4-1"), fmt(got)
    got = grow_diag_final_and(parse("0-1 3-2 4-0"), parse("0-2 1-2 2-1 3-2 4-0 5-0"))
    assert got == parse("0-1 1-2 2-1 3-2 4-0 5-0"), fmt(got)
    # Identical directions: the intersection, nothing grows.
    assert grow_diag_final_and(parse("0-1 1-0"), parse("0-1 1-0")) == parse("0-1 1-0")
    # Growing is not diagonal-only: a horizontal neighbour in the union is added.
    assert grow_diag_final_and(parse("0-0 0-1"), parse("0-0")) == parse("0-0 0-1")
    # AER: hypothesis 4 links, reference 5, 3 shared: P = 3/4, R = 3/5, AER = 1 - 6/9.
    r = rates(aer_counts(["0-0 1-1 2-2", "0-1 1-0"], ["0-0 1-2 2-2", "0-1"]))
    assert (r["hyp"], r["ref"], r["both"]) == (4, 5, 3), r
    assert abs(r["precision"] - 0.75) < 1e-12 and abs(r["recall"] - 0.6) < 1e-12, r
    assert abs(r["aer"] - (1 - 6 / 9)) < 1e-12, r
    # Perfect and disjoint; empty on both sides.
    assert rates(aer_counts(["0-0 1-1"], ["1-1 0-0"]))["aer"] == 0.0
    assert rates(aer_counts(["0-0"], ["0-1"]))["aer"] == 1.0
    assert rates(aer_counts([""], [""]))["aer"] == 0.0
    # Duplicates count once (sets); the diagonal baseline.
    assert rates(aer_counts(["0-0"], ["0-0 0-0"]))["hyp"] == 1
    assert diagonal(2, 4) == parse("0-0 0-1 1-2 1-3"), fmt(diagonal(2, 4))
    assert diagonal(3, 1) == parse("1-0") and diagonal(0, 3) == set()
    try:
        parse("0-1 x-2")
        raise AssertionError("malformed link accepted")
    except SystemExit:
        pass
    print("alignment_aer selftest: ok")


def main(argv):
    cmds = {"gdfa": (cmd_gdfa, 2), "aer": (cmd_aer, 2), "diagonal": (cmd_diagonal, 2),
            "prepare": (cmd_prepare, 3),
            "row": (cmd_row, 3), "header": (cmd_header, 6), "selftest": (selftest, 0)}
    if len(argv) < 2 or argv[1] not in cmds or len(argv) - 2 != cmds[argv[1]][1]:
        sys.stderr.write(__doc__)
        return 2
    cmds[argv[1]][0](*argv[2:])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
