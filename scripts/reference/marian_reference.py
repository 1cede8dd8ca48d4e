#!/usr/bin/env python3
"""Reference side of the equivalence test of `nmt import` for Hugging Face MarianMTModel (OPUS-MT)
checkpoints (tests/): makes small Marian models laid out as OPUS-MT's are, and translates with
transformers' own generate() so that nmt's translations of the imported model can be compared.

    marian_reference.py make OUT_DIR --variant tied|untied|relu-prenorm-flag|opus-shape|multi30k-small
        --spm-dir DIR [--spm-vocab 600,700] [--seed 1] [--format safetensors|bin] [--vocab-size N]
        [--eos-bias 4.0] [--train-pairs 5000] [--train-steps N] [--train-minutes M] [--batch-size 32]
        [--lr 3e-3] [--warmup 0] [--label-smoothing 0]
    marian_reference.py generate MODEL_DIR INPUT --mode greedy|beam --max-new-tokens L [--beam 5]
        [--length-penalty 0.0] [--early-stopping false|true|never] [--batch-size 16] [--limit N] > out.jsonl

`make` trains (once per --spm-dir, atomically) an OPUS-MT-style SentencePiece pair on the first
--train-pairs (5,000) lines of Multi30k (unigram, --spm-vocab: 600 English / 700 French pieces, </s>=0
<unk>=1, no <s> or <pad>), writes the shared vocab.json (both pieces lists, "<pad>" last), config.json,
generation_config.json, the weights and the tokenizer files. Weights of the test variants: transformers'
init with init_std 0.1, final_logits_bias N(0,1) plus --eos-bias on </s>, then --train-steps Adam updates
(constant lr 3e-3, random batches of 32) on those pairs (seconds on one CPU thread): an untrained
model repeats one token for ever or stops at once whatever the source, a briefly trained one gives varied
sentences of varied lengths. Without training, biases and LayerNorms are perturbed instead.

multi30k-small is a real, small translation model instead (d_model 256, 3+3 layers, 4 heads, ffn 1024,
swish, tied embeddings, dropout 0.1): transformers' init (init_std 0.02, final_logits_bias 0 as OPUS-MT's,
plus --eos-bias if given), then Adam with --warmup 400 steps of linear warmup to --lr 1e-3 and
inverse-square-root decay after, label smoothing 0.1, batches of 64 pairs of similar lengths (each epoch:
the pairs sorted by length, random among equal lengths, cut into batches taken in random order), until
--train-steps (20,000) or --train-minutes of training, whichever comes first. Made to measure what int8
costs in BLEU on an imported model, e.g. with --spm-dir NEW --spm-vocab 8000,8000 --train-pairs 0
--train-minutes 8 --threads 2. Training prints the mean loss of every 200 steps on stderr.

`generate` writes one JSON object per input line: line (1-based), tokens (output pieces, no start token,
no padding, no final </s>), eos (ended with </s>), text (tokenizer.decode, special tokens skipped) and
token_log_probs: log_softmax of the raw logits at each step, in float64, for every generated token including
the final </s>. Beam search adds score (sequences_scores) and log_prob (the sum of token_log_probs).
"""
import argparse
import io
import json
import os
import shutil
import sys
import time
import warnings

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.environ.get("NMT_DATA", os.path.join(ROOT, "..", "shared", "data"))

VARIANTS = {  # d_model, encoder/decoder layers, heads, ffn, activation, scale_embedding, tied, train steps
    "tied": (64, 2, 2, 4, 128, "swish", True, True, 300),
    "untied": (48, 3, 1, 2, 96, "gelu", False, False, 600),
    "relu-prenorm-flag": (32, 1, 2, 4, 64, "relu", True, True, 600),
    "opus-shape": (512, 6, 6, 8, 2048, "swish", True, True, 0),
    "multi30k-small": (256, 3, 3, 4, 1024, "swish", True, True, 20000),
}
REAL = {"multi30k-small"}  # trained as a translation model, not as a test model (see above)
TRAINING = {  # batch of pairs, peak lr, warmup steps (0: constant lr), label smoothing, batches by length
    "test": (32, 3e-3, 0, 0.0, False),
    "real": (64, 1e-3, 400, 0.1, True),
}


def multi30k(lang, n=5000):
    """The first n lines of Multi30k's train.LANG (n=0: all)."""
    with open(os.path.join(DATA, "multi30k", "train." + lang), encoding="utf-8") as f:
        return [line.rstrip("\n") for _, line in zip(range(n) if n else iter(int, 1), f)]


