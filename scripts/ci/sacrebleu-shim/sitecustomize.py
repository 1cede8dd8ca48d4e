"""Points `import sacrebleu` (and its submodules the tests import) at nmt_score, so that
sacreBLEU's own test files run unchanged against nmt's module (scripts/ci/sacrebleu-suite.sh puts
this folder first on PYTHONPATH). Test-set functions (sacrebleu.utils, sacrebleu.dataset) are
left out: nmt has no test-set registry, so test_api.py and test_dataset.py cannot apply."""
import sys

import nmt_score
import nmt_score.compat
import nmt_score.metrics
import nmt_score.metrics.bleu
import nmt_score.metrics.chrf
import nmt_score.metrics.ter
import nmt_score.significance
import nmt_score.tokenizers
import nmt_score.tokenizers.tokenizer_ter

for name, module in {
    "sacrebleu": nmt_score,
    "sacrebleu.compat": nmt_score.compat,
    "sacrebleu.metrics": nmt_score.metrics,
    "sacrebleu.metrics.bleu": nmt_score.metrics.bleu,
    "sacrebleu.metrics.chrf": nmt_score.metrics.chrf,
    "sacrebleu.metrics.ter": nmt_score.metrics.ter,
    "sacrebleu.significance": nmt_score.significance,
    "sacrebleu.tokenizers": nmt_score.tokenizers,
    "sacrebleu.tokenizers.tokenizer_ter": nmt_score.tokenizers.tokenizer_ter,
}.items():
    sys.modules[name] = module
nmt_score.metrics.base.IS_NMT_SCORE = True
nmt_score.compat = nmt_score.compat
nmt_score.metrics = nmt_score.metrics
nmt_score.significance = nmt_score.significance
