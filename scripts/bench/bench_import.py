#!/usr/bin/env python3
"""Speed of an imported OPUS-MT model: nmt against transformers' generate() and CTranslate2 on the
same weights (a MarianMTModel of the real OPUS-MT en-fr shape with random weights, made by
scripts/reference/marian_reference.py; CTranslate2's model by its own converter from the same directory).

    scripts/bench/bench-import.sh            # sets up the models, then runs this and prints the table

    bench_import.py --hf HF_DIR --nmt NMT_DIR --ct2 CT2_DIR --src FILE --nmt-binary build/nmt
        [--threads 1 2] [--searches greedy beam5] [--batch-size 32] [--max-len 40] [--rounds 3]

Every engine translates the same sentences with the same thread count, batch size, search and
length limit (at most --max-len output subwords; beam 5 ranks by log-probability alone: nmt's
--length-penalty none, transformers' length_penalty 0, CTranslate2's length_penalty 0); rounds
alternate the engines and the median of the rounds is printed. Sentences/s counts translation
alone (model load excluded, after one untimed batch); the "same" column counts the lines whose
output pieces equal transformers'. Prints the CPU, its flags and nmt's BLAS kernels.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time


def machine(nmt):
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    flags = sorted(set(re.findall(r"\b(avx2|fma|avx512f|avx512_vnni|avx512vnni|avx_vnni|amx_\w+)\b", open("/proc/cpuinfo").read())))
    blas = subprocess.run([nmt, "bench", "matmul", "--threads", "1"], capture_output=True, text=True).stdout.strip()
    return cpu, " ".join(flags), blas


def hf_run(hf_dir, lines, threads, search, batch, max_len):
    import torch
    from transformers import MarianMTModel, MarianTokenizer
    from transformers.utils import logging
    logging.set_verbosity_error()  # generate()'s notices about its flags
    torch.set_num_threads(threads)
    tok = MarianTokenizer.from_pretrained(hf_dir)
    model = MarianMTModel.from_pretrained(hf_dir).eval()
    pad = model.config.pad_token_id
    beams = 1 if search == "greedy" else 5
    outs = []

    def run(chunk):
        enc = tok(chunk, return_tensors="pt", padding=True)
        with torch.inference_mode():
            seq = model.generate(**enc, num_beams=beams, do_sample=False, max_new_tokens=max_len, max_length=None,
                                 length_penalty=0.0,
                                 forced_eos_token_id=None, bad_words_ids=[[pad]])
        return [[tok.convert_ids_to_tokens(int(i)) for i in s[1:] if int(i) not in (pad, model.config.eos_token_id)]
                for s in seq]

    run(lines[:batch])  # warm-up
    start = time.perf_counter()
    for i in range(0, len(lines), batch):
        outs.extend(run(lines[i:i + batch]))
    return len(lines) / (time.perf_counter() - start), outs


def ct2_run(ct2_dir, hf_dir, lines, threads, search, batch, max_len):
    import ctranslate2
    import sentencepiece as spm
    sp = spm.SentencePieceProcessor(model_file=os.path.join(hf_dir, "source.spm"))
    tr = ctranslate2.Translator(ct2_dir, device="cpu", inter_threads=1, intra_threads=threads)
    tokens = [sp.encode(l, out_type=str) + ["</s>"] for l in lines]
    beams = 1 if search == "greedy" else 5

    def run(chunk):
        res = tr.translate_batch(chunk, beam_size=beams, max_batch_size=batch, max_decoding_length=max_len,
                                 length_penalty=0.0, target_prefix=None)
        return [r.hypotheses[0] for r in res]

    run(tokens[:batch])
    start = time.perf_counter()
    outs = run(tokens)
    return len(lines) / (time.perf_counter() - start), outs


def nmt_run(nmt, nmt_dir, src, threads, search, batch, max_len, outputs=True):
    beam = "1" if search == "greedy" else "5"
    common = ["-m", nmt_dir, "--threads", str(threads), "--beam", beam, "--length-penalty", "none", "--max-len-a", "0",
              "--max-len-b", str(max_len), "--batch-size", str(batch)]
    bench = subprocess.run([nmt, "bench", "translate", "--src", src] + common, capture_output=True, text=True, check=True)
    result = json.loads(bench.stdout.strip().splitlines()[-1])
    if not outputs:
        return result["sentences_per_s"], None
    with open(src) as f:
        out = subprocess.run([nmt, "translate", "--json"] + common, stdin=f, capture_output=True, text=True, check=True)
    return result["sentences_per_s"], [json.loads(l)["tokens"] for l in out.stdout.splitlines()]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hf", required=True)
    p.add_argument("--nmt", required=True)
    p.add_argument("--ct2", required=True)
    p.add_argument("--src", required=True)
    p.add_argument("--nmt-binary", required=True)
    p.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    p.add_argument("--searches", nargs="+", default=["greedy", "beam5"])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--max-len", type=int, default=40)
    p.add_argument("--rounds", type=int, default=2)
    a = p.parse_args()
    lines = [l.rstrip("\n") for l in open(a.src, encoding="utf-8")]
    cpu, flags, blas = machine(a.nmt_binary)
    version = subprocess.run([a.nmt_binary, "--version"], capture_output=True, text=True).stdout.strip()
    import ctranslate2
    import torch
    import transformers
    print(f"CPU: {cpu} ({flags}); {version}; nmt's matmul: {blas}")
    print(f"transformers {transformers.__version__} on PyTorch {torch.__version__}; CTranslate2 {ctranslate2.__version__}; "
          f"{len(lines)} sentences, batch {a.batch_size}, at most {a.max_len} output subwords, median of {a.rounds} rounds\n")
    print("| search | threads | nmt sent/s | transformers sent/s | CTranslate2 sent/s | nmt / transformers | nmt / CTranslate2 | same as transformers (nmt, CT2) |")
    print("|---|---|---|---|---|---|---|---|")
    for search in a.searches:
        for threads in a.threads:
            speeds = {"nmt": [], "hf": [], "ct2": []}
            for r in range(a.rounds):
                s, out = nmt_run(a.nmt_binary, a.nmt, a.src, threads, search, a.batch_size, a.max_len, outputs=r == 0)
                nmt_out = out if r == 0 else nmt_out
                speeds["nmt"].append(s)
                s, hf_out = hf_run(a.hf, lines, threads, search, a.batch_size, a.max_len)
                speeds["hf"].append(s)
                s, ct2_out = ct2_run(a.ct2, a.hf, lines, threads, search, a.batch_size, a.max_len)
                speeds["ct2"].append(s)
            med = {k: statistics.median(v) for k, v in speeds.items()}
            same_nmt = sum(x == y for x, y in zip(nmt_out, hf_out))
            same_ct2 = sum(x == y for x, y in zip(ct2_out, hf_out))
            print(f"| {search} | {threads} | {med['nmt']:.1f} | {med['hf']:.1f} | {med['ct2']:.1f} | "
                  f"{med['nmt'] / med['hf']:.2f}x | {med['nmt'] / med['ct2']:.2f}x | {same_nmt}, {same_ct2} of {len(lines)} |",
                  flush=True)


if __name__ == "__main__":
    sys.exit(main())
