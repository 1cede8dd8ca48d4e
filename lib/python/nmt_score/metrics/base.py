"""Score, Signature and Metric as sacreBLEU 2.6.0 defines them (sacrebleu/metrics/base.py),
the scoring itself done by nmt's C++ port (nmt_score._core)."""
import json
import statistics
from collections.abc import Sequence
from typing import Any, Dict, List, Optional

from .. import _core

__version__ = _core.SACREBLEU_VERSION  # the sacreBLEU release whose figures nmt reproduces


class Score:
    """A metric's score (sacrebleu.metrics.base.Score)."""

    def __init__(self, name: str, score: float):
        self.name = name
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self._verbose = ""

    def format(self, width: int = 2, score_only: bool = False, signature: str = "", is_json: bool = False) -> str:
        d = {"name": self.name, "score": float(f"{self.score:.{width}f}"), "signature": signature}
        sc = f"{self.score:.{width}f}"
        if self._mean > 0:
            confidence_mean = f"{self._mean:.{width}f}"
            confidence_var = f"{self._ci:.{width}f}"
            confidence_str = f"μ = {confidence_mean} ± {confidence_var}"
            sc += f" ({confidence_str})"
            if is_json:
                d["confidence_mean"] = float(confidence_mean)
                d["confidence_var"] = float(confidence_var)
                d["confidence"] = confidence_str
        full_score = f"{self.name}|{signature}" if signature else self.name
        full_score = f"{full_score} = {sc}"
        if self._verbose:
            full_score += f" {self._verbose}"
            d["verbose_score"] = self._verbose
        if score_only:
            return sc
        if is_json:
            for param in signature.split("|"):
                key, value = param.split(":")
                d[key] = value
            return json.dumps(d, indent=1, ensure_ascii=False)
        return full_score

    def estimate_ci(self, scores: List["Score"]):
        raw_scores = sorted([x.score for x in scores])
        n = len(raw_scores)
        lower_idx = n // 40
        upper_idx = n - lower_idx - 1
        self._ci = 0.5 * (raw_scores[upper_idx] - raw_scores[lower_idx])
        self._mean = statistics.mean(raw_scores)

    def __repr__(self):
        return self.format()


class Signature:
    """A reproducibility signature (sacrebleu.metrics.base.Signature); `info` holds its fields."""

    _ABBR = {"version": "v", "nrefs": "#", "test": "t", "lang": "l", "subset": "S", "origlang": "o",
             "bs": "bs", "ar": "ar", "seed": "rs"}

    def __init__(self, metric_name: str, fields: Dict[str, Any], num_refs: int):
        self._metric_name = metric_name
        self.info: Dict[str, Any] = {"version": __version__, "nrefs": "var" if num_refs == -1 else num_refs,
                                     "bs": None, "ar": None, "seed": None, "test": None, "lang": None,
                                     "origlang": None, "subset": None}
        self.info.update(fields)

    def format(self, short: bool = False) -> str:
        pairs = []
        keys = [k for k in self.info if k != "version"] + ["version"]
        for name in keys:
            value = self.info[name]
            if value is not None:
                if isinstance(value, bool):
                    value = "yes" if value else "no"
                pairs.append(f"{name}:{value}")
        long = "|".join(pairs)
        return _core.short_signature(long, self._metric_name) if short else long

    def update(self, key: str, value: Any):
        self.info[key] = value

    def __str__(self):
        return self.format()

    def __repr__(self):
        return self.format()


def _metric_fields(signature: str) -> Dict[str, Any]:
    """The metric's own fields of a C++ signature ("nrefs:1|case:mixed|...|version:2.6.0")."""
    fields = dict(p.split(":", 1) for p in signature.split("|"))
    fields.pop("nrefs")
    fields.pop("version")
    return fields


def _is_str_or_none(x) -> bool:
    return x is None or isinstance(x, str)


