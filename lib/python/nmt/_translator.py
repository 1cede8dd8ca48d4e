"""nmt.Translator: nmt's translation service on its CPU engine, from Python."""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Sequence, Union

try:
    from . import _translate
except ImportError as e:  # pragma: no cover - the scorer-only build
    _translate = None
    _IMPORT_ERROR = e

PathLike = Union[str, "os.PathLike[str]"]


@dataclass
class Translation:
    """One hypothesis, with the fields of ``nmt translate --json``.

    ``nbest`` holds every hypothesis best first (this one included) when more than one was asked
    for; ``alignment`` is Pharaoh-style word links ("0-0 1-2 ...") when asked for, else None;
    ``score``, ``log_prob``, ``confidence`` and ``token_log_probs`` are None when the call asked
    for no scores (``return_scores=False``).
    """

    text: str
    tokens: List[str]
    token_ids: List[int]
    score: Optional[float]
    log_prob: Optional[float]
    confidence: Optional[float]
    token_log_probs: Optional[List[float]]
    repetition: bool
    unmet_constraints: List[str]
    alignment: Optional[str]
    warnings: List[str] = field(default_factory=list)
    nbest: List["Translation"] = field(default_factory=list)


def _texts(name: str, values: Any, n: Optional[int] = None) -> List[str]:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise TypeError(f"{name} must be a list of str, not {type(values).__name__}")
    out = list(values)
    if n is not None and len(out) != n:
        raise ValueError(f"{name} has {len(out)} items for {n} texts")
    for i, v in enumerate(out):
        if not isinstance(v, str):
            raise TypeError(f"{name}[{i}] must be str, not {type(v).__name__}")
        try:
            v.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(f"{name}[{i}] is not valid Unicode text: {e.reason} at position {e.start}") from None
    return out


def _phrase_lists(name: str, values: Any, n: int) -> List[List[str]]:
    if values is None:
        return []
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or len(values) != n:
        raise ValueError(f"{name} must be a list of {n} lists of phrases (one per text)")
    return [_texts(f"{name}[{i}]", v) for i, v in enumerate(values)]


def _number(name: str, value: Any, kind: type) -> Any:
    if isinstance(value, bool) or not isinstance(value, (int, float) if kind is float else int):
        raise TypeError(f"{name} must be {kind.__name__}, not {type(value).__name__}")
    return kind(value)


