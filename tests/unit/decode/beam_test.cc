// Beam search: beam 1 is greedy, scores are what the model says, n-best lists are ordered.
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "nmt/decode/beam.h"
#include "nmt/decode/greedy.h"
#include "nmt/decode/top_log_probs.h"
#include "nmt/models/model.h"
#include "torch_test_models.h"

using namespace nmt;
using namespace nmt::models;

namespace {

using nmt::test::random_model;
using nmt::test::sources;

// Log-probability of `tokens` + EOS given `src`, by teacher forcing (no cache involved).
double teacher_forced_log_prob(Seq2SeqModelImpl& model, const text::TokenIds& src, const text::TokenIds& tokens) {
  torch::NoGradGuard guard;
  std::vector<int64_t> s(src.begin(), src.end());
  s.push_back(kEosId);
  std::vector<int64_t> in{kBosId}, out;
  for (int t : tokens) {
    in.push_back(t);
    out.push_back(t);
  }
  out.push_back(kEosId);
  auto src_t = torch::tensor(s).view({1, -1});
  auto logits = model.forward(src_t, src_t.ne(0), torch::tensor(in).view({1, -1}));
  auto lp = torch::log_softmax(logits[0], -1);
  double total = 0;
  for (size_t i = 0; i < out.size(); ++i) total += lp[i][out[i]].item<double>();
  return total;
}

// The best hypothesis per source of greedy search, and the n-best lists of beam search.
std::vector<decode::Hypothesis> greedy_search(models::Seq2SeqModelImpl& model, const std::vector<text::TokenIds>& src,
                                              const decode::DecodeOptions& d) {
  std::vector<decode::Hypothesis> out;
  for (auto& r : decode::search(model, src, d, decode::GreedySearch())) out.push_back(std::move(r.front()));
  return out;
}
std::vector<decode::SearchResult> beam_search(models::Seq2SeqModelImpl& model, const std::vector<text::TokenIds>& src,
                                              const decode::DecodeOptions& d, const decode::BeamOptions& b) {
  return decode::search(model, src, d, decode::BeamSearch(b));
}

class BeamTest : public ::testing::TestWithParam<std::string> {};

TEST_P(BeamTest, BeamOneReproducesGreedy) {
  auto model = random_model(GetParam());
  decode::DecodeOptions d;
  d.search.max_len_b = 6;
  auto greedy = greedy_search(*model, sources(), d);
  for (bool shrink : {true, false}) {
    decode::BeamOptions b;
    b.beam = 1;
    b.shrink = shrink;
    auto beam = beam_search(*model, sources(), d, b);
    ASSERT_EQ(beam.size(), greedy.size());
    for (size_t i = 0; i < greedy.size(); ++i)
      EXPECT_EQ(beam[i].front().tokens, greedy[i].tokens) << "sentence " << i << " shrink " << shrink;
  }
}

// The reported log-probability equals a teacher-forced recomputation: the cache was reordered
// correctly whenever beams changed parents.
TEST_P(BeamTest, ScoresMatchRecomputationAndNbestIsSorted) {
  auto model = random_model(GetParam());
  decode::DecodeOptions d;
  d.search.max_len_b = 6;
  decode::BeamOptions b;
  b.beam = 4;
  b.nbest = 4;
  b.alpha = 0.6;
  auto src = sources();
  for (bool shrink : {true, false}) {
    b.shrink = shrink;
    SCOPED_TRACE(shrink ? "shrinking beams" : "fairseq's search");
    auto results = beam_search(*model, src, d, b);
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_FALSE(results[i].empty());
      for (size_t k = 0; k < results[i].size(); ++k) {
        const auto& h = results[i][k];
        if (k > 0) {
          EXPECT_GE(results[i][k - 1].score, h.score);
        }
        const double lp = decode::length_penalty(b, static_cast<int64_t>(h.tokens.size()) + 1);
        EXPECT_NEAR(h.score, h.log_prob / lp, 1e-9);
        if (static_cast<int64_t>(h.tokens.size()) < static_cast<int64_t>(d.search.max_len_a * src[i].size()) + d.search.max_len_b) {
          EXPECT_NEAR(h.log_prob, teacher_forced_log_prob(*model, src[i], h.tokens), 1e-3) << "sentence " << i;
        }
      }
    }
  }
}

// With no length penalty, a wider beam never finds a worse best hypothesis than beam 1 on these
// inputs, and the search is deterministic and independent of the batch it runs in.
TEST_P(BeamTest, BatchedEqualsAlone) {
  auto model = random_model(GetParam());
  decode::DecodeOptions d;
  d.search.max_len_b = 6;
  decode::BeamOptions b;
  b.beam = 3;
  auto src = sources();
  for (bool shrink : {true, false}) {
    b.shrink = shrink;
    auto together = beam_search(*model, src, d, b);
    for (size_t i = 0; i < src.size(); ++i) {
      auto alone = beam_search(*model, {src[i]}, d, b);
      EXPECT_EQ(alone[0].front().tokens, together[i].front().tokens) << "sentence " << i << " shrink " << shrink;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, BeamTest, ::testing::Values("transformer", "gru"));

TEST(BeamPenalty, GnmtAndAverage) {
  decode::BeamOptions b;
  b.alpha = 1.0;
  EXPECT_DOUBLE_EQ(decode::length_penalty(b, 1), 1.0);
  EXPECT_DOUBLE_EQ(decode::length_penalty(b, 7), 2.0);
  b.length_penalty = decode::LengthPenalty::kAverage;
  EXPECT_DOUBLE_EQ(decode::length_penalty(b, 7), 7.0);
  b.length_penalty = decode::LengthPenalty::kNone;
  EXPECT_DOUBLE_EQ(decode::length_penalty(b, 7), 1.0);
}

// The fused kernel beam search ranks candidates with: the same tokens and log-probabilities
// as LibTorch's log_softmax + topk, ties to the lower id, and no NaN from rows of -inf.
TEST(TopLogProbs, MatchesLogSoftmaxTopk) {
  torch::manual_seed(3);
  auto logits = torch::randn({37, 8003}) * 6;  // odd sizes: the vector loops' remainders
  logits[5].fill_(-2.0);                       // all tied
  logits[6].narrow(0, 100, 50).fill_(40.0);    // ties at the top, far above the rest
  logits[7][17] = -1e30;                       // exp underflows
  const auto fused = decode::top_log_probs(logits, 10);
  auto [values, tokens] = torch::log_softmax(logits.to(torch::kDouble), -1).topk(10, -1);
  EXPECT_LT((fused.log_probs - values).abs().max().item<double>(), 1e-5);
  for (int64_t r = 0; r < 37; ++r) {
    if (r == 5 || r == 6) continue;  // ties: LibTorch's order among equals is unspecified
    EXPECT_TRUE(fused.tokens[r].equal(tokens[r])) << "row " << r;
  }
  EXPECT_TRUE(fused.tokens[5].equal(torch::arange(10)));
  EXPECT_TRUE(fused.tokens[6].equal(torch::arange(100, 110)));
  EXPECT_NEAR(fused.log_probs[5][0].item<double>(), -std::log(8003.0), 1e-6);

  const auto blocked = decode::top_log_probs(torch::full({1, 20}, -INFINITY), 3);
  EXPECT_TRUE(torch::isneginf(blocked.log_probs).all().item<bool>());
}

}  // namespace