class Metric:
    """What BLEU, CHRF and TER share: sacreBLEU's argument checks and reference caching."""

    def __init__(self):
        self._ref_cache = None  # the reference streams given at construction
        self.num_refs = None

    # sacreBLEU's checks, with its messages; then nmt's own for what sacreBLEU lets through
    # (a bad element after the first, None in the references of a corpus given positionally).
    def _check_sentence_score_args(self, hyp: str, refs: Sequence):
        prefix = self.__class__.__name__
        err_msg = None
        if not isinstance(hyp, str):
            err_msg = "The argument `hyp` should be a string."
        elif isinstance(refs, str) or not isinstance(refs, Sequence):
            err_msg = "The argument `refs` should be a sequence of strings."
        elif not all(_is_str_or_none(r) for r in refs):
            err_msg = "Each element of `refs` should be a string."
        if err_msg:
            raise TypeError(f"{prefix}: {err_msg}")
        if not any(r is not None for r in refs):  # sacreBLEU: IndexError
            raise ValueError(f"{prefix}: `refs` holds no reference.")

    def _check_corpus_score_args(self, hyps: Sequence, refs: Optional[Sequence]):
        prefix = self.__class__.__name__
        err_msg = None
        if not isinstance(hyps, Sequence) or isinstance(hyps, str):
            err_msg = "`hyps` should be a sequence of strings."
        elif any(line is None for line in hyps):
            err_msg = "Undefined line in hypotheses stream!"
        elif not all(isinstance(h, str) for h in hyps):
            err_msg = "Each element of `hyps` should be a string."
        if refs is not None and err_msg is None:
            err_msg = self._reference_problem(refs)
        if err_msg:
            raise TypeError(f"{prefix}: {err_msg}")
        if len(hyps) == 0:  # sacreBLEU: IndexError
            raise ValueError(f"{prefix}: `hyps` is empty: there is nothing to score.")

    @staticmethod
    def _reference_problem(refs) -> Optional[str]:
        if not isinstance(refs, Sequence) or isinstance(refs, str):
            return "`refs` should be a sequence of sequence of strings."
        if len(refs) == 0:
            return "`refs` should be a sequence of sequence of strings."
        for stream in refs:
            if not isinstance(stream, Sequence) or isinstance(stream, str):
                return "Each element of `refs` should be a sequence of strings."
            if not all(_is_str_or_none(r) for r in stream):
                return "`refs` should be a sequence of sequence of strings."
        return None

    def _streams(self, references) -> List[List[Optional[str]]]:
        if references:
            return [list(stream) for stream in references]
        if self._ref_cache:
            return self._ref_cache
        raise RuntimeError("No references provided and the cache is empty.")

    def _cache_references(self, references):
        problem = self._reference_problem(references)
        if problem:
            raise TypeError(f"{self.__class__.__name__}: {problem}")
        self._ref_cache = [list(stream) for stream in references]

    def _note_num_refs(self, streams) -> None:
        counts = {sum(1 for s in streams if s[i] is not None) for i in range(len(streams[0]))} if streams else {0}
        self.num_refs = counts.pop() if len(counts) == 1 else -1

    def _unencodable(self, texts) -> None:
        """After the C++ side refused a str: the first line that is not UTF-8 (a lone surrogate, as
        the surrogateescape error handler leaves for undecodable bytes), as a ValueError."""
        for what, lines in texts:
            for i, line in enumerate(lines):
                try:
                    if line is not None:
                        line.encode("utf-8")
                except UnicodeEncodeError as e:
                    raise ValueError(f"{self.__class__.__name__}: {what} line {i + 1} is not valid UTF-8 "
                                     f"({e.reason}: {line[e.start:e.end]!r} at character {e.start + 1})") from None

    def _scored(self, fn, hyps, streams):
        try:
            return fn(hyps, streams)
        except TypeError:
            if isinstance(hyps, str):  # a sentence and its references
                self._unencodable([("hypothesis", [hyps]), ("reference", streams)])
            else:
                self._unencodable([("hypothesis", hyps)] + [(f"reference {k + 1}", s) for k, s in enumerate(streams)])
            raise

    def sentence_score(self, hypothesis: str, references: Sequence[str]):
        if type(hypothesis) is str and type(references) is list and len(references) == 1 \
                and type(references[0]) is str:
            refs = references  # the common call, which passes every check (they took 0.7 of 3.2 us)
        else:
            self._check_sentence_score_args(hypothesis, references)
            refs = [r for r in references if r is not None]
        self.num_refs = len(refs)
        return self._scored(self._sentence, hypothesis, refs)

    def corpus_score(self, hypotheses: Sequence[str], references, n_bootstrap: int = 1):
        self._check_corpus_score_args(hypotheses, references)
        streams = self._streams(references)
        hyps = list(hypotheses)
        self._note_num_refs(streams)
        score = self._scored(self._corpus, hyps, streams)
        if n_bootstrap > 1:
            self.n_bootstrap = n_bootstrap
            mean, ci, seed = _core.bootstrap_ci(self._core, streams, hyps, n_bootstrap)
            self.seed = seed
            score._mean, score._ci = mean, ci
        return score

    def get_signature(self) -> Signature:
        if self.num_refs is None:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        sig = Signature(self._signature_name(), _metric_fields(self._core.signature(1)), self.num_refs)
        if getattr(self, "n_bootstrap", None):
            sig.update("bs", self.n_bootstrap)
            sig.update("seed", self.seed)
        return sig
