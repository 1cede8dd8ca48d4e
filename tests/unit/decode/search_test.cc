// One search interface: named decoder state, ensembles, forced prefixes, sampling, forced
// scoring, and attention from every strategy, in-process on small random models (the same
// options through `nmt translate` and `nmt score`: tests/cli/translate_search_test.cc).
#include <gtest/gtest.h>
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <iterator>

#include <nlohmann/json.hpp>

#include "nmt/decode/beam.h"
#include "nmt/decode/strategy.h"
#include "nmt/decode/forced.h"
#include "nmt/decode/greedy.h"
#include "nmt/decode/token_bans.h"
#include "nmt/decode/sampling.h"
#include "nmt/text/markup.h"
#include "nmt/text/word_alignment.h"
#include "nmt/models/model.h"
#include "torch_test_models.h"
#include "nmt/util/error.h"
#include "test_support.h"

using namespace nmt;
using namespace nmt::models;

namespace {

using nmt::test::random_model;
using nmt::test::sources;

decode::DecodeOptions short_outputs() {
  decode::DecodeOptions d;
  d.search.max_len_b = 6;
  return d;
}

decode::BeamOptions beam_of(int64_t k, int64_t nbest = 1) {
  decode::BeamOptions b;
  b.beam = k;
  b.nbest = nbest;
  return b;
}

// The search `nmt translate --beam k --nbest nbest` asks the strategy factory for.
decode::SearchOptions search_of(int64_t k, int64_t nbest = 1) {
  decode::SearchOptions s;
  s.beam = k;
  s.nbest = nbest;
  return s;
}

bool starts_with(const text::TokenIds& tokens, const text::TokenIds& prefix) {
  return tokens.size() >= prefix.size() && std::equal(prefix.begin(), prefix.end(), tokens.begin());
}

// --- decoder state ------------------------------------------------------------------------

TEST(DecoderState, EntriesFollowTheirOwnRule) {
  DecoderState s;
  s.add("per_row", torch::arange(4).view({4, 1}), DecoderState::Rows::kPerRow);
  s.add("per_source", torch::arange(2).view({2, 1}) * 10, DecoderState::Rows::kPerSource);
  s.history("steps").push_back(torch::arange(4));
  s.select(torch::tensor({3, 1}, torch::kLong), torch::tensor({1}, torch::kLong));
  EXPECT_TRUE(s.at("per_row").view(-1).equal(torch::tensor({3, 1})));
  EXPECT_TRUE(s.at("per_source").view(-1).equal(torch::tensor({10})));
  EXPECT_TRUE(s.history("steps").front().equal(torch::arange(4))) << "history is never reordered";
  // No sources given: the per-source entries stay as they are (beams reordered within sources).
  s.select(torch::tensor({1, 0}, torch::kLong), torch::Tensor());
  EXPECT_TRUE(s.at("per_row").view(-1).equal(torch::tensor({1, 3})));
  EXPECT_TRUE(s.at("per_source").view(-1).equal(torch::tensor({10})));
}

TEST(DecoderState, UnknownOrRepeatedNamesAreRefused) {
  DecoderState s;
  s.add("a", torch::zeros({1}), DecoderState::Rows::kPerRow);
  EXPECT_THROW(s.add("a", torch::zeros({1}), DecoderState::Rows::kPerRow), c10::Error);
  EXPECT_THROW(s.at("b"), c10::Error);
  EXPECT_TRUE(s.contains("a"));
  EXPECT_FALSE(s.contains("b"));
}

TEST(DecoderState, ModelsDeclareNamedEntries) {
  auto t = random_model("transformer");
  auto src = torch::tensor({{4, 5, 3}}, torch::kLong);
  auto state = t->start(t->encode(src, src.ne(0)), src.ne(0));
  for (const char* name : {"source_mask", "layer0.cross_keys", "layer1.cross_values", "origins"})
    EXPECT_TRUE(state.contains(name)) << name;
  auto g = random_model("gru");
  auto gstate = g->start(g->encode(src, src.ne(0)), src.ne(0));
  for (const char* name : {"attention_keys", "memory", "source_mask", "hidden"}) EXPECT_TRUE(gstate.contains(name)) << name;
}

class SearchTest : public ::testing::TestWithParam<std::string> {};

// --- attention from every strategy ---------------------------------------------------------

TEST_P(SearchTest, EveryStrategyRecordsAttention) {
  auto model = random_model(GetParam());
  auto d = short_outputs();
  d.record_attention = true;
  decode::SamplingOptions sampling;
  sampling.top_k = 3;
  const decode::GreedySearch greedy;
  const decode::BeamSearch beam(beam_of(3, 2));
  const decode::SamplingSearch sample(sampling);
  const auto src = sources();
  for (const decode::SearchStrategy* strategy : std::vector<const decode::SearchStrategy*>{&greedy, &beam, &sample}) {
    auto results = decode::search(*model, src, d, *strategy);
    for (size_t i = 0; i < src.size(); ++i)
      for (const auto& h : results[i]) {
        // One row per emitted token, plus one for the EOS when it was emitted.
        ASSERT_GE(h.attention.size(), h.tokens.size());
        ASSERT_LE(h.attention.size(), h.tokens.size() + 1);
        for (const auto& row : h.attention) {
          ASSERT_EQ(row.size(), src[i].size() + 1);
          double sum = 0;
          for (float w : row) sum += w;
          EXPECT_NEAR(sum, 1.0, 1e-4);
        }
      }
  }
}

// --- forced prefixes -------------------------------------------------------------------------

TEST_P(SearchTest, OutputsStartWithTheirPrefixGreedyAndBeam) {
  auto model = random_model(GetParam());
  const auto d = short_outputs();
  const auto src = sources();
  const std::vector<text::TokenIds> prefixes = {{7, 7, 7}, {}, {5}, {11, 10}};
  for (const auto& strategy : {decode::make_search_strategy(search_of(1)), decode::make_search_strategy(search_of(4, 2))}) {
    auto results = decode::search(*model, src, d, *strategy, &prefixes);
    for (size_t i = 0; i < src.size(); ++i)
      for (const auto& h : results[i]) EXPECT_TRUE(starts_with(h.tokens, prefixes[i])) << "sentence " << i;
  }
}

TEST_P(SearchTest, EmptyPrefixesEqualNoPrefix) {
  auto model = random_model(GetParam());
  const auto d = short_outputs();
  const auto src = sources();
  const std::vector<text::TokenIds> empty(src.size());
  for (const auto& strategy : {decode::make_search_strategy(search_of(1)), decode::make_search_strategy(search_of(3, 3))}) {
    auto with = decode::search(*model, src, d, *strategy, &empty);
    auto without = decode::search(*model, src, d, *strategy);
    for (size_t i = 0; i < src.size(); ++i) {
      ASSERT_EQ(with[i].size(), without[i].size());
      for (size_t k = 0; k < with[i].size(); ++k) {
        EXPECT_EQ(with[i][k].tokens, without[i][k].tokens);
        EXPECT_EQ(with[i][k].score, without[i][k].score);
      }
    }
  }
}

// A prefix that is what greedy search would produce anyway changes nothing.
TEST_P(SearchTest, ThePrefixGreedyWouldChooseChangesNothing) {
  auto model = random_model(GetParam());
  const auto d = short_outputs();
  const auto src = sources();
  auto free_run = decode::search(*model, src, d, decode::GreedySearch());
  std::vector<text::TokenIds> prefixes;
  for (const auto& r : free_run) prefixes.push_back(text::TokenIds(r.front().tokens.begin(), r.front().tokens.begin() + std::min<size_t>(2, r.front().tokens.size())));
  auto forced = decode::search(*model, src, d, decode::GreedySearch(), &prefixes);
  for (size_t i = 0; i < src.size(); ++i) {
    const text::TokenIds& free_tokens = free_run[i].front().tokens;
    // The length limit counts the tokens after the prefix: only an output the limit cut off
    // may go on further.
    EXPECT_TRUE(starts_with(forced[i].front().tokens, free_tokens)) << "sentence " << i;
    if (static_cast<int64_t>(free_tokens.size()) < static_cast<int64_t>(d.search.max_len_a * src[i].size()) + d.search.max_len_b) {
      EXPECT_EQ(forced[i].front().tokens, free_tokens) << "sentence " << i;
    }
  }
}

// --- sampling --------------------------------------------------------------------------------

TEST_P(SearchTest, SamplingIsReproducibleForASeedWhateverTheBatching) {
  auto model = random_model(GetParam());
  const auto d = short_outputs();
  decode::SamplingOptions o;
  o.top_p = 0.95;
  o.temperature = 2.0;
  o.seed = 11;
  const auto src = sources();
  auto a = decode::search(*model, src, d, decode::SamplingSearch(o));
  auto b = decode::search(*model, src, d, decode::SamplingSearch(o));
  auto one_by_one = d;
  one_by_one.search.batch_size = 1;
  auto c = decode::search(*model, src, one_by_one, decode::SamplingSearch(o));
  for (size_t i = 0; i < src.size(); ++i) {
    EXPECT_EQ(a[i].front().tokens, b[i].front().tokens);
    EXPECT_EQ(a[i].front().tokens, c[i].front().tokens) << "batched and alone differ";
  }
  // Another seed draws something else somewhere (20 draws of flat distributions).
  std::vector<text::TokenIds> many(20, text::TokenIds{4, 5, 6, 7, 8, 9});
  o.temperature = 50.0;
  auto s1 = decode::search(*model, many, d, decode::SamplingSearch(o));
  o.seed = 12;
  auto s2 = decode::search(*model, many, d, decode::SamplingSearch(o));
  bool differ = false;
  for (size_t i = 0; i < many.size(); ++i) differ |= s1[i].front().tokens != s2[i].front().tokens;
  EXPECT_TRUE(differ);
}

TEST_P(SearchTest, TopKOfOneIsGreedy) {
  auto model = random_model(GetParam());
  const auto d = short_outputs();
  decode::SamplingOptions o;
  o.top_k = 1;
  auto sampled = decode::search(*model, sources(), d, decode::SamplingSearch(o));
  auto greedy = decode::search(*model, sources(), d, decode::GreedySearch());
  for (size_t i = 0; i < sampled.size(); ++i) EXPECT_EQ(sampled[i].front().tokens, greedy[i].front().tokens);
}

TEST(Sampling, CandidatesAreTheTopKOrTheNucleus) {
  // Probabilities 0.5, 0.25, 0.125, 0.0625, 0.0625 (as logits: log of them).
  const std::vector<float> logits = {std::log(0.0625f), std::log(0.5f), std::log(0.125f), std::log(0.25f), std::log(0.0625f)};
  decode::SamplingOptions o;
  o.top_k = 2;
  auto k2 = decode::SamplingSearch::candidates(logits.data(), 5, o);
  ASSERT_EQ(k2.size(), 2u);
  EXPECT_EQ(k2[0].first, 1);
  EXPECT_EQ(k2[1].first, 3);
  EXPECT_NEAR(k2[0].second, 2.0 / 3.0, 1e-6);
  o.top_k = 0;
  o.top_p = 0.8;  // 0.5 + 0.25 < 0.8 <= 0.5 + 0.25 + 0.125
  auto p = decode::SamplingSearch::candidates(logits.data(), 5, o);
  std::set<int64_t> ids;
  for (auto& c : p) ids.insert(c.first);
  EXPECT_EQ(ids, (std::set<int64_t>{1, 3, 2}));
  double total = 0;
  for (auto& c : p) total += c.second;
  EXPECT_NEAR(total, 1.0, 1e-9);
  // A temperature below 1 sharpens: the best token's share grows.
  o.top_p = 1.0;
  o.temperature = 0.5;
  EXPECT_GT(decode::SamplingSearch::candidates(logits.data(), 5, o).front().second, 0.5 + 1e-3);
}

// Every sampled token lies in the top-k set of its step: check by forced re-scoring that no
// token outside the k most probable was ever drawn.
TEST_P(SearchTest, SampledTokensStayInsideTopK) {
  auto model = random_model(GetParam());
  const auto d = short_outputs();
  decode::SamplingOptions o;
  o.top_k = 2;
  o.temperature = 5.0;
  o.seed = 3;
  const auto src = sources();
  auto sampled = decode::search(*model, src, d, decode::SamplingSearch(o));
  for (size_t i = 0; i < src.size(); ++i) {
    const auto& h = sampled[i].front();
    // Replay: at each step, the sampled token must rank in the top 2 of the model's scores.
    decode::SingleModel single(*model);
    torch::InferenceMode guard;
    std::vector<const text::TokenIds*> rows{&src[i]};
    Batch b = make_source_batch(rows);
    auto state = single.start(b.src, b.src_mask);
    auto prev = torch::full({1}, kBosId, torch::kLong);
    for (size_t t = 0; t < h.tokens.size(); ++t) {
      auto scores = single.step(prev, state);
      auto top2 = std::get<1>(scores.topk(2, -1));
      const int64_t tok = h.tokens[t];
      EXPECT_TRUE(top2[0][0].item<int64_t>() == tok || top2[0][1].item<int64_t>() == tok) << "sentence " << i << " step " << t;
      prev = torch::full({1}, tok, torch::kLong);
    }
  }
}

TEST(Sampling, BadSpecificationsAreUsageErrors) {
  decode::SamplingOptions o;
  for (const char* bad : {"top-k:0", "top-k:-1", "top-k:x", "top-p:0", "top-p:1.5", "top-p:nan", "top-z:3", "top-k"})
    EXPECT_THROW(decode::parse_sampling(bad, o), UsageError) << bad;
  decode::parse_sampling("top-k:40", o);
  EXPECT_EQ(o.top_k, 40);
  decode::parse_sampling("top-p:0.9", o);
  EXPECT_DOUBLE_EQ(o.top_p, 0.9);
  o.temperature = 0;
  EXPECT_THROW(decode::SamplingSearch(o).validate(), UsageError);
}

// --- forced scoring ------------------------------------------------------------------------

// Scoring beam search's own outputs gives the log-probabilities the search reported.
TEST_P(SearchTest, ForcedScoringEqualsTheBeamSearchScore) {
  auto model = random_model(GetParam());
  auto d = short_outputs();
  const auto src = sources();
  auto beam = decode::search(*model, src, d, decode::BeamSearch(beam_of(4)));
  std::vector<text::TokenIds> outputs;
  for (const auto& r : beam) outputs.push_back(r.front().tokens);
  auto scored = decode::search(*model, src, d, decode::ForcedDecoding(), &outputs);
  for (size_t i = 0; i < src.size(); ++i) {
    const auto& h = scored[i].front();
    EXPECT_EQ(h.tokens, outputs[i]);
    ASSERT_EQ(h.token_log_probs.size(), outputs[i].size() + 1) << "every token and the EOS";
    // Only when the search ended on EOS (not cut by the length limit) is EOS part of its score.
    if (static_cast<int64_t>(outputs[i].size()) < static_cast<int64_t>(d.search.max_len_a * src[i].size()) + d.search.max_len_b) {
      EXPECT_NEAR(h.log_prob, beam[i].front().log_prob, 1e-4) << "sentence " << i;
    }
    double sum = 0;
    for (double lp : h.token_log_probs) sum += lp;
    EXPECT_NEAR(sum, h.log_prob, 1e-9);
  }
}

TEST_P(SearchTest, GreedyTokenLogProbsEqualForcedScoring) {
  auto model = random_model(GetParam());
  auto d = short_outputs();
  d.return_token_log_probs = true;
  const auto src = sources();
  auto greedy = decode::search(*model, src, d, decode::GreedySearch());
  std::vector<text::TokenIds> outputs;
  for (const auto& r : greedy) outputs.push_back(r.front().tokens);
  auto scored = decode::search(*model, src, d, decode::ForcedDecoding(), &outputs);
  for (size_t i = 0; i < src.size(); ++i) {
    const auto& g = greedy[i].front();
    const auto& f = scored[i].front();
    for (size_t t = 0; t < g.token_log_probs.size(); ++t) EXPECT_NEAR(g.token_log_probs[t], f.token_log_probs[t], 1e-4);
  }
}

// --- ensembles -----------------------------------------------------------------------------

TEST_P(SearchTest, AnEnsembleOfOneIsTheModelExactly) {
  auto model = random_model(GetParam());
  auto d = short_outputs();
  d.return_token_log_probs = true;
  auto ensemble = decode::make_decoding_model({model.get()});
  for (const auto& strategy : {decode::make_search_strategy(search_of(1)), decode::make_search_strategy(search_of(4, 2))}) {
    auto alone = decode::search(*model, sources(), d, *strategy);
    auto one = decode::search(*ensemble, sources(), d, *strategy);
    for (size_t i = 0; i < alone.size(); ++i)
      for (size_t k = 0; k < alone[i].size(); ++k) {
        EXPECT_EQ(one[i][k].tokens, alone[i][k].tokens);
        EXPECT_EQ(one[i][k].log_prob, alone[i][k].log_prob);  // bit for bit
      }
  }
}

// Two copies of one model average to that model: the same outputs, the same scores.
TEST_P(SearchTest, AnEnsembleOfTwinsMatchesTheModel) {
  auto model = random_model(GetParam());
  auto twin = random_model(GetParam());
  decode::Ensemble ensemble({model.get(), twin.get()});
  auto d = short_outputs();
  for (const auto& strategy : {decode::make_search_strategy(search_of(1)), decode::make_search_strategy(search_of(3))}) {
    auto alone = decode::search(*model, sources(), d, *strategy);
    auto both = decode::search(ensemble, sources(), d, *strategy);
    for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(both[i].front().tokens, alone[i].front().tokens);
  }
}

// A Transformer and a GRU decode together; each step's distribution is the normalised mean of
// the members' log-probabilities.
TEST(Ensemble, TransformerAndGruMixStepByStep) {
  auto t = random_model("transformer", 1);
  auto g = random_model("gru", 2);
  decode::Ensemble ensemble({t.get(), g.get()});
  torch::InferenceMode guard;
  auto src = torch::tensor({{4, 5, 6, 3}, {7, 3, 0, 0}}, torch::kLong);
  auto state = ensemble.start(src, src.ne(0));
  auto ts = t->start(t->encode(src, src.ne(0)), src.ne(0));
  auto gs = g->start(g->encode(src, src.ne(0)), src.ne(0));
  auto prev = torch::full({2}, kBosId, torch::kLong);
  for (int step = 0; step < 3; ++step) {
    auto mixed = ensemble.step(prev, state);
    auto expected = (torch::log_softmax(t->step(prev, ts), -1) + torch::log_softmax(g->step(prev, gs), -1)) / 2;
    EXPECT_TRUE(torch::allclose(mixed, expected, 1e-5, 1e-6)) << "step " << step;
    // Reordering the rows reorders both members' states.
    auto order = torch::tensor({1, 0}, torch::kLong);
    state.select(order);
    ts.select(order);
    gs.select(order);
    prev = torch::tensor({5, 6}, torch::kLong);
  }
  auto d = short_outputs();
  d.record_attention = true;
  for (const auto& strategy : {decode::make_search_strategy(search_of(1)), decode::make_search_strategy(search_of(3))}) {
    auto results = decode::search(ensemble, sources(), d, *strategy);
    ASSERT_EQ(results.size(), sources().size());
    for (const auto& r : results) EXPECT_FALSE(r.empty());
  }
}

// --- one model, several decoding threads (nmt serve --workers) ------------------------------

TEST_P(SearchTest, ThreadsSearchingOneModelEachGetTheirOwnAttentionChoice) {
  auto model = random_model(GetParam());
  const auto src = sources();
  const std::vector<AlignmentChoice> choices = {{-1, -1}, {0, 0}, {1, 1}, {0, -1}};
  auto search_with = [&](const AlignmentChoice& choice) {
    auto d = short_outputs();
    d.record_attention = true;
    d.alignment = choice;
    return decode::search(*model, src, d, decode::BeamSearch(beam_of(3)));
  };
  std::vector<std::vector<decode::SearchResult>> alone, together(choices.size());
  for (const auto& c : choices) alone.push_back(search_with(c));
  if (GetParam() == std::string("transformer")) { // a GRU has one attention: the choice changes nothing
    EXPECT_NE(alone[0][0].front().attention, alone[1][0].front().attention) << "the choice is not applied";
  }
  std::vector<std::thread> threads;
  for (size_t t = 0; t < choices.size(); ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 3; ++round) together[t] = search_with(choices[t]);
    });
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < choices.size(); ++t)
    for (size_t i = 0; i < src.size(); ++i) {
      EXPECT_EQ(together[t][i].front().tokens, alone[t][i].front().tokens) << "thread " << t << " sentence " << i;
      EXPECT_EQ(together[t][i].front().attention, alone[t][i].front().attention) << "thread " << t << " sentence " << i;
    }
  EXPECT_FALSE(model->is_training());
}

