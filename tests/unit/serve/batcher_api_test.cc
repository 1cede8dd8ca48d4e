// `nmt serve` without sockets or a model: the batching queue and the JSON API's reading/writing.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>

#include <nlohmann/json.hpp>

#include "nmt/decode/result_writer.h"
#include "nmt/serve/api.h"
#include "nmt/serve/batcher.h"

namespace {

using namespace nmt::serve;

// A translation with the fields the answers below are about.
TranslationResult scored(std::string text, double score, double confidence = 0, bool repetition = false,
                         std::vector<std::string> unmet = {}) {
  TranslationResult t;
  t.text = std::move(text);
  t.score = score;
  t.confidence = confidence;
  t.repetition = repetition;
  t.unmet_constraints = std::move(unmet);
  return t;
}
using namespace std::chrono_literals;

// A decoder that upper-cases (beam 1) or repeats with beam-many hypotheses, recording the
// batches it was given.
struct RecordingDecoder {
  std::mutex mutex;
  std::vector<std::pair<DecodeKey, std::vector<std::string>>> batches;
  DecodeFunction function() {
    return [this](const DecodeKey& key, const std::vector<Sentence>& lines) {
      {
        std::lock_guard<std::mutex> lock(mutex);
        std::vector<std::string> texts;
        for (const auto& l : lines) texts.push_back(l.text);
        batches.emplace_back(key, texts);
      }
      std::vector<Nbest> out;
      for (const auto& sentence : lines) {
        const std::string& l = sentence.text;
        if (l == "fail") throw std::runtime_error("decoder failed on purpose");
        Nbest n;
        for (int i = 0; i < key.nbest; ++i) n.push_back(scored(key.model + ":" + l + "#" + std::to_string(i), -1.0 * i));
        out.push_back(n);
      }
      return out;
    };
  }
};

std::vector<std::string> texts(const std::vector<Nbest>& r) {
  std::vector<std::string> out;
  for (const auto& n : r) out.push_back(n.at(0).text);
  return out;
}

TEST(ServeBatcher, ConcurrentRequestsShareOneBatchAndEachGetsItsOwnAnswers) {
  RecordingDecoder d;
  Batcher b(d.function(), {64, 300ms, {}, {}});
  const DecodeKey key{"m", 1, 1};
  std::vector<std::future<std::vector<Nbest>>> futures;
  for (int i = 0; i < 8; ++i) futures.push_back(b.submit(key, {"s" + std::to_string(i)}));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(texts(futures[i].get()), std::vector<std::string>{"m:s" + std::to_string(i) + "#0"});
  ASSERT_EQ(d.batches.size(), 1u);
  EXPECT_EQ(d.batches[0].second.size(), 8u);
  EXPECT_EQ(b.stats().batches, 1u);
  EXPECT_EQ(b.stats().sentences, 8u);
}

TEST(ServeBatcher, AFullBatchIsDecodedWithoutWaitingAndLargeRequestsAreSplitInOrder) {
  RecordingDecoder d;
  Batcher b(d.function(), {4, 10s, {}, {}});  // the wait would time the test out if a full batch waited
  auto f = b.submit({"m", 1, 1}, {"a", "b", "c", "d", "e", "f", "g", "h"});
  ASSERT_EQ(f.wait_for(5s), std::future_status::ready);
  EXPECT_EQ(texts(f.get()), (std::vector<std::string>{"m:a#0", "m:b#0", "m:c#0", "m:d#0", "m:e#0", "m:f#0", "m:g#0", "m:h#0"}));
  ASSERT_EQ(d.batches.size(), 2u);
  EXPECT_EQ(d.batches[0].second, (std::vector<std::string>{"a", "b", "c", "d"}));
}

TEST(ServeBatcher, ALoneSentenceWaitsNoLongerThanTheWindow) {
  RecordingDecoder d;
  Batcher b(d.function(), {64, 20ms, {}, {}});
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(texts(b.submit({"m", 1, 1}, {"x"}).get()), std::vector<std::string>{"m:x#0"});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 2s);
}

