"""nmt_score: sacreBLEU 2.6.0's metric API (BLEU, chrF, TER, their functions and paired tests)
on nmt's C++ port, the same figures to the bit. Use it where sacrebleu is imported:

    import nmt_score as sacrebleu
    sacrebleu.corpus_bleu(hyps, [refs]).score

Not here: sacreBLEU's test-set registry and downloads, and the MeCab / SentencePiece tokenizers
(docs/scoring.md, "Python module")."""
from .compat import (corpus_bleu, corpus_chrf, corpus_ter, raw_corpus_bleu, sentence_bleu, sentence_chrf,
                     sentence_ter)
from .metrics import BLEU, CHRF, TER
from .metrics.base import __version__

__all__ = ["corpus_bleu", "corpus_chrf", "corpus_ter", "raw_corpus_bleu", "sentence_bleu", "sentence_chrf",
           "sentence_ter", "BLEU", "CHRF", "TER", "__version__"]