TEST_P(SearchTest, AModelInTrainingModeIsSearchedInEvalModeAndGivenBackInTrainingMode) {
  auto model = random_model(GetParam());
  const auto expected = decode::search(*model, sources(), short_outputs(), decode::GreedySearch());
  model->train();
  const auto got = decode::search(*model, sources(), short_outputs(), decode::GreedySearch());
  EXPECT_TRUE(model->is_training());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(got[i].front().tokens, expected[i].front().tokens);
}

// --- --no-repeat-ngram ----------------------------------------------------------------------

TEST(NoRepeatNgram, BansEachTokenThatWouldCompleteAnNgramAlreadyThere) {
  EXPECT_EQ(decode::repeated_ngram_bans({1, 2, 3, 1, 2}, 3), (std::vector<int64_t>{3}));  // "1 2 3" again
  EXPECT_EQ(decode::repeated_ngram_bans({5, 6, 5, 7, 5}, 2), (std::vector<int64_t>{6, 7}));
  EXPECT_EQ(decode::repeated_ngram_bans({4, 4, 4}, 2), (std::vector<int64_t>{4}));
  EXPECT_EQ(decode::repeated_ngram_bans({4, 9, 4}, 1), (std::vector<int64_t>{4, 9}));  // no token twice
  EXPECT_TRUE(decode::repeated_ngram_bans({1, 2, 3}, 3).empty());
  EXPECT_TRUE(decode::repeated_ngram_bans({1, 2}, 0).empty());
  EXPECT_TRUE(decode::repeated_ngram_bans({}, 2).empty());
}

