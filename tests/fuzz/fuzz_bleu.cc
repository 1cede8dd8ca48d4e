// libFuzzer target: the BLEU tokenizers (13a, intl, zh, char), corpus/sentence BLEU (all
// smoothings, lowercase), chrF, TER (every normaliser option) and the D2L BLEU on arbitrary
// (possibly invalid UTF-8) hypothesis/reference pairs.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "nmt/metrics/bleu.h"
#include "nmt/metrics/chrf.h"
#include "nmt/metrics/ter.h"
#include "nmt/metrics/tokenizer.h"
#include "nmt/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Lines are '\n'-separated; even lines are hypotheses, odd lines references.
  std::string text(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> hyps, refs;
  size_t start = 0;
  bool hyp = true;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    (hyp ? hyps : refs).push_back(text.substr(start, end - start));
    hyp = !hyp;
    start = end + 1;
  }
  refs.resize(hyps.size());
  try {
    for (auto method : {nmt::metrics::SmoothMethod::kExp, nmt::metrics::SmoothMethod::kFloor,
                        nmt::metrics::SmoothMethod::kAddK, nmt::metrics::SmoothMethod::kNone}) {
      nmt::metrics::BleuOptions o;
      o.smooth_method = method;
      o.lowercase = method == nmt::metrics::SmoothMethod::kFloor;
      auto score = nmt::metrics::BleuScorer(o).corpus_score(hyps, {refs});
      if (!std::isfinite(score.score) || score.score < 0 || score.score > 100.0001) __builtin_trap();
    }
    nmt::metrics::ChrfScorer chrf;
    auto c = chrf.corpus_score(hyps, {refs});
    if (!std::isfinite(c.score) || c.score < 0 || c.score > 100.0001) __builtin_trap();
    for (size_t i = 0; i < hyps.size(); ++i) {
      auto s = nmt::metrics::sentence_bleu(hyps[i], {refs[i]});
      if (!std::isfinite(s.score)) __builtin_trap();
      const double d = nmt::metrics::d2l_bleu(hyps[i], refs[i], 4);
      if (!std::isfinite(d) || d < 0 || d > 1.0000001) __builtin_trap();
      for (auto kind : {nmt::metrics::TokenizerKind::k13a, nmt::metrics::TokenizerKind::kIntl,
                        nmt::metrics::TokenizerKind::kZh, nmt::metrics::TokenizerKind::kChar})
        (void)nmt::metrics::tokenize(kind, hyps[i]);
    }
    for (int flags = 0; flags < 16; flags += 5) {  // none, normalized+asian, case+no_punct, all
      nmt::metrics::TerOptions t;
      t.normalized = flags & 1;
      t.no_punct = flags & 2;
      t.asian_support = flags & 4;
      t.case_sensitive = flags & 8;
      auto ter = nmt::metrics::TerScorer(t).corpus_score(hyps, {refs});
      if (!std::isfinite(ter.score) || ter.score < 0) __builtin_trap();
    }
  } catch (const nmt::Error&) {
    // invalid UTF-8 is reported as an error: the documented behaviour
  }
  return 0;
}
