// The HTTP server of `nmt serve` (serve/server.h), started in-process on a loopback port with a
// backend that needs no model: what a client sees of its routes, errors, authentication,
// batching and stop, spoken to over real HTTP.
#include <atomic>
#include <cctype>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include "nmt/serve/server.h"
#include "nmt/util/error.h"

namespace {

using namespace nmt::serve;

// "translates" by upper-casing; refuses the constraint "never"; counts its batches.
class UpperCaseBackend : public Backend {
 public:
  const std::vector<ServedModelInfo>& models() const override { return models_; }
  void check(const TranslateRequest& r) const override {
    for (const auto& s : r.sentences)
      for (const auto& p : s.constraints.include)
        if (p == "never") throw ApiError(400, "the model cannot write \"never\"");
  }
  std::vector<Nbest> decode(const DecodeKey& key, const std::vector<Sentence>& sentences) override {
    ++batches;
    std::vector<Nbest> out;
    for (const auto& s : sentences) {
      Nbest n;
      for (int k = 0; k < key.nbest; ++k) {
        std::string t = s.text;
        for (auto& c : t) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
        TranslationResult st;
        st.text = t + (k ? std::to_string(k) : "");
        st.score = -1.0 - k;
        st.confidence = -0.5;
        st.tokens = {t};
        st.token_log_probs = {-0.5};
        st.log_prob = -1.0 - k;
        n.push_back(st);
      }
      out.push_back(n);
    }
    return out;
  }
  std::atomic<int> batches{0};

 private:
  std::vector<ServedModelInfo> models_ = {{"en-fr", "models/en-fr", "transformer", "fp32", "en", "fr"},
                                          {"fr-en", "models/fr-en", "gru", "int8", "fr", "en"}};
};

// A server on a free loopback port, serving on its own thread until the test ends.
class RunningServer {
 public:
  explicit RunningServer(Backend& backend, ServerSettings settings = {}) {
    settings.options.port = 0;
    settings.options.host = "127.0.0.1";
    settings.quiet = true;
    settings.version = "nmt test";
    server_ = std::make_unique<Server>(settings, backend);
    port_ = server_->bind();
    served_ = std::async(std::launch::async, [this] { return server_->serve(); });
  }
  ~RunningServer() {
    server_->stop();
    if (served_.valid()) served_.wait();
  }
  httplib::Client client() const {
    httplib::Client c("127.0.0.1", port_);
    c.set_read_timeout(10);
    return c;
  }
  int port() const { return port_; }
  Server& server() { return *server_; }
  std::future<bool>& served() { return served_; }