// Whether some subword n-gram occurs twice in `tokens`.
bool repeats_an_ngram(const text::TokenIds& tokens, size_t n) {
  std::set<text::TokenIds> seen;
  for (size_t i = 0; i + n <= tokens.size(); ++i)
    if (!seen.insert(text::TokenIds(tokens.begin() + static_cast<std::ptrdiff_t>(i), tokens.begin() + static_cast<std::ptrdiff_t>(i + n))).second)
      return true;
  return false;
}

// A random model over 12 subwords loops, as small trained ones do; with the option, no output
// of any strategy repeats a bigram, and a forced prefix is still followed as given.
TEST_P(SearchTest, NoOutputRepeatsAnNgramWithNoRepeatNgram) {
  auto model = random_model(GetParam());
  decode::DecodeOptions d;
  d.search.max_len_a = 3;
  d.search.max_len_b = 20;
  decode::SearchOptions sampling = search_of(1);
  sampling.sampling = "top-k:3";
  const std::vector<decode::SearchOptions> searches = {search_of(1), search_of(4, 2), sampling};
  const auto src = sources();
  const std::vector<text::TokenIds> prefixes = {{7, 7, 7}, {}, {}, {5}};
  size_t repeating_without = 0;
  for (const auto& search : searches) {
    for (const int64_t n : {0, 2}) {
      d.search.no_repeat_ngram = n;
      auto results = decode::search(*model, src, d, *decode::make_search_strategy(search), &prefixes);
      for (size_t i = 0; i < src.size(); ++i)
        for (const auto& h : results[i]) {
          ASSERT_TRUE(starts_with(h.tokens, prefixes[i])) << "sentence " << i;
          const text::TokenIds after_prefix(h.tokens.begin() + static_cast<std::ptrdiff_t>(prefixes[i].size()), h.tokens.end());
          if (n == 0) {
            repeating_without += repeats_an_ngram(h.tokens, 2);
          } else {
            EXPECT_FALSE(repeats_an_ngram(after_prefix, 2)) << "sentence " << i << ", beam " << search.beam;
            EXPECT_TRUE(std::isfinite(h.score)) << "sentence " << i;
          }
        }
    }
  }
  EXPECT_GT(repeating_without, 0u) << "without the option nothing repeats: the test shows nothing";
}