// Clients that send again as soon as they are answered: two groups that first arrived apart
// (the second while the first was decoded) merge into one batch instead of taking turns.
TEST(ServeBatcher, ClientsComingBackAfterTheirAnswerJoinTheNextBatch) {
  std::mutex mutex;
  std::vector<size_t> sizes;
  auto slow = [&](const DecodeKey&, const std::vector<Sentence>& lines) {
    std::this_thread::sleep_for(100ms);
    std::lock_guard<std::mutex> lock(mutex);
    sizes.push_back(lines.size());
    return std::vector<Nbest>(lines.size(), Nbest{scored("x", 0)});
  };
  Batcher b(slow, {64, 20ms, {}, {}});  // a window shorter than a batch: the second group is overdue when it ends
  auto client = [&](std::chrono::milliseconds start) {
    std::this_thread::sleep_for(start);
    for (int i = 0; i < 6; ++i) {
      b.submit({"m", 1, 1}, {"s"}).get();
      std::this_thread::sleep_for(2ms);
    }
  };
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i) clients.emplace_back(client, 0ms);
  for (int i = 0; i < 4; ++i) clients.emplace_back(client, 40ms);  // while the first batch is decoded
  for (auto& c : clients) c.join();
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_GE(sizes.size(), 6u);
  EXPECT_EQ(sizes[sizes.size() - 2], 8u) << "the two groups still take turns";
}

TEST(ServeBatcher, AClientSendingAgainAfterItsAnswerDoesNotWaitOutTheWindow) {
  RecordingDecoder d;
  Batcher b(d.function(), {64, 2s, {}, {}});
  b.submit({"m", 1, 1}, {"first"}).get();  // alone: waits the 2 s window for company
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 3; ++i) b.submit({"m", 1, 1}, {"again"}).get();  // the one client answered is back
  EXPECT_LT(std::chrono::steady_clock::now() - start, 1s);
}

TEST(ServeBatcher, DifferentModelsOrBeamsNeverShareABatch) {
  RecordingDecoder d;
  Batcher b(d.function(), {64, 200ms, {}, {}});
  auto f1 = b.submit({"a", 1, 1}, {"x"});
  auto f2 = b.submit({"b", 1, 1}, {"x"});
  auto f3 = b.submit({"a", 4, 2}, {"x"});
  auto f4 = b.submit({"a", 1, 1}, {"y"});
  EXPECT_EQ(texts(f1.get()), std::vector<std::string>{"a:x#0"});
  EXPECT_EQ(texts(f2.get()), std::vector<std::string>{"b:x#0"});
  auto r3 = f3.get();
  ASSERT_EQ(r3.at(0).size(), 2u);  // nbest 2
  EXPECT_EQ(r3[0][1].text, "a:x#1");
  EXPECT_EQ(texts(f4.get()), std::vector<std::string>{"a:y#0"});
  ASSERT_EQ(d.batches.size(), 3u);
  for (const auto& [key, lines] : d.batches)
    if (key.model == "a" && key.beam == 1) {
      EXPECT_EQ(lines, (std::vector<std::string>{"x", "y"}));
    }
}

TEST(ServeBatcher, ADecodingErrorReachesTheRequestsOfItsBatchOnly) {
  RecordingDecoder d;
  Batcher b(d.function(), {64, 100ms, {}, {}});
  auto bad = b.submit({"m", 1, 1}, {"ok", "fail"});
  auto also_in_batch = b.submit({"m", 1, 1}, {"ok"});
  EXPECT_THROW(bad.get(), std::runtime_error);
  EXPECT_THROW(also_in_batch.get(), std::runtime_error);
  EXPECT_EQ(texts(b.submit({"m", 1, 1}, {"later"}).get()), std::vector<std::string>{"m:later#0"});  // still serving
}

TEST(ServeBatcher, StopAnswersWhatIsQueuedThenRefusesNewRequests) {
  RecordingDecoder d;
  Batcher b(d.function(), {64, 10s, {}, {}});
  auto queued = b.submit({"m", 1, 1}, {"x"});
  b.stop();  // must not wait out the 10 s window
  ASSERT_EQ(queued.wait_for(0s), std::future_status::ready);
  EXPECT_EQ(texts(queued.get()), std::vector<std::string>{"m:x#0"});
  EXPECT_THROW(b.submit({"m", 1, 1}, {"y"}), BatcherStopped);
}

TEST(ServeBatcher, AnEmptyRequestIsAnsweredAtOnce) {
  RecordingDecoder d;
  Batcher b(d.function(), {64, 10s, {}, {}});
  auto f = b.submit({"m", 1, 1}, {});
  ASSERT_EQ(f.wait_for(0s), std::future_status::ready);
  EXPECT_TRUE(f.get().empty());
  EXPECT_TRUE(d.batches.empty());
}

const ApiDefaults kDefaults{{"en-fr", "fr-en"}, 1};
const ApiLimits kLimits{3, 8};