class Translator:
    """A model directory (or several: an ensemble) loaded for translation on nmt's CPU engine.

    Args:
        model_dir: a directory written by ``nmt train``, ``average``, ``quantize`` or ``import``
            (model format 2: with model.safetensors), or a list of them for an ensemble.
        device: "cpu" (the engine decodes on the CPU; a GPU needs the nmt command of a
            LibTorch build).
        int8: decode with int8 matrix products (an int8 copy is int8 anyway).
        threads: threads per call (0: the machine's).

    Raises FileNotFoundError for a missing directory, ValueError for bad arguments and
    RuntimeError for a model nmt cannot read, each with nmt's one-line message. Threads may
    share one Translator; ``close()`` (or leaving a ``with`` block) frees the model.
    """

    def __init__(self, model_dir: Union[PathLike, Sequence[PathLike]], device: str = "cpu", int8: bool = False,
                 threads: int = 0) -> None:
        if _translate is None:
            raise ImportError(f"this nmt package was built as the scorer alone: {_IMPORT_ERROR}")
        dirs = [model_dir] if isinstance(model_dir, (str, os.PathLike)) else list(model_dir)
        if not dirs:
            raise ValueError("model_dir: no model directory given")
        self._dirs = [os.fspath(d) for d in dirs]
        for d in self._dirs:
            if not os.path.isdir(d):
                raise FileNotFoundError(f"{d}: no such model directory")
        if device != "cpu":
            raise ValueError(f"device {device!r}: nmt's Python module decodes on the CPU only")
        if not isinstance(int8, bool):
            raise TypeError(f"int8 must be bool, not {type(int8).__name__}")
        threads = _number("threads", threads, int)
        if threads < 0:
            raise ValueError(f"threads is {threads}, must be 0 (the machine's) or more")
        self._service = _translate.Service(self._dirs, int8, threads)
        self._info = self._service.info()

    def _live(self) -> Any:
        if self._service is None:
            raise RuntimeError("this Translator is closed")
        return self._service

    def translate_batch(self, texts: Sequence[str], *, beam: int = 1, nbest: int = 1, alpha: float = 0.6,
                        length_penalty: str = "gnmt", max_len_a: float = 1.5, max_len_b: int = 10,
                        max_length: Optional[int] = None, no_repeat_ngram: int = 0, batch_size: int = 64,
                        sampling: Optional[str] = None, seed: int = 0, temperature: float = 1.0,
                        prefixes: Optional[Sequence[str]] = None,
                        constraints: Optional[Sequence[Sequence[str]]] = None,
                        avoid: Optional[Sequence[Sequence[str]]] = None, alignment: bool = False,
                        markup: bool = False, split_sentences: bool = True,
                        return_scores: bool = True) -> List[Translation]:
        """Translates each text (a sentence or a paragraph), as ``nmt translate`` does.

        The search options are ``nmt translate``'s (``--beam``, ``--nbest``, ``--alpha``,
        ``--length-penalty`` gnmt|average|none, ``--max-len-a``/``--max-len-b`` or
        ``max_length`` for a fixed limit, ``--no-repeat-ngram``, ``--batch-size``,
        ``--sampling``). ``prefixes``: one target text per text that its translation starts
        with; ``constraints``/``avoid``: per text, phrases its translation must contain (beam
        search) / must not. ``markup``: texts with inline tags, put back around the translated
        words. ``split_sentences``: a text of several sentences is translated sentence by
        sentence and joined (``--whole-lines`` is False). ``return_scores=False`` skips every
        token's log-probability (faster greedy search; the figures are then None). Returns one
        Translation per text.
        """
        texts = _texts("texts", texts)
        n = len(texts)
        search: Dict[str, Any] = {
            "beam": _number("beam", beam, int), "nbest": _number("nbest", nbest, int),
            "alpha": _number("alpha", alpha, float), "length_penalty": length_penalty,
            "max_len_a": _number("max_len_a", max_len_a, float), "max_len_b": _number("max_len_b", max_len_b, int),
            "no_repeat_ngram": _number("no_repeat_ngram", no_repeat_ngram, int),
            "batch_size": _number("batch_size", batch_size, int), "seed": _number("seed", seed, int),
            "temperature": _number("temperature", temperature, float),
        }
        if not isinstance(length_penalty, str):
            raise TypeError(f"length_penalty must be str, not {type(length_penalty).__name__}")
        if max_length is not None:
            search["max_len_a"], search["max_len_b"] = 0.0, _number("max_length", max_length, int)
        if sampling is not None:
            if not isinstance(sampling, str):
                raise TypeError(f"sampling must be str ('top-k:K' or 'top-p:P'), not {type(sampling).__name__}")
            search["sampling"] = sampling
        for name, flag in (("alignment", alignment), ("markup", markup), ("split_sentences", split_sentences),
                           ("return_scores", return_scores)):
            if not isinstance(flag, bool):
                raise TypeError(f"{name} must be bool, not {type(flag).__name__}")
        prefix_list = _texts("prefixes", prefixes, n) if prefixes is not None else []
        include = _phrase_lists("constraints", constraints, n)
        avoided = _phrase_lists("avoid", avoid, n)
        raw = self._live().translate(texts, prefix_list, include, avoided, json.dumps(search), alignment, markup,
                                     split_sentences, return_scores)
        out = []
        for hypotheses in raw:
            best = [Translation(**h) for h in hypotheses]
            if len(best) > 1:
                best[0].nbest = best
            out.append(best[0])
        return out

    def score_batch(self, sources: Sequence[str], targets: Sequence[str], *, batch_size: int = 64) -> List[float]:
        """Each target's log-probability given its source (forced decoding), as ``nmt score``."""
        sources = _texts("sources", sources)
        targets = _texts("targets", targets, len(sources))
        search = {"batch_size": _number("batch_size", batch_size, int)}
        return [lp for lp, _ in self._live().score(sources, targets, json.dumps(search))]

    def translate_file(self, input_path: PathLike, output_path: PathLike, format: str = "auto",
                       **options: Any) -> None:
        """Translates a file as ``nmt translate -i IN -o OUT --format FORMAT`` does.

        ``format``: "text" (one paragraph per line), "html" (the page comes back with its
        structure), or "auto" (html for .html, .htm and .xhtml). The output is written whole or
        not at all. ``options`` are translate_batch's search options.
        """
        src, dst = os.fspath(input_path), os.fspath(output_path)
        if format == "auto":
            format = "html" if os.path.splitext(src)[1].lower() in (".html", ".htm", ".xhtml") else "text"
        if format not in ("text", "html"):
            raise ValueError(f"format {format!r}: must be auto, text or html")
        if os.path.exists(dst) and os.path.exists(src) and os.path.samefile(src, dst):
            raise ValueError(f"{src} is both the input and the output; the input would be destroyed")
        with open(src, encoding="utf-8", newline="") as f:
            content = f.read()
        if format == "html":
            unknown = set(options) - {"beam", "alpha", "length_penalty", "max_len_a", "max_len_b", "batch_size"}
            if unknown:
                raise ValueError(f"format html does not take {', '.join(sorted(unknown))}")
            result = self._live().translate_html(content, json.dumps(options))
        else:
            lines = content.split("\n")
            last_empty = lines and lines[-1] == ""
            if last_empty:
                lines.pop()
            lines = [line[:-1] if line.endswith("\r") else line for line in lines]
            result = "".join(t.text + "\n" for t in self.translate_batch(lines, **options)) if lines else ""
        tmp = f"{dst}.tmp-{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8", newline="") as f:
                f.write(result)
                f.flush()
                os.fsync(f.fileno())
            os.replace(tmp, dst)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def close(self) -> None:
        """Frees the model; the Translator cannot translate afterwards."""
        self._service = None

    def __enter__(self) -> "Translator":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._service is None else f"{self._info['weights']}, CPU engine"
        kind = "+".join(self._info["types"])
        return f"nmt.Translator({self._dirs!r}, {kind}, {state})"