// --- lexical constraints --------------------------------------------------------------------

// Phrases for sources(): sentence 1 has none (it shares the batch with the others).
std::vector<text::LineConstraints> phrases_to_include() {
  std::vector<text::LineConstraints> c(sources().size());
  c[0].include = {{5, 6}, {9}};
  c[2].include = {{11}};
  c[3].include = {{7, 8, 4}, {10}};
  return c;
}

decode::DecodeOptions room_for_phrases() {
  decode::DecodeOptions d;
  d.search.max_len_a = 2;
  d.search.max_len_b = 10;
  return d;
}

// Every phrase appears in every hypothesis, with beams of 1 and 4, n-best lists, on a model and
// on an ensemble; the sentence without phrases decodes as it does without any.
TEST_P(SearchTest, EveryPhraseToIncludeAppearsWhenItFitsAndOtherSentencesAreUntouched) {
  auto model = random_model(GetParam());
  auto other = random_model(GetParam(), 9);
  decode::Ensemble ensemble({model.get(), other.get()});
  decode::SingleModel single(*model);
  const auto constraints = phrases_to_include();
  const auto src = sources();
  const auto d = room_for_phrases();
  size_t lacking_without = 0;
  for (decode::DecodingModel* m : std::vector<decode::DecodingModel*>{&single, &ensemble})
    for (const auto& search : {search_of(1), search_of(4), search_of(4, 3)}) {
      const auto plain = decode::search(*m, src, d, *decode::make_search_strategy(search));
      const auto got = decode::search(*m, src, d, *decode::make_search_strategy(search, true), nullptr, &constraints);
      for (size_t i = 0; i < src.size(); ++i) {
        lacking_without += !text::unmet_constraints(plain[i].front().tokens, constraints[i].include).empty();
        ASSERT_EQ(got[i].size(), static_cast<size_t>(search.nbest));
        EXPECT_TRUE(text::unmet_constraints(got[i].front().tokens, constraints[i].include).empty())
            << "sentence " << i << ", beam " << search.beam << ": " << ::testing::PrintToString(got[i].front().tokens);
        // An n-best list holds the hypotheses with every phrase first.
        bool lacking_seen = false;
        for (const auto& h : got[i]) {
          const bool lacks = !text::unmet_constraints(h.tokens, constraints[i].include).empty();
          EXPECT_FALSE(lacking_seen && !lacks) << "sentence " << i << ", beam " << search.beam;
          lacking_seen |= lacks;
          EXPECT_TRUE(std::isfinite(h.score));
        }
      }
      EXPECT_EQ(got[1].front().tokens, plain[1].front().tokens) << "beam " << search.beam;
    }
  EXPECT_GT(lacking_without, 0u) << "the outputs had the phrases anyway: the test shows nothing";
}

