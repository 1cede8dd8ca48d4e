"""nmt_score, the Python module: sacreBLEU 2.6.0's figures to the bit, and bad input as a Python
exception with a clear message (never a crash). Run by scripts/ci/sacrebleu-suite.sh, after
sacreBLEU's own tests, against the installed module."""
import json
import math
import os
import pathlib

import pytest

import nmt_score
from nmt_score import BLEU, CHRF, TER
from nmt_score.significance import PairedTest

VECTORS = pathlib.Path(__file__).resolve().parent.parent / "score-vectors"
# The metric configurations tests/score-vectors/*/expected.json holds sacreBLEU's API figures
# for (scripts/gen/gen-score-vectors.py, CONFIGS).
CONFIGS = {
    "bleu": lambda: BLEU(), "bleu-intl": lambda: BLEU(tokenize="intl"), "bleu-char": lambda: BLEU(tokenize="char"),
    "bleu-zh": lambda: BLEU(tokenize="zh"), "bleu-none-lc": lambda: BLEU(tokenize="none", lowercase=True),
    "chrf": lambda: CHRF(), "chrf++": lambda: CHRF(word_order=2), "ter": lambda: TER(),
    "ter-norm": lambda: TER(normalized=True),
    "ter-norm-asian-nopunct": lambda: TER(normalized=True, asian_support=True, no_punct=True),
    "ter-case-nopunct": lambda: TER(case_sensitive=True, no_punct=True),
}


def read(path):
    with open(path, encoding="utf-8", newline="\n") as f:
        return [line.rstrip() for line in f]


def cases():
    for case in sorted(VECTORS.iterdir()):
        expected = json.loads((case / "expected.json").read_text(encoding="utf-8"))
        refs = [read(case / r) for r in expected["refs"]]
        systems = [read(case / s) for s in expected["systems"]]
        for config, figures in expected["api"].items():
            yield pytest.param(refs, systems, config, figures, id=f"{case.name}-{config}")


def same(actual, expected):
    """The same double, bit for bit (NaN equal to NaN)."""
    return actual == expected or (isinstance(actual, float) and math.isnan(actual) and math.isnan(expected))


@pytest.mark.parametrize("refs, systems, config, figures", list(cases()))
def test_corpus_and_sentence_scores_are_sacrebleus_to_the_bit(refs, systems, config, figures):
    make = CONFIGS[config]
    assert [make().corpus_score(s, refs).score for s in systems] == figures["corpus"]
    metric = make()
    sentence = [metric.sentence_score(h, [r[i] for r in refs]).score for i, h in enumerate(systems[0])]
    assert sentence == figures["sentence"]


@pytest.mark.parametrize("refs, systems, config, figures", list(cases()))
def test_bootstrap_and_paired_tests_are_sacrebleus_to_the_bit(refs, systems, config, figures, monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)
    make = CONFIGS[config]
    conf = figures["confidence"]
    if "error" not in conf:
        s = make().corpus_score(systems[0], refs, n_bootstrap=conf["n"])
        assert (s._mean, s._ci) == (conf["mean"], conf["ci"])
    if len(systems) < 2:
        return
    named = [(f"s{i}", lines) for i, lines in enumerate(systems)]
    for test in ("bs", "ar"):
        expected = figures[f"paired_{test}"]
        _, scores = PairedTest(named, {"m": make()}, refs, test_type=test, n_samples=expected["n"])()
        (results,) = [v for k, v in scores.items() if k != "System"]
        for r, e in zip(results, expected["results"]):
            assert same(r.score, e["score"]) and r.p_value == e["p_value"]
            assert (r.mean, r.ci) == (e["mean"], e["ci"])


def test_signatures_as_sacrebleu_formats_them():
    bleu = BLEU()
    bleu.corpus_score(["a b c d", "x y"], [["a b c d", "x y"], ["a b", None]])
    assert str(bleu.get_signature()) == "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
    chrf = CHRF(word_order=2)
    chrf.corpus_score(["a b c d"], [["a b c d"]], n_bootstrap=10)
    assert chrf.get_signature().format(short=True) == "#:1|bs:10|rs:12345|c:mixed|e:yes|nc:6|nw:2|s:no|v:2.6.0"
    with pytest.raises(ValueError, match="Number of references unknown"):
        TER().get_signature()


