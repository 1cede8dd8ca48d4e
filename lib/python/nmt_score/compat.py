"""sacreBLEU 2.6.0's function API (sacrebleu/compat.py), on nmt's metrics."""
from typing import Optional, Sequence

from .metrics import BLEU, CHRF, TER
from .metrics.bleu import BLEUScore
from .metrics.chrf import CHRFScore
from .metrics.ter import TERScore


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]], smooth_method="exp",
                smooth_value=None, force=False, lowercase=False, tokenize=BLEU.TOKENIZER_DEFAULT,
                use_effective_order=False) -> BLEUScore:
    metric = BLEU(lowercase=lowercase, force=force, tokenize=tokenize, smooth_method=smooth_method,
                  smooth_value=smooth_value, effective_order=use_effective_order)
    return metric.corpus_score(hypotheses, references)


def raw_corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                    smooth_value: Optional[float] = BLEU.SMOOTH_DEFAULTS["floor"]) -> BLEUScore:
    return corpus_bleu(hypotheses, references, smooth_method="floor", smooth_value=smooth_value, force=True,
                       tokenize="none", use_effective_order=True)


def sentence_bleu(hypothesis: str, references: Sequence[str], smooth_method: str = "exp",
                  smooth_value: Optional[float] = None, lowercase: bool = False, tokenize=BLEU.TOKENIZER_DEFAULT,
                  use_effective_order: bool = True) -> BLEUScore:
    # sacreBLEU builds a BLEU at every call; its result does not depend on the metric object,
    # so one per set of options is kept (building it was 1 us of a 4.7 us call).
    key = (smooth_method, smooth_value, lowercase, tokenize, use_effective_order)
    try:
        metric = _SENTENCE_BLEU.get(key)
    except TypeError:  # an unhashable option: built every time, and refused by BLEU if wrong
        metric, key = None, None
    if metric is None:
        metric = BLEU(lowercase=lowercase, tokenize=tokenize, force=False, smooth_method=smooth_method,
                      smooth_value=smooth_value, effective_order=use_effective_order)
        if key is not None and len(_SENTENCE_BLEU) < 64:
            _SENTENCE_BLEU[key] = metric
    return metric.sentence_score(hypothesis, references)


_SENTENCE_BLEU = {}  # sentence_bleu's metrics by their options


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]], char_order: int = CHRF.CHAR_ORDER,
                word_order: int = CHRF.WORD_ORDER, beta: int = CHRF.BETA, remove_whitespace: bool = True,
                eps_smoothing: bool = False) -> CHRFScore:
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                  eps_smoothing=eps_smoothing)
    return metric.corpus_score(hypotheses, references)


def sentence_chrf(hypothesis: str, references: Sequence[str], char_order: int = CHRF.CHAR_ORDER,
                  word_order: int = CHRF.WORD_ORDER, beta: int = CHRF.BETA, remove_whitespace: bool = True,
                  eps_smoothing: bool = False) -> CHRFScore:
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta, whitespace=not remove_whitespace,
                  eps_smoothing=eps_smoothing)
    return metric.sentence_score(hypothesis, references)


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str]], normalized: bool = False,
               no_punct: bool = False, asian_support: bool = False, case_sensitive: bool = False) -> TERScore:
    metric = TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                 case_sensitive=case_sensitive)
    return metric.corpus_score(hypotheses, references)


def sentence_ter(hypothesis: str, references: Sequence[str], normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False, case_sensitive: bool = False) -> TERScore:
    metric = TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
                 case_sensitive=case_sensitive)
    return metric.sentence_score(hypothesis, references)