// A phrase longer than the length limit cannot be met: the search still ends within the limit
// and returns its best hypothesis, which lacks the phrase (the caller reports it).
TEST_P(SearchTest, APhraseThatCannotFitEndsAtTheLimitWithoutIt) {
  auto model = random_model(GetParam());
  std::vector<text::LineConstraints> c(1);
  c[0].include = {{4, 5, 6, 7, 8, 9, 10, 11, 4, 5, 6, 7}};
  decode::DecodeOptions d;
  d.search.max_len_a = 0;
  d.search.max_len_b = 5;
  auto got = decode::search(*model, {{9}}, d, *decode::make_search_strategy(search_of(3), true), nullptr, &c);
  ASSERT_EQ(got[0].size(), 1u);
  EXPECT_LE(got[0].front().tokens.size(), 5u);
  EXPECT_FALSE(text::unmet_constraints(got[0].front().tokens, c[0].include).empty());
}

// No strategy emits an avoided phrase; the phrases are taken from the outputs without them.
TEST_P(SearchTest, AvoidedPhrasesNeverAppearInAnyStrategy) {
  auto model = random_model(GetParam());
  const auto src = sources();
  const auto d = room_for_phrases();
  decode::SearchOptions sampling = search_of(1);
  sampling.sampling = "top-k:3";
  for (const auto& search : {search_of(1), search_of(4, 2), sampling}) {
    const auto strategy = decode::make_search_strategy(search);
    const auto plain = decode::search(*model, src, d, *strategy);
    std::vector<text::LineConstraints> c(src.size());
    size_t appeared_before = 0;
    for (size_t i = 0; i < src.size(); ++i) {
      const text::TokenIds& out = plain[i].front().tokens;
      if (out.size() >= 2) c[i].avoid.push_back({out[0], out[1]});  // its own opening bigram
      c[i].avoid.push_back({11});
      for (const auto& p : c[i].avoid) appeared_before += text::contains_phrase(out, p);
    }
    EXPECT_GT(appeared_before, 0u);
    const auto got = decode::search(*model, src, d, *strategy, nullptr, &c);
    for (size_t i = 0; i < src.size(); ++i)
      for (const auto& h : got[i])
        for (const auto& p : c[i].avoid) EXPECT_FALSE(text::contains_phrase(h.tokens, p)) << "sentence " << i;
  }
}

TEST_P(SearchTest, SamplingAndGreedySearchRefuseToForcePhrases) {
  decode::SearchOptions sampling = search_of(1);
  sampling.sampling = "top-p:0.9";
  EXPECT_THROW(decode::make_search_strategy(sampling, true), UsageError);
  auto model = random_model(GetParam());
  const auto c = phrases_to_include();
  EXPECT_THROW(decode::search(*model, sources(), room_for_phrases(), decode::GreedySearch(), nullptr, &c), UsageError);
}

INSTANTIATE_TEST_SUITE_P(Models, SearchTest, ::testing::Values("transformer", "gru"));

}  // namespace
