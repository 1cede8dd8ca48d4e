"""sacreBLEU 2.6.0's TercomTokenizer (sacrebleu/tokenizers/tokenizer_ter.py), nmt's C++ port."""
from .. import _core


class TercomTokenizer:
    def __init__(self, normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False):
        self._normalized = normalized
        self._no_punct = no_punct
        self._asian_support = asian_support
        self._case_sensitive = case_sensitive
        self._core = _core.TerScorer(normalized, no_punct, asian_support, case_sensitive)

    def signature(self):
        return "tercom"

    def __call__(self, sent: str) -> str:
        if not sent:
            return ""
        return self._core.tokenize(sent)
