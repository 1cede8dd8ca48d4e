"""BLEU as sacreBLEU 2.6.0 (sacrebleu/metrics/bleu.py), scored by nmt's C++ port."""
from typing import List, Optional, Sequence

from .. import _core
from .base import Metric, Score


class BLEUScore(Score):
    def __init__(self, score: float, counts: List[int], totals: List[int], precisions: List[float], bp: float,
                 sys_len: int, ref_len: int):
        self.name = "BLEU"
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self.ratio = self.sys_len / self.ref_len if self.ref_len else 0

    # Formatted when asked for: building these strings for every sentence was a third of a
    # sentence_score call (2.6 of 7 us measured).
    @property
    def prec_str(self) -> str:
        return "/".join([f"{p:.1f}" for p in self.precisions])

    @property
    def _verbose(self) -> str:
        return (f"{self.prec_str} (BP = {self.bp:.3f} ratio = {self.ratio:.3f} hyp_len = {self.sys_len:d} "
                f"ref_len = {self.ref_len:d})")


def _score(t) -> BLEUScore:
    return BLEUScore(t[0], t[1], t[2], t[3], t[4], t[6], t[7])


class BLEU(Metric):
    """sacrebleu.metrics.BLEU. Tokenizers: 13a, intl, zh, char, none (ja-mecab, ko-mecab and the
    SentencePiece ones raise ValueError naming what they need)."""

    SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
    TOKENIZERS = ["none", "zh", "13a", "char", "intl", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200"]
    TOKENIZER_DEFAULT = "13a"
    _TOKENIZER_MAP = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}

    def __init__(self, lowercase: bool = False, force: bool = False, tokenize: Optional[str] = None,
                 smooth_method: str = "exp", smooth_value: Optional[float] = None, max_ngram_order: int = 4,
                 effective_order: bool = False, trg_lang: str = "",
                 references: Optional[Sequence[Sequence[str]]] = None):
        super().__init__()
        self._force = force
        self.trg_lang = trg_lang
        self.lowercase = lowercase
        self.smooth_value = smooth_value
        self.smooth_method = smooth_method
        self.max_ngram_order = max_ngram_order
        self.effective_order = effective_order
        assert self.smooth_method in self.SMOOTH_DEFAULTS.keys(), \
            "Unknown smooth_method {self.smooth_method!r}"
        if tokenize is None:
            tokenize = self._TOKENIZER_MAP.get(trg_lang, self.TOKENIZER_DEFAULT)
        self.tokenize = tokenize
        try:
            self._core = _core.BleuScorer(tokenize, lowercase, smooth_method,
                                          None if smooth_value is None else float(smooth_value),
                                          effective_order, max_ngram_order)
        except ValueError as e:  # the C++ message names the CLI option: "--tokenize ja-mecab: needs MeCab..."
            raise ValueError(f"BLEU: tokenize={tokenize!r}: {str(e).split(': ', 1)[-1]}") from None
        self.tokenizer = self._core.tokenize
        if references is not None:
            self._cache_references(references)
            self._note_num_refs(self._ref_cache)

    @staticmethod
    def compute_bleu(correct: List[int], total: List[int], sys_len: int, ref_len: int,
                     smooth_method: str = "none", smooth_value=None, effective_order: bool = False,
                     max_ngram_order: int = 4) -> BLEUScore:
        assert smooth_method in BLEU.SMOOTH_DEFAULTS.keys(), f"Unknown smooth_method {smooth_method!r}"
        return _score(_core.compute_bleu(list(correct), list(total), int(sys_len), int(ref_len), smooth_method,
                                         None if smooth_value is None else float(smooth_value),
                                         effective_order, max_ngram_order))

    def _signature_name(self) -> str:
        return "BLEU"

    def _corpus(self, hyps, streams) -> BLEUScore:
        return _score(self._core.corpus(hyps, streams))

    def _sentence(self, hyp, refs) -> BLEUScore:
        return _score(_core.bleu_sentence(self._core, hyp, refs))
