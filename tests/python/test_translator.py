"""nmt.Translator (lib/python/nmt) against the nmt command of the same build: every option gives
what `nmt translate` gives for the same models and input, threads sharing one translator get what
each gets alone, and bad input is a Python exception with nmt's message, never a crash.

Needs the package built with the translator (pip install ., not the scorer alone) and, to make
models without LibTorch, NMT_BINARY (an nmt that translates on the CPU engine) and
NMT_RANDOM_MODEL (tests/tools/random_model.cc); skipped otherwise.
"""
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest

nmt = pytest.importorskip("nmt")
try:
    from nmt import _translate  # noqa: F401
except ImportError:
    pytest.skip("this nmt package is the scorer alone (NMT_SCORER_ONLY)", allow_module_level=True)

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "data" / "fixtures"
NMT = os.environ.get("NMT_BINARY")
RANDOM_MODEL = os.environ.get("NMT_RANDOM_MODEL")
if not NMT or not RANDOM_MODEL:
    pytest.skip("NMT_BINARY and NMT_RANDOM_MODEL are not set", allow_module_level=True)

LINES = (FIXTURES / "tiny.en").read_text(encoding="utf-8").splitlines()


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    base = tmp_path_factory.mktemp("models")
    out = {}
    for kind in ("transformer", "gru"):
        subprocess.run([RANDOM_MODEL, str(base / kind), kind, str(FIXTURES / "tiny.en"), str(FIXTURES / "tiny.fr")],
                       check=True)
        out[kind] = str(base / kind)
    return out


def cli_json(model_dirs, lines, *flags):
    args = [NMT, "translate", "-q", "--threads", "1", "--json"]
    for d in model_dirs:
        args += ["-m", d]
    done = subprocess.run(args + list(flags), input="\n".join(lines) + "\n", capture_output=True, text=True, check=True)
    return [json.loads(line) for line in done.stdout.splitlines()]


CASES = [
    ("transformer, greedy", ["transformer"], {}, []),
    ("gru, beam 3", ["gru"], {"beam": 3}, ["--beam", "3"]),
    ("ensemble, beam 2 nbest 2", ["transformer", "gru"], {"beam": 2, "nbest": 2}, ["--beam", "2", "--nbest", "2"]),
    ("int8", ["transformer"], {}, ["--int8"]),
    ("average penalty, alpha 1", ["gru"], {"beam": 3, "length_penalty": "average", "alpha": 1.0},
     ["--beam", "3", "--length-penalty", "average", "--alpha", "1"]),
    ("no-repeat 2, short limit", ["transformer"], {"no_repeat_ngram": 2, "max_len_a": 0.5, "max_len_b": 3},
     ["--no-repeat-ngram", "2", "--max-len-a", "0.5", "--max-len-b", "3"]),
    ("whole lines", ["gru"], {"split_sentences": False}, ["--whole-lines"]),
    ("sampling top-k:5, seed 3", ["transformer"], {"sampling": "top-k:5", "seed": 3},
     ["--sampling", "top-k:5", "--seed", "3"]),
]


@pytest.mark.parametrize("name,kinds,options,flags", CASES, ids=[c[0] for c in CASES])
def test_every_option_gives_what_nmt_translate_gives(models, name, kinds, options, flags):
    dirs = [models[k] for k in kinds]
    int8 = "--int8" in flags
    with nmt.Translator(dirs if len(dirs) > 1 else dirs[0], int8=int8, threads=1) as t:
        got = t.translate_batch(LINES, **options)
    expected = cli_json(dirs, LINES, *flags)
    assert [r.text for r in got] == [e["translation"] for e in expected]
    assert [r.tokens for r in got] == [e["tokens"] for e in expected]
    for r, e in zip(got, expected):
        assert r.score == pytest.approx(e["score"], abs=1e-6)
        assert r.log_prob == pytest.approx(e["log_prob"], abs=1e-6)
        assert r.confidence == pytest.approx(e["confidence"], abs=1e-6)
        assert r.repetition == e["repetition"]
        if options.get("nbest", 1) > 1:
            assert [h.text for h in r.nbest] == [h["translation"] for h in e["nbest"]]


def test_prefixes_phrases_to_avoid_and_alignment_as_the_cli(models, tmp_path):
    prefixes = ["" if i % 2 else LINES[i].split()[0] for i in range(len(LINES))]
    avoid = [[LINES[i].split()[-1]] if i % 3 == 0 else [] for i in range(len(LINES))]
    (tmp_path / "prefixes").write_text("".join(p + "\n" for p in prefixes), encoding="utf-8")
    (tmp_path / "avoid").write_text("".join("\t".join(a) + "\n" for a in avoid), encoding="utf-8")
    with nmt.Translator(models["transformer"], threads=1) as t:
        got = t.translate_batch(LINES, beam=2, prefixes=prefixes, avoid=avoid, alignment=True)
    done = subprocess.run([NMT, "translate", "-q", "--threads", "1", "-m", models["transformer"], "--beam", "2",
                           "--prefix-file", str(tmp_path / "prefixes"), "--avoid-per-line", str(tmp_path / "avoid"),
                           "--json", "--alignment", "-i", str(FIXTURES / "tiny.en")],
                          capture_output=True, text=True, check=True)
    expected = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.text for r in got] == [e["translation"] for e in expected]
    assert [r.alignment for r in got] == [e["alignment"] for e in expected]


