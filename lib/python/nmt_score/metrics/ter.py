"""TER as sacreBLEU 2.6.0 (sacrebleu/metrics/ter.py), scored by nmt's C++ port."""
from typing import Optional, Sequence

from .. import _core
from .base import Metric, Score


class TERScore(Score):
    def __init__(self, score: float, num_edits: float, ref_length: float):
        super().__init__("TER", score)
        self.num_edits = int(num_edits)
        self.ref_length = ref_length


class TER(Metric):
    _TOKENIZER_MAP = {}

    def __init__(self, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False, references: Optional[Sequence[Sequence[str]]] = None):
        super().__init__()
        self.no_punct = no_punct
        self.normalized = normalized
        self.asian_support = asian_support
        self.case_sensitive = case_sensitive
        self._core = _core.TerScorer(normalized, no_punct, asian_support, case_sensitive)
        self.tokenizer = self._core.tokenize
        if references is not None:
            self._cache_references(references)
            self._note_num_refs(self._ref_cache)

    def _signature_name(self) -> str:
        return "TER"

    def _corpus(self, hyps, streams) -> TERScore:
        return TERScore(*self._core.corpus(hyps, streams))

    def _sentence(self, hyp, refs) -> TERScore:
        return TERScore(*self._core.sentence(hyp, refs))