def import_marian(hf_dir: PathLike, out_dir: PathLike, force: bool = False) -> Dict[str, Any]:
    """Convert a Hugging Face MarianMTModel directory (an OPUS-MT model) into an nmt model directory.

    What ``nmt import HF_DIR -o OUT_DIR`` does, without LibTorch: ``hf_dir`` holds config.json,
    model.safetensors, source.spm, target.spm and vocab.json (a pytorch_model.bin needs the nmt
    command of a LibTorch build); ``out_dir`` is written whole or not at all, an existing one only
    with ``force``. Returns the summary: weights_file, parameters, vocabulary (target pieces),
    notes (what the user should know) and seconds. Raises FileNotFoundError for a missing
    ``hf_dir``, ValueError for an existing ``out_dir`` without ``force``, RuntimeError for a
    directory nmt cannot import, each with nmt's one-line message.
    """
    if _translate is None:
        raise ImportError(f"this nmt package was built as the scorer alone: {_IMPORT_ERROR}")
    if not isinstance(force, bool):
        raise TypeError(f"force must be bool, not {type(force).__name__}")
    source, target = os.fspath(hf_dir), os.fspath(out_dir)
    if not os.path.isdir(source):
        raise FileNotFoundError(f"{source}: no such directory")
    return dict(_translate.import_marian(source, target, force))