 private:
  std::unique_ptr<Server> server_;
  int port_ = 0;
  std::future<bool> served_;
};

nlohmann::json body_of(const httplib::Result& r) { return nlohmann::json::parse(r->body); }

TEST(HttpServer, AnswersHealthModelsAndTranslations) {
  UpperCaseBackend backend;
  RunningServer running(backend);
  auto c = running.client();
  auto health = c.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(body_of(health)["version"], "nmt test");
  EXPECT_EQ(body_of(health)["models"], nlohmann::json::array({"en-fr", "fr-en"}));
  auto models = c.Get("/models");
  ASSERT_TRUE(models);
  EXPECT_EQ(body_of(models)["models"][1]["weights"], "int8");
  EXPECT_EQ(body_of(models)["models"][0]["default"], true);

  auto one = c.Post("/translate", R"({"text": "hello"})", "application/json");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->status, 200) << one->body;
  EXPECT_EQ(one->get_header_value("Content-Type"), "application/json");
  const auto j = body_of(one);
  EXPECT_EQ(j["translation"], "HELLO");
  EXPECT_EQ(j["log_prob"], -1.0);
  EXPECT_EQ(j["tokens"], nlohmann::json::array({"HELLO"}));
  EXPECT_EQ(j["model"], "en-fr");
  auto many = c.Post("/translate", R"({"text": ["a", "b"], "beam": 2, "nbest": 2, "model": "fr-en"})", "application/json");
  ASSERT_TRUE(many);
  EXPECT_EQ(body_of(many)["translation"], nlohmann::json::array({"A", "B"}));
  EXPECT_EQ(body_of(many)["nbest"][1][1]["translation"], "B1");
  EXPECT_EQ(body_of(many)["model"], "fr-en");
  // A request is counted once answered (its log line is written after the answer is sent).
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (running.server().requests() < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(running.server().requests(), 4u);
}

TEST(HttpServer, ErrorsAreJsonInNmtsWords) {
  UpperCaseBackend backend;
  ServerSettings settings;
  settings.options.max_body_bytes = 1000;
  RunningServer running(backend, settings);
  auto c = running.client();
  auto expect_error = [](const httplib::Result& r, int status, const std::string& words) {
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, status) << r->body;
    const auto j = nlohmann::json::parse(r->body);
    EXPECT_EQ(j["status"], status);
    EXPECT_NE(j["error"].get<std::string>().find(words), std::string::npos) << r->body;
  };
  expect_error(c.Post("/translate", R"({"text": ["a")", "application/json"), 400, "the body is not valid JSON (at byte");
  expect_error(c.Post("/translate", R"({"txt": "a"})", "application/json"), 400, "unknown field \"txt\"");
  expect_error(c.Post("/translate", R"({"text": "a", "model": "de-en"})", "application/json"), 404, "no model named \"de-en\"");
  expect_error(c.Post("/translate", R"({"text": "a", "constraints": ["never"]})", "application/json"), 400,
               "cannot write \"never\"");
  expect_error(c.Post("/translate", std::string(2000, ' '), "application/json"), 413, "over the 1000-byte limit");
  expect_error(c.Get("/nowhere"), 404, "no such endpoint");
  EXPECT_EQ(backend.batches.load(), 0) << "no refused request reaches the decoder";
}

TEST(HttpServer, WithAnApiKeyOnlyBearersOfItAreServed) {
  UpperCaseBackend backend;
  ServerSettings settings;
  settings.api_key = "s3cret";
  RunningServer running(backend, settings);
  auto c = running.client();
  auto refused = c.Post("/translate", R"({"text": "a"})", "application/json");
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->get_header_value("WWW-Authenticate"), "Bearer");
  c.set_bearer_token_auth("s3cret");
  auto served = c.Post("/translate", R"({"text": "a"})", "application/json");
  ASSERT_TRUE(served);
  EXPECT_EQ(served->status, 200);
}

TEST(HttpServer, ConcurrentRequestsShareBatchesAndEachGetsItsOwnAnswer) {
  UpperCaseBackend backend;
  ServerSettings settings;
  settings.options.batch_wait_ms = 200;  // long enough for every client to be queued
  RunningServer running(backend, settings);
  std::vector<std::future<std::string>> answers;
  for (int i = 0; i < 8; ++i)
    answers.push_back(std::async(std::launch::async, [&running, i] {
      auto r = running.client().Post("/translate", nlohmann::json{{"text", "s" + std::to_string(i)}}.dump(), "application/json");
      return r && r->status == 200 ? nlohmann::json::parse(r->body)["translation"].get<std::string>() : std::string("failed");
    }));
  for (int i = 0; i < 8; ++i) EXPECT_EQ(answers[i].get(), "S" + std::to_string(i));
  EXPECT_LT(backend.batches.load(), 8) << "some requests were decoded together";
}

TEST(HttpServer, StopEndsServingAndASecondServerCannotTakeTheSamePort) {
  UpperCaseBackend backend;
  RunningServer running(backend);
  const int port = running.port();
  ServerSettings same;
  same.options.port = port;
  same.options.host = "127.0.0.1";
  Server second(same, backend);
  EXPECT_THROW(second.bind(), nmt::RuntimeError);
  running.server().stop();
  ASSERT_EQ(running.served().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  EXPECT_TRUE(running.served().get());
}

}  // namespace
