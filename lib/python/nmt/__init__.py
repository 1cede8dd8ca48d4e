"""nmt: neural machine translation on nmt's own CPU engine (no LibTorch), and sacreBLEU's metrics.

    import nmt
    with nmt.Translator("models/t-small") as translator:
        result = translator.translate_batch(["Two dogs are playing in the snow."])[0]
        print(result.text, result.confidence)

``nmt.score`` is the scorer (sacreBLEU 2.6.0's API, also importable as ``nmt_score``).
"""
import nmt_score as score

from ._translator import Translation, Translator, import_marian

try:
    from ._translate import version as __version__
except ImportError:  # the scorer-only build (NMT_SCORER_ONLY) has no translator
    from importlib.metadata import version as _version

    __version__ = _version("nmt")

__all__ = ["Translator", "Translation", "import_marian", "score", "__version__"]