int status_of(const std::string& body) {
  try {
    parse_translate_request(body, kDefaults, kLimits);
  } catch (const ApiError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos);
    return e.status();
  }
  return 200;
}

std::vector<std::string> texts_of(const std::vector<Sentence>& sentences) {
  std::vector<std::string> out;
  for (const auto& s : sentences) out.push_back(s.text);
  return out;
}

TEST(ServeApi, ReadsOneSentenceOrAListWithTheServersDefaults) {
  auto one = parse_translate_request(R"({"text": "Hello."})", kDefaults, kLimits);
  EXPECT_FALSE(one.list);
  EXPECT_EQ(texts_of(one.sentences), std::vector<std::string>{"Hello."});
  EXPECT_EQ(one.key, (DecodeKey{"en-fr", 1, 1}));
  EXPECT_TRUE(one.sentences[0].constraints.empty());
  auto many = parse_translate_request(R"({"text": ["a", "b"], "beam": 4, "nbest": 2, "model": "fr-en"})", kDefaults, kLimits);
  EXPECT_TRUE(many.list);
  EXPECT_EQ(texts_of(many.sentences), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(many.key, (DecodeKey{"fr-en", 4, 2}));
}

TEST(ServeApi, ConstraintsFollowTheShapeOfTextAndAvoidAppliesToEverySentence) {
  auto one = parse_translate_request(R"({"text": "a", "constraints": ["chien", "rouge vif"]})", kDefaults, kLimits);
  EXPECT_EQ(one.sentences[0].constraints.include, (std::vector<std::string>{"chien", "rouge vif"}));
  EXPECT_TRUE(one.key.constrained);  // beam search, never batched with unconstrained requests
  EXPECT_TRUE(one.constrained);
  auto many = parse_translate_request(R"({"text": ["a", "b"], "constraints": [[], ["x"]], "avoid": ["y"]})", kDefaults, kLimits);
  EXPECT_TRUE(many.sentences[0].constraints.include.empty());
  EXPECT_EQ(many.sentences[1].constraints.include, std::vector<std::string>{"x"});
  EXPECT_EQ(many.sentences[0].constraints.avoid, std::vector<std::string>{"y"});
  EXPECT_EQ(many.sentences[1].constraints.avoid, std::vector<std::string>{"y"});
  auto avoid_only = parse_translate_request(R"({"text": "a", "avoid": ["y"]})", kDefaults, kLimits);
  EXPECT_FALSE(avoid_only.key.constrained);  // avoiding needs no beam
  EXPECT_EQ(status_of(R"({"text": "a", "constraints": "x"})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "constraints": [5]})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "constraints": [" "]})"), 400);           // an empty phrase
  EXPECT_EQ(status_of(R"({"text": ["a", "b"], "constraints": [["x"]]})"), 400);  // one list per sentence
  EXPECT_EQ(status_of(R"({"text": ["a"], "constraints": ["x"]})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "avoid": "y"})"), 400);
  std::string many_phrases = "[";
  for (int i = 0; i < 65; ++i) many_phrases += std::string(i ? "," : "") + "\"p\"";
  EXPECT_EQ(status_of(R"({"text": "a", "constraints": )" + many_phrases + "]}"), 400);  // over max_phrases
}

TEST(ServeApi, RefusesMalformedRequestsWithTheRightStatus) {
  EXPECT_EQ(status_of(""), 400);
  EXPECT_EQ(status_of("{\"text\": "), 400);
  EXPECT_EQ(status_of("[\"Hello\"]"), 400);
  EXPECT_EQ(status_of(R"({"txt": "Hello"})"), 400);
  EXPECT_EQ(status_of(R"({"text": 5})"), 400);
  EXPECT_EQ(status_of(R"({"text": ["a", 5]})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "beam": "4"})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "beam": 0})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "beam": 9})"), 400);  // over max_beam
  EXPECT_EQ(status_of(R"({"text": "a", "beam": 2, "nbest": 3})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "beam": 2.5})"), 400);
  EXPECT_EQ(status_of(R"({"text": "a", "model": "de-en"})"), 404);
  EXPECT_EQ(status_of(R"({"text": "a", "model": 1})"), 400);
  EXPECT_EQ(status_of(R"({"text": ["a", "b", "c", "d"]})"), 413);  // over max_sentences
  EXPECT_EQ(status_of("{\"text\": \"caf\xC3\"}"), 400);           // invalid UTF-8
  EXPECT_EQ(status_of(R"({"text": "\ud800"})"), 400);               // a lone surrogate
  EXPECT_EQ(status_of(R"({"text": ["a", "b", "c"]})"), 200);
  EXPECT_EQ(status_of(R"({"text": []})"), 200);
}

TEST(ServeApi, TheAnswerHasTheShapeOfTheQuestion) {
  auto one = parse_translate_request(R"({"text": "a", "beam": 2, "nbest": 2})", kDefaults, kLimits);
  auto j = nlohmann::json::parse(translate_response(one, {{scored("A", -0.5), scored("B", -1.5)}}, 12.345));
  EXPECT_EQ(j["translation"], "A");
  EXPECT_EQ(j["nbest"][1]["translation"], "B");  // the key `nmt translate --json` uses
  EXPECT_EQ(j["nbest"][1]["score"], -1.5);
  EXPECT_EQ(j["model"], "en-fr");
  EXPECT_EQ(j["ms"], 12.35);
  auto many = parse_translate_request(R"({"text": ["a", "b"]})", kDefaults, kLimits);
  j = nlohmann::json::parse(translate_response(many, {{scored("A", 0)}, {scored("B", 0)}}, 1));
  EXPECT_EQ(j["translation"], nlohmann::json::array({"A", "B"}));
  EXPECT_FALSE(j.contains("nbest"));
  EXPECT_FALSE(j.contains("unmet_constraints"));  // only when the request had constraints
  auto constrained = parse_translate_request(R"({"text": ["a", "b"], "constraints": [["x"], []]})", kDefaults, kLimits);
  j = nlohmann::json::parse(translate_response(constrained, {{scored("A", 0, -0.25, true, {"x"})}, {scored("B", 0, -1.5)}}, 1));
  EXPECT_EQ(j["confidence"], nlohmann::json::array({-0.25, -1.5}));
  EXPECT_EQ(j["repetition"], nlohmann::json::array({true, false}));
  EXPECT_EQ(j["unmet_constraints"], (nlohmann::json::array({nlohmann::json::array({"x"}), nlohmann::json::array()})));
  // Every field of one translation, as `nmt translate --json` writes it, in the answer.
  const nlohmann::json fields = nmt::decode::result_json(scored("A", 0, -0.25, true, {"x"}), {true, false, false});
  EXPECT_EQ(fields.size(), 8u) << fields.dump();
  for (const auto& [key, value] : fields.items()) EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(nlohmann::json::parse(error_body(413, "too big")), (nlohmann::json{{"error", "too big"}, {"status", 413}}));
}

TEST(ServeApi, TokensMatchOnlyWhenEqual) {
  EXPECT_TRUE(equal_in_constant_time("s3cret", "s3cret"));
  EXPECT_FALSE(equal_in_constant_time("s3cre", "s3cret"));
  EXPECT_FALSE(equal_in_constant_time("s3cretX", "s3cret"));
  EXPECT_FALSE(equal_in_constant_time("s3creT", "s3cret"));
  EXPECT_FALSE(equal_in_constant_time("s3crets3cret", "s3cret"));  // a repeat of the key is not the key
  EXPECT_FALSE(equal_in_constant_time("", "s3cret"));
  EXPECT_FALSE(equal_in_constant_time("", ""));  // no key configured never matches
}

// Two workers: a second batch is decoded while the first is still being decoded, and a request
// split over both gets every answer in its own order.
TEST(ServeBatcher, TwoWorkersDecodeTwoBatchesAtOnceAndASplitRequestKeepsItsOrder) {
  std::mutex mutex;
  std::condition_variable both_in;
  int in_flight = 0, most_in_flight = 0;
  auto decode = [&](const DecodeKey&, const std::vector<Sentence>& lines) {
    std::unique_lock<std::mutex> lock(mutex);
    most_in_flight = std::max(most_in_flight, ++in_flight);
    both_in.notify_all();
    both_in.wait_for(lock, 5s, [&] { return most_in_flight >= 2; });  // one worker alone times out
    --in_flight;
    std::vector<Nbest> out;
    for (const auto& l : lines) out.push_back({scored("t:" + l.text, 0)});
    return out;
  };
  BatcherOptions options{2, 10s, 2, {}};  // batches of 2: a request of 4 fills two at once
  Batcher b(decode, options);
  const auto start = std::chrono::steady_clock::now();
  auto f = b.submit({"m", 1, 1}, {"a", "b", "c", "d"});
  EXPECT_EQ(texts(f.get()), (std::vector<std::string>{"t:a", "t:b", "t:c", "t:d"}));
  EXPECT_EQ(most_in_flight, 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 4s);
  EXPECT_EQ(b.stats().batches, 2u);
}

}  // namespace
