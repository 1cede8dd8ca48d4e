"""sacrebleu.metrics: BLEU, CHRF and TER (nmt's C++ port of sacreBLEU 2.6.0)."""
from .bleu import BLEU, BLEUScore
from .chrf import CHRF, CHRFScore
from .ter import TER, TERScore

METRICS = {"BLEU": BLEU, "CHRF": CHRF, "TER": TER}

__all__ = ["METRICS", "BLEU", "CHRF", "TER", "BLEUScore", "CHRFScore", "TERScore"]