def test_phrases_to_include_as_the_cli(models, tmp_path):
    include = [[LINES[i].split()[0].lower()] if i % 2 == 0 else [] for i in range(len(LINES))]
    (tmp_path / "include").write_text("".join("\t".join(c) + "\n" for c in include), encoding="utf-8")
    with nmt.Translator(models["gru"], threads=1) as t:
        got = t.translate_batch(LINES, beam=3, constraints=include)
    done = subprocess.run([NMT, "translate", "-q", "--threads", "1", "-m", models["gru"], "--beam", "3",
                           "--constraints", str(tmp_path / "include"), "--json", "-i", str(FIXTURES / "tiny.en")],
                          capture_output=True, text=True, check=True)
    expected = [json.loads(line) for line in done.stdout.splitlines()]
    assert [(r.text, r.unmet_constraints) for r in got] == [(e["translation"], e["unmet_constraints"]) for e in expected]
    for r, phrases in zip(got, include):
        assert all(p in r.text for p in phrases) or r.unmet_constraints == phrases, (r, phrases)


def test_scores_are_those_of_nmt_score(models, tmp_path):
    targets = (FIXTURES / "tiny.fr").read_text(encoding="utf-8").splitlines()
    with nmt.Translator(models["gru"], threads=1) as t:
        got = t.score_batch(LINES, targets)
    done = subprocess.run([NMT, "score", "-q", "--threads", "1", "-m", models["gru"], "--src", str(FIXTURES / "tiny.en"),
                           "--tgt", str(FIXTURES / "tiny.fr")], capture_output=True, text=True, check=True)
    assert got == pytest.approx([float(x) for x in done.stdout.split()], abs=1e-6)


def test_translate_file_writes_what_the_cli_writes(models, tmp_path):
    t = nmt.Translator(models["transformer"], threads=1)
    for name in ("paragraphs.en", "page.html"):
        out = tmp_path / (name + ".out")
        t.translate_file(FIXTURES / name, out)
        cli = tmp_path / (name + ".cli")
        subprocess.run([NMT, "translate", "-q", "--threads", "1", "-m", models["transformer"], "-i", str(FIXTURES / name),
                        "-o", str(cli)], check=True)
        assert out.read_bytes() == cli.read_bytes(), name
    with pytest.raises(ValueError, match="both the input and the output"):
        t.translate_file(out, out)


