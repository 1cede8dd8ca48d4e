#!/usr/bin/env python3
"""How well nmt's sentence splitter cuts paragraphs, beside the Moses splitter and pysbd.

Paragraphs are made of known sentences, so each has a gold split: data/fixtures/paragraphs.en
(hand-written: abbreviations, numbers, quotes, parentheses), and consecutive sentences of
Multi30k's val (English and French) and of Tatoeba (English; one line in 50, those without an
inner sentence end), three to a paragraph. For each splitter: the share of paragraphs split
exactly as the gold, and boundary precision/recall; then how often nmt's split equals each
other splitter's.

  sentence_split_eval.py NMT_SPLIT_SENTENCES DATA_DIR FIXTURE
"""
import re
import subprocess
import sys

import pysbd
import sentence_splitter


def groups(sentences, size=3):
    return [sentences[i:i + size] for i in range(0, len(sentences) - size + 1, size)]


def read_lines(path):
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def tatoeba_english(path):
    inner_end = re.compile(r"[.!?]\s+\S")
    out = []
    for i, line in enumerate(read_lines(path)):
        english = line.split("\t")[0].strip()
        if i % 50 == 0 and english and not inner_end.search(english):
            out.append(english)
    return out


def boundaries(sentences):
    """Where each sentence ends, counted in non-space characters (spacing-independent)."""
    ends, n = set(), 0
    for s in sentences[:-1]:
        n += len(re.sub(r"\s", "", s))
        ends.add(n)
    return ends


def nmt_split(binary, language, paragraphs):
    out = subprocess.run([binary, language], input="".join(p + "\n" for p in paragraphs), capture_output=True,
                         text=True, check=True).stdout
    return [line.split("\t") if line else [] for line in out.split("\n")[:len(paragraphs)]]


def score(gold, split):
    exact = sum(g == s for g, s in zip(gold, split))
    tp = fp = fn = 0
    for g, s in zip(gold, split):
        bg, bs = boundaries(g), boundaries(s)
        tp += len(bg & bs)
        fp += len(bs - bg)
        fn += len(bg - bs)
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    return 100 * exact / len(gold), 100 * precision, 100 * recall


def main():
    binary, data, fixture = sys.argv[1:4]
    sets = [
        ("hand-written (abbreviations, numbers, quotes)", "en", [line.split("\t") for line in read_lines(fixture)]),
        ("Multi30k val, en, 3 per paragraph", "en", groups(read_lines(f"{data}/multi30k/val.en"))),
        ("Multi30k val, fr, 3 per paragraph", "fr", groups(read_lines(f"{data}/multi30k/val.fr"))),
        ("Tatoeba, en, 3 per paragraph", "en", groups(tatoeba_english(f"{data}/tatoeba-fra-eng/fra.txt"))),
    ]
    print("| set | paragraphs | splitter | exact split % | boundary precision % | boundary recall % "
          "| same split as nmt % |")
    print("|---|---|---|---|---|---|---|")
    for name, language, gold in sets:
        paragraphs = [" ".join(g) for g in gold]
        moses = sentence_splitter.SentenceSplitter(language=language)
        sbd = pysbd.Segmenter(language=language, clean=False)
        splits = {
            "nmt (ICU)": nmt_split(binary, language, paragraphs),
            "Moses (sentence-splitter)": [moses.split(p) for p in paragraphs],
            "pysbd": [[s.strip() for s in sbd.segment(p) if s.strip()] for p in paragraphs],
        }
        for splitter, split in splits.items():
            exact, precision, recall = score(gold, split)
            same = 100 * sum(a == b for a, b in zip(split, splits["nmt (ICU)"])) / len(gold)
            print(f"| {name} | {len(gold)} | {splitter} | {exact:.1f} | {precision:.1f} | {recall:.1f} | {same:.1f} |")


if __name__ == "__main__":
    main()