# Bad input: sacreBLEU's exception and message where it gives one; where it crashes deeper
# (IndexError, AttributeError) or silently scores something else, a clearer one.
BAD_INPUT = [
    (lambda: nmt_score.corpus_bleu(None, [["a"]]), TypeError, "BLEU: `hyps` should be a sequence of strings."),
    (lambda: nmt_score.corpus_bleu([1], [["a"]]), TypeError, "BLEU: Each element of `hyps` should be a string."),
    (lambda: nmt_score.corpus_bleu(["a", 1], [["a", "b"]]), TypeError, "BLEU: Each element of `hyps` should be a string."),
    (lambda: nmt_score.corpus_bleu(["a", None], [["a", "b"]]), TypeError, "BLEU: Undefined line in hypotheses stream!"),
    (lambda: nmt_score.corpus_bleu([b"a"], [["a"]]), TypeError, "BLEU: Each element of `hyps` should be a string."),
    (lambda: nmt_score.corpus_bleu("abc", [["a"]]), TypeError, "BLEU: `hyps` should be a sequence of strings."),
    (lambda: nmt_score.corpus_bleu(["a"], [[1]]), TypeError, "BLEU: `refs` should be a sequence of sequence of strings."),
    (lambda: nmt_score.corpus_bleu(["a"], ["a"]), TypeError, "BLEU: Each element of `refs` should be a sequence of strings."),
    (lambda: nmt_score.corpus_bleu(["a"], None), RuntimeError, "No references provided and the cache is empty."),
    (lambda: nmt_score.corpus_bleu([], [[]]), ValueError, "BLEU: `hyps` is empty: there is nothing to score."),
    (lambda: nmt_score.corpus_bleu(["a", "b"], [["a"]]), ValueError, "BLEU: 2 hypotheses but reference stream 1 has 1 lines"),
    (lambda: nmt_score.corpus_chrf(["a"], [["a"], ["a", "b"]]), ValueError, "CHRF: 1 hypotheses but reference stream 2 has 2 lines"),
    (lambda: nmt_score.corpus_ter(["a\udcff"], [["a"]]), ValueError,
     "TER: hypothesis line 1 is not valid UTF-8 (surrogates not allowed: '\\udcff' at character 2)"),
    (lambda: nmt_score.sentence_bleu("a", ["b", "c\ud800"]), ValueError,
     "BLEU: reference line 2 is not valid UTF-8 (surrogates not allowed: '\\ud800' at character 2)"),
    (lambda: nmt_score.sentence_bleu(None, ["a"]), TypeError, "BLEU: The argument `hyp` should be a string."),
    (lambda: nmt_score.sentence_bleu("a", "a"), TypeError, "BLEU: The argument `refs` should be a sequence of strings."),
    (lambda: nmt_score.sentence_ter("a", [3]), TypeError, "TER: Each element of `refs` should be a string."),
    (lambda: nmt_score.sentence_chrf("a", []), ValueError, "CHRF: `refs` holds no reference."),
    (lambda: BLEU().corpus_score(["a b", "c d"], [["a b", "c d"], ["a", None]], n_bootstrap=10), ValueError,
     "bootstrap and paired tests need every reference line: reference stream 2 holds None (a variable number of references)"),
    (lambda: BLEU(tokenize="foo"), ValueError, "BLEU: tokenize='foo': unknown tokenizer 'foo' (expected 13a, intl, zh, char or none)"),
]


@pytest.mark.parametrize("call, error, message", BAD_INPUT)
def test_bad_input_is_a_python_exception_with_a_clear_message(call, error, message):
    with pytest.raises(error) as caught:
        call()
    assert str(caught.value) == message


def test_mecab_tokenizers_are_refused_naming_what_they_need():
    with pytest.raises(ValueError, match="MeCab"):
        BLEU(tokenize="ja-mecab")
    with pytest.raises(ValueError, match="MeCab"):
        BLEU(trg_lang="ko")  # the tokenizer a Korean target implies