def test_four_threads_sharing_one_translator_get_what_each_gets_alone(models):
    t = nmt.Translator(models["transformer"], threads=1)
    batches = [LINES[i:] + LINES[:i] for i in range(4)]
    alone = [[r.text for r in t.translate_batch(b, beam=2)] for b in batches]
    shared = [None] * 4

    def work(i):
        for _ in range(5):
            shared[i] = [r.text for r in t.translate_batch(batches[i], beam=2)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert shared == alone


def test_bad_input_is_a_python_exception_with_nmts_message(models, tmp_path):
    t = nmt.Translator(models["gru"], threads=1)
    with pytest.raises(TypeError, match=r"texts\[1\] must be str"):
        t.translate_batch(["a", 3])
    with pytest.raises(TypeError, match=r"texts\[0\] must be str, not NoneType"):
        t.translate_batch([None])
    with pytest.raises(TypeError, match="texts must be a list of str, not bytes"):
        t.translate_batch(b"abc")
    with pytest.raises(TypeError, match="texts must be a list of str, not str"):
        t.translate_batch("a sentence")
    with pytest.raises(ValueError, match=r"texts\[0\] is not valid Unicode"):
        t.translate_batch(["\ud800"])
    with pytest.raises(ValueError, match="beam"):
        t.translate_batch(["a"], beam=0)
    with pytest.raises(TypeError, match="beam must be int"):
        t.translate_batch(["a"], beam="3")
    with pytest.raises(ValueError, match="nbest"):
        t.translate_batch(["a"], beam=2, nbest=3)
    with pytest.raises(ValueError, match="length_penalty"):
        t.translate_batch(["a"], length_penalty="longest")
    with pytest.raises(ValueError, match="top-k"):
        t.translate_batch(["a"], sampling="top-k:0")
    with pytest.raises(ValueError, match="prefixes has 1 items for 2 texts"):
        t.translate_batch(["a", "b"], prefixes=["x"])
    with pytest.raises(FileNotFoundError, match="no such model directory"):
        nmt.Translator(str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="CPU only"):
        nmt.Translator(models["gru"], device="cuda")
    newer = tmp_path / "newer"
    subprocess.run(["cp", "-r", models["gru"], str(newer)], check=True)
    config = json.loads((newer / "config.json").read_text())
    config["format"] = 99
    (newer / "config.json").write_text(json.dumps(config))
    with pytest.raises(RuntimeError, match="model format 99 is newer"):
        nmt.Translator(str(newer))
    assert t.translate_batch([""])[0].text == ""  # an empty text is an empty translation
    assert t.translate_batch([]) == []


def test_close_repr_and_context_manager(models):
    with nmt.Translator(models["transformer"]) as t:
        assert "transformer" in repr(t) and "float32" in repr(t)
    assert "closed" in repr(t)
    with pytest.raises(RuntimeError, match="closed"):
        t.translate_batch(["a"])
    assert nmt.__version__ == subprocess.run([NMT, "--version"], capture_output=True, text=True).stdout.split()[1]
    assert nmt.score.corpus_bleu(["a b c d"], [["a b c d"]]).score == pytest.approx(100.0)


def test_python_m_nmt_translates_as_the_api(models):
    done = subprocess.run([sys.executable, "-m", "nmt", "translate", "-m", models["gru"], "--beam", "3"],
                          input="\n".join(LINES) + "\n", capture_output=True, text=True, check=True)
    with nmt.Translator(models["gru"]) as t:
        assert done.stdout.splitlines() == [r.text for r in t.translate_batch(LINES, beam=3)]
    bad = subprocess.run([sys.executable, "-m", "nmt", "translate", "-m", "/nowhere"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1, bad.stderr


def test_ctrl_c_stops_a_call_and_the_translator_carries_on(models):
    script = f"""
import os, signal, sys, threading, time
import nmt
# Python's own Ctrl-C handler, as an interactive interpreter has it: a test run in the background
# (nohup ... &) inherits SIGINT ignored, and Python then installs none.
signal.signal(signal.SIGINT, signal.default_int_handler)
t = nmt.Translator({models['gru']!r}, threads=1)
texts = {LINES!r} * 20000  # seconds of work at batch 1 even for this tiny GRU: the signal comes first
threading.Timer(0.3, lambda: os.kill(os.getpid(), signal.SIGINT)).start()
start = time.time()
try:
    t.translate_batch(texts, batch_size=1)
    print("not interrupted")
except KeyboardInterrupt:
    print("interrupted after", round(time.time() - start, 1))
print(t.translate_batch(["{LINES[0]}"])[0].text == t.translate_batch(["{LINES[0]}"])[0].text)
"""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("interrupted"), done.stdout
    assert lines[1] == "True"


def test_without_scores_the_same_translations_and_no_figures(models):
    with nmt.Translator(models["gru"], threads=1) as t:
        with_scores = t.translate_batch(LINES)
        without = t.translate_batch(LINES, return_scores=False)
    assert [r.text for r in without] == [r.text for r in with_scores]
    assert all(r.score is None and r.log_prob is None and r.token_log_probs is None for r in without)


def test_import_marian_writes_what_nmt_import_writes(tmp_path):
    hf = tmp_path / "hf"
    subprocess.run([RANDOM_MODEL, str(hf), "marian", str(FIXTURES / "tiny.en"), str(FIXTURES / "tiny.fr")], check=True)
    summary = nmt.import_marian(hf, tmp_path / "py")
    subprocess.run([NMT, "import", "-q", str(hf), "-o", str(tmp_path / "cli")], check=True)
    for name in ("config.json", "model.safetensors", "spm.model", "spm.src.model"):
        assert (tmp_path / "py" / name).read_bytes() == (tmp_path / "cli" / name).read_bytes(), name
    assert summary["weights_file"] == str(hf / "model.safetensors") and summary["vocabulary"] > 4, summary
    with nmt.Translator(tmp_path / "py", threads=1) as t:
        [r] = t.translate_batch(["a man with a dog"], max_length=5)
    assert 0 < len(r.tokens) <= 5 and not {"<pad>", "<s>"} & set(r.tokens), r
    with pytest.raises(ValueError, match="already exists"):
        nmt.import_marian(hf, tmp_path / "py")
    nmt.import_marian(hf, tmp_path / "py", force=True)
    with pytest.raises(FileNotFoundError, match="no such directory"):
        nmt.import_marian(tmp_path / "nowhere", tmp_path / "never")
    (hf / "model.safetensors").rename(hf / "pytorch_model.bin")
    with pytest.raises(RuntimeError, match="pytorch_model.bin needs LibTorch's unpickler"):
        nmt.import_marian(hf, tmp_path / "never")
    assert not (tmp_path / "never").exists()
