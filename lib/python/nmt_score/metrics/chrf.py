"""chrF / chrF++ as sacreBLEU 2.6.0 (sacrebleu/metrics/chrf.py), scored by nmt's C++ port."""
from typing import Optional, Sequence

from .. import _core
from .base import Metric, Score


class CHRFScore(Score):
    def __init__(self, score: float, char_order: int, word_order: int, beta: int):
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        super().__init__(f"chrF{self.beta}" + "+" * self.word_order, score)


class CHRF(Metric):
    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2
    _TOKENIZER_MAP = {}

    def __init__(self, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER, beta: int = BETA,
                 lowercase: bool = False, whitespace: bool = False, eps_smoothing: bool = False,
                 references: Optional[Sequence[Sequence[str]]] = None):
        super().__init__()
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        self.order = self.char_order + self.word_order
        self.lowercase = lowercase
        self.whitespace = whitespace
        self.eps_smoothing = eps_smoothing
        self._core = _core.ChrfScorer(char_order, word_order, beta, lowercase, whitespace, eps_smoothing)
        if references is not None:
            self._cache_references(references)
            self._note_num_refs(self._ref_cache)

    def _signature_name(self) -> str:
        return self._core.name()

    def _corpus(self, hyps, streams) -> CHRFScore:
        return CHRFScore(self._core.corpus(hyps, streams), self.char_order, self.word_order, self.beta)

    def _sentence(self, hyp, refs) -> CHRFScore:
        return CHRFScore(self._core.sentence(hyp, refs), self.char_order, self.word_order, self.beta)