def train_spm(spm_dir, seed, sizes=(600, 700), pairs=5000):
    """source.spm (en, 600 pieces) and target.spm (fr, 700) on the first `pairs` lines, trained only when
    missing (when present, their sizes must be `sizes`); written atomically."""
    import sentencepiece as spm
    os.makedirs(spm_dir, exist_ok=True)
    for name, lang, size in (("source.spm", "en", sizes[0]), ("target.spm", "fr", sizes[1])):
        final = os.path.join(spm_dir, name)
        if os.path.exists(final):
            have = spm.SentencePieceProcessor(model_file=final).get_piece_size()
            if have != size:
                sys.exit("%s has %d pieces, not the %d of --spm-vocab: give another --spm-dir" % (final, have, size))
            continue
        model = io.BytesIO()  # no file names in the model's trainer_spec: the same bytes every time
        spm.set_random_generator_seed(seed)
        spm.SentencePieceTrainer.train(
            sentence_iterator=iter(multi30k(lang, pairs)), model_writer=model, model_type="unigram",
            vocab_size=size, normalization_rule_name="nmt_nfkc", character_coverage=1.0, unk_id=1, eos_id=0,
            bos_id=-1, pad_id=-1, input_sentence_size=0, shuffle_input_sentence=False, num_threads=1,
            minloglevel=2)
        tmp = "%s.tmp%d" % (final, os.getpid())
        with open(tmp, "wb") as f:
            f.write(model.getvalue())
        os.replace(tmp, final)


def marian_vocab(spm_dir, size=None):
    """OPUS-MT's shared vocab.json: </s>, <unk>, source pieces, new target pieces, [▁xN...], <pad>."""
    import sentencepiece as spm
    vocab = {"</s>": 0, "<unk>": 1}
    for name in ("source.spm", "target.spm"):
        sp = spm.SentencePieceProcessor(model_file=os.path.join(spm_dir, name))
        for i in range(sp.get_piece_size()):
            vocab.setdefault(sp.id_to_piece(i), len(vocab))
    n = 0
    while size and len(vocab) < size - 1:
        vocab.setdefault("\u2581x%d" % n, len(vocab))
        n += 1
    if size and len(vocab) != size - 1:
        sys.exit("--vocab-size %d is below the %d pieces of the SentencePiece pair" % (size, len(vocab) + 1))
    vocab["<pad>"] = len(vocab)
    return vocab


def train(model, tok, steps, seed, pairs=5000, minutes=None, batch=32, lr=3e-3, warmup=0, smoothing=0.0,
          by_length=False):
    """Adam on the first `pairs` Multi30k pairs, for `steps` updates or `minutes` of training, whichever
    comes first; random batches, or batches of pairs of similar lengths; with warmup, lr rises linearly
    to `lr` over `warmup` steps and decays as 1/sqrt(step) after. Returns steps done, the last loss."""
    import torch
    from transformers.models.marian.modeling_marian import shift_tokens_right
    data = tok(multi30k("en", pairs), text_target=multi30k("fr", pairs))
    pad, g = tok.pad_token_id, torch.Generator().manual_seed(seed + 2)
    n = len(data["input_ids"])

    def batches():
        if not by_length:
            while True:
                yield torch.randint(0, n, (batch,), generator=g).tolist()
        length = [len(s) + len(t) for s, t in zip(data["input_ids"], data["labels"])]
        while True:  # an epoch
            order = sorted(torch.randperm(n, generator=g).tolist(), key=length.__getitem__)
            cut = [order[i:i + batch] for i in range(0, n, batch)]
            for k in torch.randperm(len(cut), generator=g).tolist():
                yield cut[k]

    opt = torch.optim.Adam(model.parameters(), lr=lr)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda s: min((s + 1) / warmup, (warmup / (s + 1)) ** 0.5)) \
        if warmup else None
    model.train()
    start, done, window, last = time.time(), 0, [], float("nan")
    for pick in batches():
        if done == steps or (minutes is not None and time.time() - start >= 60 * minutes):
            break
        src = tok.pad({"input_ids": [data["input_ids"][i] for i in pick]}, return_tensors="pt")
        labels = tok.pad({"input_ids": [data["labels"][i] for i in pick]}, return_tensors="pt")["input_ids"]
        labels = labels.masked_fill(labels == pad, -100)
        if smoothing:
            logits = model(**src, decoder_input_ids=shift_tokens_right(labels, pad, pad)).logits
            logp, keep = torch.log_softmax(logits.float(), -1), labels != -100
            nll = -logp.gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)[keep].mean()
            loss = (1 - smoothing) * nll + smoothing * -logp.mean(-1)[keep].mean()
        else:
            loss = nll = model(**src, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        opt.step()
        if sched:
            sched.step()
        done += 1
        last = loss.item()
        window.append((last, nll.item()))
        if done % 200 == 0:
            print("step %d: loss %.3f%s, lr %.2e, %.0f s" % (
                done, sum(w[0] for w in window) / len(window),
                " (without smoothing %.3f)" % (sum(w[1] for w in window) / len(window)) if smoothing else "",
                opt.param_groups[0]["lr"], time.time() - start), file=sys.stderr, flush=True)
            window = []
    return done, last, time.time() - start


def make(args):
    import torch
    from transformers import GenerationConfig, MarianConfig, MarianMTModel, MarianTokenizer
    out = args.out_dir
    os.makedirs(out, exist_ok=True)
    try:
        sizes = tuple(int(x) for x in args.spm_vocab.split(","))
        assert len(sizes) == 2
    except (ValueError, AssertionError):
        sys.exit("--spm-vocab takes SRC,TGT piece counts, e.g. 600,700")
    train_spm(args.spm_dir, args.seed, sizes, args.train_pairs)
    vocab = marian_vocab(args.spm_dir, args.vocab_size)
    for name in ("source.spm", "target.spm"):
        shutil.copyfile(os.path.join(args.spm_dir, name), os.path.join(out, name))
    with open(os.path.join(out, "vocab.json"), "w", encoding="utf-8") as f:
        json.dump(vocab, f, indent=2)  # ASCII-escaped ("\u2581"), as transformers' save_json writes it
    tok = MarianTokenizer(os.path.join(out, "source.spm"), os.path.join(out, "target.spm"),
                          os.path.join(out, "vocab.json"), source_lang="en", target_lang="fr")
    tok.save_pretrained(out)  # tokenizer_config.json (vocab.json and the .spm files unchanged)

    v, pad = len(vocab), vocab["<pad>"]
    d, enc, dec, heads, ffn, act, scale, tied, steps = VARIANTS[args.variant]
    steps = steps if args.train_steps is None else args.train_steps
    real = args.variant in REAL
    batch, lr, warmup, smoothing, by_length = TRAINING["real" if real else "test"]
    eos_bias = args.eos_bias if args.eos_bias is not None else 0.0 if real else 4.0
    config = MarianConfig(
        vocab_size=v, decoder_vocab_size=v, d_model=d, encoder_layers=enc, decoder_layers=dec,
        encoder_attention_heads=heads, decoder_attention_heads=heads, encoder_ffn_dim=ffn,
        decoder_ffn_dim=ffn, activation_function=act, scale_embedding=scale,
        share_encoder_decoder_embeddings=tied, tie_word_embeddings=tied,
        max_position_embeddings=512 if args.variant == "opus-shape" else 256, init_std=0.02 if real else 0.1,
        pad_token_id=pad, decoder_start_token_id=pad, eos_token_id=0, bos_token_id=None,
        forced_eos_token_id=None)
    torch.manual_seed(args.seed)
    model = MarianMTModel(config)
    g = torch.Generator().manual_seed(args.seed + 1)
    with torch.no_grad():
        bias = torch.zeros(model.final_logits_bias.shape) if real else \
            torch.randn(model.final_logits_bias.shape, generator=g)  # a buffer: training keeps it
        bias[0, 0] += eos_bias
        model.final_logits_bias.copy_(bias)
        for name, p in model.named_parameters() if not steps else ():  # away from 0 and 1
            if name.endswith(".bias"):
                p.add_(0.1 * torch.randn(p.shape, generator=g))
            elif "layer_norm.weight" in name:
                p.add_(0.2 * torch.randn(p.shape, generator=g))
    trained = "untrained"
    if steps:
        done, loss, seconds = train(
            model, tok, steps, args.seed, args.train_pairs, args.train_minutes,
            batch if args.batch_size is None else args.batch_size, lr if args.lr is None else args.lr,
            warmup if args.warmup is None else args.warmup,
            smoothing if args.label_smoothing is None else args.label_smoothing, by_length)
        trained = "%d training steps in %.0f s (last batch's loss %.2f)" % (done, seconds, loss)
    model.eval()
    model.generation_config = GenerationConfig(
        bad_words_ids=[[pad]], decoder_start_token_id=pad, eos_token_id=0, pad_token_id=pad,
        max_length=config.max_position_embeddings, num_beams=4)

    for name in ("model.safetensors", "pytorch_model.bin"):
        if os.path.exists(os.path.join(out, name)):
            os.remove(os.path.join(out, name))
    model.save_pretrained(out)  # transformers 5 writes safetensors only, mode 0600
    if os.path.exists(os.path.join(out, "model.safetensors")):
        os.chmod(os.path.join(out, "model.safetensors"), 0o644)
    if args.format == "bin":
        os.remove(os.path.join(out, "model.safetensors"))
        torch.save(model.state_dict(), os.path.join(out, "pytorch_model.bin"))
    with open(os.path.join(out, "config.json"), encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["bad_words_ids"] = [[pad]]  # as OPUS-MT's config.json has (transformers 5 keeps it out of config)
    if args.variant == "relu-prenorm-flag":
        cfg["normalize_before"] = True  # ignored by transformers: Marian is always post-norm
    with open(os.path.join(out, "config.json"), "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=2, sort_keys=True)
        f.write("\n")
    params = sum(p.numel() for n, p in model.named_parameters() if "embed_positions" not in n)
    print("%s: vocab %d (pad %d), %d parameters (without sinusoidal positions), %s, %s: %s"
          % (args.variant, v, pad, params, trained, out, " ".join(sorted(os.listdir(out)))))


def generate(args):
    import torch
    from transformers import MarianMTModel, MarianTokenizer
    tok = MarianTokenizer.from_pretrained(args.model_dir)
    model = MarianMTModel.from_pretrained(args.model_dir).eval()
    pad, eos = model.config.pad_token_id, model.config.eos_token_id
    with open(args.input, encoding="utf-8") as f:
        lines = f.read().split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if args.limit is not None:
        lines = lines[:args.limit]
    beam = args.mode == "beam"
    search = dict(num_beams=args.beam, length_penalty=args.length_penalty, output_scores=True,
                  early_stopping={"false": False, "true": True, "never": "never"}[args.early_stopping])
    start, ended = time.time(), 0
    for first in range(0, len(lines), args.batch_size):
        batch = tok(lines[first:first + args.batch_size], return_tensors="pt", padding=True)
        with torch.no_grad():
            out = model.generate(
                **batch, **(search if beam else dict(num_beams=1)), do_sample=False, num_return_sequences=1,
                max_new_tokens=args.max_new_tokens, max_length=None, output_logits=True,
                return_dict_in_generate=True, forced_eos_token_id=None, bad_words_ids=[[pad]])
        for b in range(out.sequences.shape[0]):
            ids = []
            for t in out.sequences[b, 1:].tolist():
                if t == pad:
                    break
                ids.append(t)
                if t == eos:
                    break
            done = bool(ids) and ids[-1] == eos
            rows = out.beam_indices[b].tolist() if beam else [b] * len(ids)
            # The distribution generate() draws from: the raw logits with <pad> banned (its
            # bad_words_ids), normalised, as compute_transition_scores(normalize_logits=True) does.
            lps = [torch.log_softmax(out.logits[k][rows[k]].double().index_fill(0, torch.tensor([pad]), float("-inf")),
                                     -1)[t].item() for k, t in enumerate(ids)]
            words = ids[:-1] if done else ids
            rec = {"line": first + b + 1, "tokens": tok.convert_ids_to_tokens(words), "eos": done,
                   "text": tok.decode(ids, skip_special_tokens=True), "token_log_probs": lps}
            if beam:
                rec["score"] = out.sequences_scores[b].item()
                rec["log_prob"] = sum(lps)
            ended += done
            print(json.dumps(rec, ensure_ascii=False))
    print("%d lines, %d ended with </s>, %.1f s" % (len(lines), ended, time.time() - start), file=sys.stderr)


def compare(args):
    """Line by line: the same pieces (and </s>), greedy log-probabilities within the tolerance."""
    with open(args.reference, encoding="utf-8") as f:
        ref = [json.loads(l) for l in f]
    with open(args.nmt, encoding="utf-8") as f:
        got = [json.loads(l) for l in f]
    if len(ref) != len(got):
        print(f"FAIL {args.label}: {len(ref)} reference lines, {len(got)} from nmt")
        return 1
    same, worst, shown = 0, 0.0, 0
    for r, g in zip(ref, got):
        # nmt's token_log_probs end with the </s>'s when the output has one, as the reference's.
        # At the length limit nmt still takes a </s> (its limit counts the subwords before it),
        # where max_new_tokens has no room left for one: the same output, one log-probability more.
        n_ref, n_got = len(r["token_log_probs"]), len(g["token_log_probs"])
        at_limit = len(r["tokens"]) == args.max_new_tokens and n_got == n_ref + 1
        equal = r["tokens"] == g["tokens"] and (n_ref == n_got or at_limit)
        same += equal
        if equal and args.mode_greedy:
            worst = max([worst] + [abs(a - b) for a, b in zip(r["token_log_probs"], g["token_log_probs"])])
        if not equal and shown < 3:
            shown += 1
            print(f"  line {r['line']}: transformers {' '.join(r['tokens'])}\n  {'':>{len(str(r['line'])) + 7}}nmt "
                  f"{' '.join(g['tokens'])}")
    ok = same == len(ref) and worst <= args.log_prob_tolerance
    print(f"{'ok' if ok else 'FAIL'} {args.label}: {same} of {len(ref)} lines the same pieces"
          + (f", greedy log-probabilities within {worst:.2g} (tolerance {args.log_prob_tolerance:g})" if args.mode_greedy else ""))
    return 0 if ok else 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--threads", type=int, default=1, help="torch threads (default 1)")
    sub = p.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make", parents=[common], help="make an OPUS-MT-style Marian model directory")
    m.add_argument("out_dir")
    m.add_argument("--variant", required=True, choices=sorted(VARIANTS))
    m.add_argument("--spm-dir", required=True, help="SentencePiece pair, trained here when missing "
                   "(another --spm-vocab or --train-pairs needs another directory)")
    m.add_argument("--spm-vocab", default="600,700", metavar="SRC,TGT",
                   help="pieces of the English and French SentencePiece models (default 600,700)")
    m.add_argument("--seed", type=int, default=1)
    m.add_argument("--format", choices=("safetensors", "bin"), default="safetensors")
    m.add_argument("--train-steps", type=int,
                   help="Adam updates (default 300 tied, 600 untied and relu-prenorm-flag, 0 opus-shape, "
                   "20000 multi30k-small)")
    m.add_argument("--train-minutes", type=float,
                   help="stop training after M minutes if --train-steps have not been done before")
    m.add_argument("--train-pairs", type=int, default=5000,
                   help="the first N Multi30k pairs, for the SentencePiece pair and training (0: all 29,000)")
    m.add_argument("--batch-size", type=int, help="sentence pairs a batch (default 32; 64 multi30k-small)")
    m.add_argument("--lr", type=float, help="Adam's (peak) learning rate (default 3e-3; 1e-3 multi30k-small)")
    m.add_argument("--warmup", type=int,
                   help="steps of linear warmup, then inverse-sqrt decay; 0: constant lr (default 0; "
                   "400 multi30k-small)")
    m.add_argument("--label-smoothing", type=float, help="(default 0; 0.1 multi30k-small)")
    m.add_argument("--vocab-size", type=int, help="pad vocab.json with pieces \u2581xN up to N entries")
    m.add_argument("--eos-bias", type=float,
                   help="added to final_logits_bias of </s> (default 4.0; 0 multi30k-small, whose bias is 0)")
    g = sub.add_parser("generate", parents=[common],
                       help="translate with transformers' generate(), JSON lines on stdout")
    g.add_argument("model_dir")
    g.add_argument("input")
    g.add_argument("--mode", choices=("greedy", "beam"), required=True)
    g.add_argument("--max-new-tokens", type=int, required=True)
    g.add_argument("--beam", type=int, default=5)
    g.add_argument("--length-penalty", type=float, default=0.0)
    g.add_argument("--early-stopping", choices=("false", "true", "never"), default="false")
    g.add_argument("--batch-size", type=int, default=16)
    g.add_argument("--limit", type=int)
    c = sub.add_parser("compare", help="compare generate's JSON lines with `nmt translate --json`'s; exit 1 on a difference")
    c.add_argument("reference")
    c.add_argument("nmt")
    c.add_argument("--label", default="")
    c.add_argument("--greedy", dest="mode_greedy", action="store_true", help="also compare the log-probabilities")
    c.add_argument("--log-prob-tolerance", type=float, default=1e-4)
    c.add_argument("--max-new-tokens", type=int, required=True, help="the length limit both decoded with")
    args = p.parse_args()
    if args.command == "compare":
        return compare(args)
    import torch
    from transformers.utils import logging
    torch.set_num_threads(args.threads)
    logging.disable_progress_bar()
    logging.set_verbosity_error()  # generation flag notices
    warnings.filterwarnings("ignore", message="Recommended: pip install sacremoses")
    make(args) if args.command == "make" else generate(args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
