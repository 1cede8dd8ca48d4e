// `nmt serve` end to end: the real binary on a free loopback port, spoken to over real sockets.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "test_support.h"

namespace {

using nmt::test::fixture;
using nmt::test::run_command;
using nmt::test::slurp;
using nmt::test::lines_of;
using namespace std::chrono_literals;

// Sources of several lengths (padding inside a batch must not change a translation).
const std::vector<std::string> kSources = {
    "Hello.", "A man is riding a bicycle down the street.", "Two dogs play in the snow while a child watches them.",
    "Thank you very much.", "The cat sleeps.", "A group of people are standing in front of a large building at night.",
    "Good morning!", "She reads a book."};

// One tiny model for every test here: it need not translate well, only deterministically.
class Serve : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-serve");
    auto r = nmt::test::run_once_per_ctest(
        [](const std::string& out) {
          return nmt::test::nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
                 fixture("tiny") + " --out " + out + " --max-steps 300 --valid-every 300 --lr 5e-3 --seed 3 --threads 1 -q";
        },
        model());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::string text;
    for (const auto& s : kSources) text += s + "\n";
    nmt::test::write_bytes(sources(), text);
  }
  static void TearDownTestSuite() { delete dir_; }
  static std::string model() { return dir_->file("tiny-model"); }
  static std::string sources() { return dir_->file("sources.txt"); }
  static std::string file(const std::string& name) { return dir_->file(name); }
  static nmt::test::TempDir* dir_;
};
nmt::test::TempDir* Serve::dir_ = nullptr;

// `nmt serve` as a child process; its stderr goes to a file, read for the port and the log.
class ServerProcess {
 public:
  explicit ServerProcess(const std::string& args, const std::string& log_path) : log_(log_path) {
    const std::string cmd = "exec " + nmt::test::nmt_binary() + " serve --port 0 --threads 1 " + args + " 2>" + log_path;
    pid_ = ::fork();
    if (pid_ == 0) {
      ::execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    const std::regex listening("listening on http://127\\.0\\.0\\.1:([0-9]+)");
    for (auto deadline = std::chrono::steady_clock::now() + 120s; std::chrono::steady_clock::now() < deadline;) {
      std::smatch m;
      const std::string text = log();
      if (std::regex_search(text, m, listening)) {
        port_ = std::stoi(m[1]);
        return;
      }
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        pid_ = -1;
        return;
      }
      std::this_thread::sleep_for(50ms);
    }
  }
  ~ServerProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  int port() const { return port_; }
  std::string log() const { return slurp(log_); }
  // Sends `sig` and waits (at most `limit`) for the exit code; -1 if it did not exit.
  int stop(int sig = SIGTERM, std::chrono::seconds limit = 30s) {
    if (pid_ <= 0) return exit_code_;
    ::kill(pid_, sig);
    return wait(limit);
  }
  int wait(std::chrono::seconds limit) {
    for (auto deadline = std::chrono::steady_clock::now() + limit; std::chrono::steady_clock::now() < deadline;) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(20ms);
    }
    return -1;
  }

 private:
  std::string log_;
  pid_t pid_ = -1;
  int port_ = 0;
  int exit_code_ = -1;
};

int connect_to(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    ::close(fd);
    return -1;
  }
  timeval tv{30, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  return fd;
}

void send_all(int fd, const std::string& bytes) {
  for (size_t sent = 0; sent < bytes.size();) {
    const ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return;  // the server may answer (413) and close before reading everything
    sent += static_cast<size_t>(n);
  }
}

std::string read_until_closed(int fd) {
  std::string out;
  char buf[65536];
  for (ssize_t n; (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

struct HttpReply {
  int status = 0;  // 0: no answer
  std::string headers;
  std::string body;
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

HttpReply parse_reply(const std::string& raw) {
  HttpReply r;
  const auto end = raw.find("\r\n\r\n");
  if (raw.compare(0, 9, "HTTP/1.1 ") != 0 || end == std::string::npos) return r;
  r.status = std::stoi(raw.substr(9, 3));
  r.headers = raw.substr(0, end);
  r.body = raw.substr(end + 4);
  return r;
}

// Sends bytes as they are (one request, the connection closed after it) and reads the answer.
HttpReply send_request(int port, const std::string& raw_request) {
  const int fd = connect_to(port);
  if (fd < 0) return {};
  send_all(fd, raw_request);
  auto r = parse_reply(read_until_closed(fd));
  ::close(fd);
  return r;
}

HttpReply request(int port, const std::string& method, const std::string& path, const std::string& body = "",
                  const std::string& extra_headers = "") {
  return send_request(port, method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + extra_headers +
                            "Content-Type: application/json\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
}

HttpReply translate(int port, const nlohmann::json& body) { return request(port, "POST", "/translate", body.dump()); }

TEST_F(Serve, AnswersHealthModelsAndTranslatesAsNmtTranslateDoes) {
  ServerProcess server("-m " + model(), file("api.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  auto health = request(server.port(), "GET", "/health");
  ASSERT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.json()["status"], "ok");
  EXPECT_NE(health.json()["version"].get<std::string>().find("nmt "), std::string::npos);
  EXPECT_NE(health.headers.find("Content-Type: application/json"), std::string::npos);
  auto models = request(server.port(), "GET", "/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(models.json()["models"][0]["name"], "tiny-model");
  EXPECT_EQ(models.json()["models"][0]["type"], "transformer");

  // Greedy: the same lines as `nmt translate`, one string for a string, a list for a list.
  auto offline = run_command(nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() + " --input " + sources());
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  const auto expected = lines_of(offline.out);
  auto list = translate(server.port(), {{"text", kSources}});
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.json()["translation"], nlohmann::json(expected));
  EXPECT_EQ(list.json()["sentences"], kSources.size());
  EXPECT_TRUE(list.json()["ms"].is_number());
  auto one = translate(server.port(), {{"text", kSources[1]}});
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.json()["translation"], expected[1]);
  auto empty = translate(server.port(), {{"text", nlohmann::json::array()}});
  EXPECT_EQ(empty.json()["translation"], nlohmann::json::array());

  // The same fields with the same values as `nmt translate --json` (which adds the line number).
  auto json_lines = run_command(nmt::test::nmt_binary() + " translate -q --json --threads 1 -m " + model() + " --input " + sources());
  ASSERT_EQ(json_lines.exit_code, 0) << json_lines.err;
  const auto offline_json = lines_of(json_lines.out);
  const nlohmann::json answer = list.json();
  for (size_t i = 0; i < kSources.size(); ++i) {
    auto cli = nlohmann::json::parse(offline_json[i]);
    cli.erase("line");
    ASSERT_EQ(cli.size(), 7u) << cli.dump();
    for (const auto& [key, value] : cli.items()) {
      ASSERT_TRUE(answer.contains(key)) << key;
      const nlohmann::json& served = answer[key][i];
      if (key == "token_log_probs") {
        ASSERT_EQ(served.size(), value.size());
        for (size_t t = 0; t < value.size(); ++t) EXPECT_NEAR(served[t].get<double>(), value[t].get<double>(), 1e-5);
      } else if (value.is_number()) {
        EXPECT_NEAR(served.get<double>(), value.get<double>(), 1e-5) << key;
      } else {
        EXPECT_EQ(served, value) << key;
      }
    }
  }

  // Beam search with n-best lists: `nmt translate --beam 3 --nbest 2`'s 'LINE ||| text ||| score'.
  auto beam = run_command(nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() + " --beam 3 --nbest 2 --input " + sources());
  ASSERT_EQ(beam.exit_code, 0) << beam.err;
  auto nbest = translate(server.port(), {{"text", kSources}, {"beam", 3}, {"nbest", 2}});
  ASSERT_EQ(nbest.status, 200) << nbest.body;
  const auto j = nbest.json();
  const auto beam_lines = lines_of(beam.out);
  ASSERT_EQ(beam_lines.size(), 2 * kSources.size());
  for (size_t i = 0; i < beam_lines.size(); ++i) {
    const auto& hyp = j["nbest"][i / 2][i % 2];
    const std::string line = beam_lines[i];
    const auto a = line.find(" ||| "), b = line.rfind(" ||| ");
    EXPECT_EQ(hyp["translation"], line.substr(a + 5, b - a - 5)) << line;
    EXPECT_NEAR(hyp["score"].get<double>(), std::stod(line.substr(b + 5)), 1e-5) << line;
  }
  EXPECT_EQ(j["translation"][0], j["nbest"][0][0]["translation"]);

  // One log line per request: method, path, status, sentences, milliseconds.
  EXPECT_TRUE(std::regex_search(server.log(), std::regex("POST /translate 200 8 sentences [0-9.]+ ms"))) << server.log();
  EXPECT_TRUE(std::regex_search(server.log(), std::regex("GET /health 200 0 sentences [0-9.]+ ms"))) << server.log();
  EXPECT_EQ(server.stop(), 0) << server.log();
}

// Phrases a translation must contain reach it through the API as through `nmt translate
// --constraints`; the answer says which are missing, each sentence's confidence and whether it
// loops; a phrase the model cannot write is the client's error, and the server keeps serving.
TEST_F(Serve, ConstraintsAndAvoidedPhrasesWorkAsInTranslateAndBadOnesAre400) {
  ServerProcess server("-m " + model(), file("constraints.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  nmt::test::write_bytes(file("phrases"), "plage\n\nbus\n");
  nmt::test::write_bytes(file("three"), "A man rides a bike.\nThe dog runs.\nTwo women talk.\n");
  auto offline = run_command(nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() + " --beam 3 --constraints " +
                             file("phrases") + " --input " + file("three"));
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  const nlohmann::json phrases = {{"plage"}, nlohmann::json::array(), {"bus"}};
  auto reply = translate(server.port(), {{"text", lines_of(nmt::test::slurp(file("three")))}, {"beam", 3}, {"constraints", phrases}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  const auto j = reply.json();
  EXPECT_EQ(j["translation"], nlohmann::json(lines_of(offline.out)));
  EXPECT_EQ(j["unmet_constraints"], (nlohmann::json{nlohmann::json::array(), nlohmann::json::array(), nlohmann::json::array()}));
  EXPECT_NE(j["translation"][0].get<std::string>().find("plage"), std::string::npos) << j;
  for (const auto& c : j["confidence"]) EXPECT_LT(c.get<double>(), 0);
  EXPECT_EQ(j["repetition"].size(), 3u);
  auto avoided = translate(server.port(), {{"text", "A dog runs across the green field."}, {"avoid", {"chien"}}});
  ASSERT_EQ(avoided.status, 200) << avoided.body;
  EXPECT_EQ(avoided.json()["translation"].get<std::string>().find("chien"), std::string::npos) << avoided.body;
  auto unwritable = translate(server.port(), {{"text", "a"}, {"constraints", {"\xE2\x98\x83"}}});
  EXPECT_EQ(unwritable.status, 400) << unwritable.body;
  EXPECT_NE(unwritable.json()["error"].get<std::string>().find("vocabulary lacks"), std::string::npos) << unwritable.body;
  EXPECT_EQ(translate(server.port(), {{"text", "a"}}).status, 200);
  EXPECT_EQ(server.stop(), 0) << server.log();
}

// Each of kSources translated alone, one request at a time.
std::vector<std::string> translations_alone(int port) {
  std::vector<std::string> alone;
  for (const auto& s : kSources) alone.push_back(translate(port, {{"text", s}}).json()["translation"]);
  return alone;
}

// `clients` one-sentence requests sent at once (kSources in turn), each checked against `alone`.
void expect_concurrent_clients_get(int port, size_t clients, const std::vector<std::string>& alone) {
  std::vector<HttpReply> replies(clients);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < clients; ++i)
    threads.emplace_back([&, i] { replies[i] = translate(port, {{"text", kSources[i % kSources.size()]}}); });
  for (auto& t : threads) t.join();
  for (size_t i = 0; i < clients; ++i) {
    ASSERT_EQ(replies[i].status, 200) << replies[i].body;
    EXPECT_EQ(replies[i].json()["translation"], alone[i % kSources.size()]) << kSources[i % kSources.size()];
  }
}

TEST_F(Serve, ConcurrentRequestsShareBatchesAndGetTheTranslationsTheyGetAlone) {
  ServerProcess server("-m " + model() + " --batch-wait-ms 100 -q", file("batch.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const auto alone = translations_alone(server.port());
  const auto before = request(server.port(), "GET", "/health").json();
  const size_t clients = 24;
  expect_concurrent_clients_get(server.port(), clients, alone);
  const auto after = request(server.port(), "GET", "/health").json();
  const size_t batches = after["batches"].get<size_t>() - before["batches"].get<size_t>();
  EXPECT_EQ(after["sentences"].get<size_t>() - before["sentences"].get<size_t>(), clients);
  EXPECT_LT(batches, clients / 2) << "24 concurrent one-sentence requests were decoded in " << batches << " batches";
  EXPECT_EQ(server.stop(), 0);
  EXPECT_EQ(server.log().find("POST /translate"), std::string::npos) << "--quiet logs no requests";
}

// --workers 4: four batches decode at once on one shared model; every client still gets the
// translation it gets alone, and a request split over the workers keeps its order. (Under
// ThreadSanitizer too: scripts/checks/tsan-serve.sh runs these tests against a sanitized server.)
TEST_F(Serve, FourWorkersGiveEachRequestTheTranslationItGetsAlone) {
  ServerProcess server("-m " + model() + " --workers 4 --threads 1 --max-batch 3 --batch-wait-ms 20 -q", file("workers.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const auto alone = translations_alone(server.port());
  std::vector<std::string> many;
  for (size_t i = 0; i < 12; ++i) many.push_back(kSources[i % kSources.size()]);
  HttpReply long_reply;
  std::thread long_client([&] { long_reply = translate(server.port(), {{"text", many}}); });
  expect_concurrent_clients_get(server.port(), 24, alone);
  long_client.join();
  ASSERT_EQ(long_reply.status, 200) << long_reply.body;
  const auto translations = long_reply.json()["translation"];
  ASSERT_EQ(translations.size(), many.size());
  for (size_t i = 0; i < many.size(); ++i) EXPECT_EQ(translations[i], alone[i % kSources.size()]) << "sentence " << i;
  EXPECT_EQ(server.stop(), 0);
}

// --int8 quantises on load as `nmt translate --int8` does: the same translations, and /models
// says which weights answer.
TEST_F(Serve, Int8ServesWhatTranslateInt8Translates) {
  ServerProcess server("-m " + model() + " --int8 --threads 1 -q", file("int8.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  auto models = request(server.port(), "GET", "/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(models.json()["models"][0]["weights"], "int8");
  auto offline = run_command(nmt::test::nmt_binary() + " translate -q --int8 --threads 1 -m " + model() + " --input " + sources());
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  auto served = translate(server.port(), {{"text", kSources}});
  ASSERT_EQ(served.status, 200) << served.body;
  EXPECT_EQ(served.json()["translation"], nlohmann::json(lines_of(offline.out)));
  EXPECT_EQ(server.stop(), 0);
}

TEST_F(Serve, HostileClientsGetJsonErrorsAndTheServerKeepsServing) {
  ServerProcess server("-m " + model() + " --max-body-bytes 100000 --max-sentences 100 --timeout 1 -q", file("hostile.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const int port = server.port();
  auto expect_error = [&](const HttpReply& r, int status, const std::string& what) {
    EXPECT_EQ(r.status, status) << what << ": " << r.body;
    if (r.status == 0) return;
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    ASSERT_TRUE(j.is_object()) << what << ": " << r.body;
    EXPECT_EQ(j["status"], status) << what;
    EXPECT_TRUE(j["error"].is_string()) << what;
  };
  expect_error(request(port, "POST", "/translate", "{\"text\": [\"a\""), 400, "not valid JSON (at byte");
  expect_error(request(port, "POST", "/translate", R"({"text": {"a": 1}})"), 400, "a wrong type");
  expect_error(request(port, "POST", "/translate", R"({"text": "a", "beam": -3})"), 400, "a negative beam");
  expect_error(request(port, "POST", "/translate", ""), 400, "an empty body");
  expect_error(request(port, "POST", "/translate", "{\"text\": \"\xFF\xFE caf\xC3\"}"), 400, "invalid UTF-8");
  expect_error(request(port, "POST", "/translate", std::string(200'000, ' ')), 413, "a body over the limit");
  nlohmann::json many = {{"text", std::vector<std::string>(10'000, "a")}};  // 40 kB: under the body limit
  expect_error(translate(port, many), 413, "10,000 sentences");
  expect_error(request(port, "GET", "/nowhere"), 404, "an unknown path");
  expect_error(request(port, "GET", "/translate"), 404, "the wrong method");
  expect_error(translate(port, {{"text", "a"}, {"model", "other"}}), 404, "an unknown model");

  // Clients that disconnect mid-request (half a body), or send nothing and hold the
  // connection: the first is dropped, the second timed out (--timeout 1), and neither blocks others.
  for (int i = 0; i < 20; ++i) {
    const int fd = connect_to(port);
    send_all(fd, "POST /translate HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"text\": \"Hel");
    ::close(fd);
  }
  const int slow = connect_to(port);
  send_all(slow, "POST /translate HTTP/1.1\r\nHost: x\r\n");  // ... and never the rest
  const auto start = std::chrono::steady_clock::now();
  EXPECT_EQ(translate(port, {{"text", "Hello."}}).status, 200);
  const std::string slow_answer = read_until_closed(slow);  // the server hangs up on it
  EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);
  ::close(slow);

  // 1,000 connections opened at once, each then asking for /health: every one is answered.
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = std::max<rlim_t>(limit.rlim_cur, std::min<rlim_t>(limit.rlim_max, 4096));
  ::setrlimit(RLIMIT_NOFILE, &limit);
  std::vector<int> fds;
  for (int i = 0; i < 1000; ++i) fds.push_back(connect_to(port));
  size_t answered = 0;
  for (int fd : fds) {
    if (fd < 0) continue;
    send_all(fd, "GET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  }
  for (int fd : fds) {
    if (fd < 0) continue;
    answered += parse_reply(read_until_closed(fd)).status == 200;
    ::close(fd);
  }
  EXPECT_EQ(answered, 1000u);
  EXPECT_EQ(translate(port, {{"text", "Hello."}}).status, 200) << "still serving";
  EXPECT_EQ(server.stop(), 0) << server.log();
}

TEST_F(Serve, AnApiKeyIsRequiredOfEveryRequestWhenGiven) {
  nmt::test::write_bytes(file("key"), "s3cret-key\n");
  ServerProcess server("-m " + model() + " --api-key-file " + file("key") + " -q", file("key.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  auto none = request(server.port(), "GET", "/health");
  EXPECT_EQ(none.status, 401);
  EXPECT_NE(none.headers.find("WWW-Authenticate: Bearer"), std::string::npos);
  EXPECT_EQ(request(server.port(), "GET", "/health", "", "Authorization: Bearer s3cret\r\n").status, 401);
  EXPECT_EQ(request(server.port(), "POST", "/translate", R"({"text": "Hi"})", "Authorization: Bearer s3cret-keyX\r\n").status, 401);
  EXPECT_EQ(request(server.port(), "GET", "/health", "", "Authorization: Bearer s3cret-key\r\n").status, 200);
  EXPECT_EQ(request(server.port(), "POST", "/translate", R"({"text": "Hi"})", "Authorization: Bearer s3cret-key\r\n").status, 200);
}

// application/x-www-form-urlencoded, as LibreTranslate's clients send their requests.
std::string form_encoded(const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [name, value] : fields) {
    out += (out.empty() ? "" : "&") + name + "=";
    for (unsigned char c : value) {
      char escaped[4];
      std::snprintf(escaped, sizeof escaped, "%%%02X", c);
      out += std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ? std::string(1, static_cast<char>(c)) : escaped;
    }
  }
  return out;
}

HttpReply post_form(int port, const std::string& path, const std::vector<std::pair<std::string, std::string>>& fields,
                    const std::string& extra_headers = "") {
  const std::string body = form_encoded(fields);
  return send_request(port, "POST " + path + " HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n" + extra_headers +
                                "Content-Type: application/x-www-form-urlencoded\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body);
}

TEST_F(Serve, SpeaksLibreTranslatesApiAsItsClientsExpect) {
  ServerProcess server("-m " + model() + " -q", file("lt.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const int port = server.port();
  const auto languages = request(port, "GET", "/languages");
  ASSERT_EQ(languages.status, 200) << languages.body;
  EXPECT_EQ(languages.json(), nlohmann::json::parse(R"([{"code": "en", "name": "English", "targets": ["fr"]},
                                                        {"code": "fr", "name": "French", "targets": []}])"));
  const auto settings = request(port, "GET", "/frontend/settings");
  ASSERT_EQ(settings.status, 200);
  EXPECT_EQ(settings.json()["language"]["source"]["code"], "en");
  EXPECT_EQ(settings.json()["language"]["target"]["code"], "fr");
  EXPECT_EQ(settings.json()["keyRequired"], false);

  // A form, as libretranslatepy sends it: the translation `nmt translate` gives.
  const auto offline = run_command(nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() + " --input " + sources());
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  const auto expected = nmt::test::lines_of(offline.out);
  const auto one = post_form(port, "/translate", {{"q", kSources[0]}, {"source", "en"}, {"target", "fr"}, {"format", "text"}});
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(one.json(), (nlohmann::json{{"translatedText", expected[0]}}));
  // JSON with a list; alternatives; "auto" (the model's source language, not detected).
  const auto list = request(port, "POST", "/translate",
                            nlohmann::json{{"q", {kSources[0], kSources[1]}}, {"source", "auto"}, {"target", "fr"}}.dump());
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(list.json()["translatedText"], (nlohmann::json{expected[0], expected[1]}));
  EXPECT_EQ(list.json()["detectedLanguage"][1], (nlohmann::json{{"confidence", 0}, {"language", "en"}}));
  const auto alternatives =
      post_form(port, "/translate", {{"q", kSources[0]}, {"source", "en"}, {"target", "fr"}, {"alternatives", "2"}});
  ASSERT_EQ(alternatives.status, 200) << alternatives.body;
  EXPECT_TRUE(alternatives.json()["alternatives"].is_array());
  EXPECT_LE(alternatives.json()["alternatives"].size(), 2u);
  // format html: the tags come back.
  const auto html = post_form(port, "/translate",
                              {{"q", "<p>A <b>man</b> is riding a bicycle.</p>"}, {"source", "en"}, {"target", "fr"}, {"format", "html"}});
  ASSERT_EQ(html.status, 200) << html.body;
  const std::string tagged = html.json()["translatedText"];
  for (const char* tag : {"<p>", "</p>", "<b>", "</b>"}) EXPECT_NE(tagged.find(tag), std::string::npos) << tagged;
  // A page: read by an HTML5 parser, its script and code kept, its text translated.
  const std::string page = "<html><body><h1>" + kSources[1] + "</h1><script>var s = \"Hello.\";</script>"
                           "<p>Run <code>nmt serve</code> now.</p></body></html>";
  const auto translated_page = post_form(port, "/translate", {{"q", page}, {"source", "en"}, {"target", "fr"}, {"format", "html"}});
  ASSERT_EQ(translated_page.status, 200) << translated_page.body;
  const std::string fr = translated_page.json()["translatedText"];
  EXPECT_NE(fr.find("<script>var s = \"Hello.\";</script>"), std::string::npos) << fr;
  EXPECT_NE(fr.find("<code>nmt serve</code>"), std::string::npos) << fr;
  EXPECT_NE(fr.find("<h1>" + expected[1] + "</h1>"), std::string::npos) << fr;
  EXPECT_EQ(post_form(port, "/translate", {{"q", "<p>caf\xc3</p>"}, {"source", "en"}, {"target", "fr"}, {"format", "html"}})
                .status,
            400);
  // A long text in a form (cpp-httplib's own limit for forms is 8 KB).
  std::string paragraph;
  while (paragraph.size() < 20000) paragraph += kSources[1] + " ";
  EXPECT_EQ(post_form(port, "/translate", {{"q", paragraph}, {"source", "en"}, {"target", "fr"}}).status, 200);

  // LibreTranslate's errors, word for word.
  const std::vector<std::pair<std::vector<std::pair<std::string, std::string>>, std::string>> refused = {
      {{{"source", "en"}, {"target", "fr"}}, "Invalid request: missing q parameter"},
      {{{"q", "Hi"}, {"target", "fr"}}, "Invalid request: missing source parameter"},
      {{{"q", "Hi"}, {"source", "en"}}, "Invalid request: missing target parameter"},
      {{{"q", "Hi"}, {"source", "en"}, {"target", "zz"}}, "zz is not supported"},
      {{{"q", "Hi"}, {"source", "zz"}, {"target", "fr"}}, "zz is not supported"},
      {{{"q", "Hi"}, {"source", "en"}, {"target", "fr"}, {"format", "xml"}}, "xml format is not supported"},
      {{{"q", "Hi"}, {"source", "en"}, {"target", "fr"}, {"alternatives", "abc"}},
       "Invalid request: alternatives parameter is not a number"}};
  for (const auto& [fields, message] : refused) {
    const auto r = post_form(port, "/translate", fields);
    EXPECT_EQ(r.status, 400) << message;
    EXPECT_EQ(r.json(), (nlohmann::json{{"error", message}}));
  }
  const auto not_object = request(port, "POST", "/translate", R"({"q": []})");
  EXPECT_EQ(not_object.json(), (nlohmann::json{{"error", "Invalid request: missing q parameter"}}));
}

TEST_F(Serve, LibreTranslateClientsSendTheirKeyInTheForm) {
  nmt::test::write_bytes(file("lt-key"), "s3cret-key\n");
  ServerProcess server("-m " + model() + " --api-key-file " + file("lt-key") + " -q", file("lt-key.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const std::vector<std::pair<std::string, std::string>> hi = {{"q", "Hi"}, {"source", "en"}, {"target", "fr"}};
  auto with = [&](const std::string& key) {
    auto fields = hi;
    fields.push_back({"api_key", key});
    return post_form(server.port(), "/translate", fields);
  };
  const auto none = post_form(server.port(), "/translate", hi);
  EXPECT_EQ(none.status, 400);
  EXPECT_EQ(none.json(), (nlohmann::json{{"error", "Please contact the server operator to get an API key"}}));
  const auto wrong = with("s3cret");
  EXPECT_EQ(wrong.status, 403);
  EXPECT_EQ(wrong.json(), (nlohmann::json{{"error", "Invalid API key"}}));
  EXPECT_EQ(with("s3cret-key").status, 200);
  EXPECT_EQ(post_form(server.port(), "/translate", hi, "Authorization: Bearer s3cret-key\r\n").status, 200);
  // What a client reads before it has a key is open, as in LibreTranslate; nmt's own API is not.
  EXPECT_EQ(request(server.port(), "GET", "/languages").status, 200);
  EXPECT_EQ(request(server.port(), "GET", "/frontend/settings").json()["keyRequired"], true);
  EXPECT_EQ(request(server.port(), "POST", "/translate", R"({"text": "Hi", "api_key": "s3cret-key"})").status, 401);
}

TEST_F(Serve, TranslatesOptionsAreRequestFieldsAndGiveWhatTranslateGives) {
  ServerProcess server("-m " + model() + " -q", file("options.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string source = kSources[5];
  nmt::test::write_bytes(file("one.txt"), source + "\n");
  nmt::test::write_bytes(file("one-prefix.txt"), source + "\tUn\n");
  auto cli = [&](const std::string& options, const std::string& input = "one.txt") {
    const auto r = run_command(nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() + " --input " +
                               file(input) + " " + options);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return lines_of(r.out).at(0);
  };
  auto served = [&](nlohmann::json body) {
    body["text"] = source;
    const auto r = translate(server.port(), body);
    EXPECT_EQ(r.status, 200) << r.body;
    return r.json();
  };
  EXPECT_EQ(served({{"beam", 3}, {"alpha", 1.0}, {"length_penalty", "average"}, {"max_len_b", 3}})["translation"],
            cli("--beam 3 --alpha 1.0 --length-penalty average --max-len-b 3"));
  EXPECT_EQ(served({{"no_repeat_ngram", 1}})["translation"], cli("--no-repeat-ngram 1"));
  // Sampling with a seed: what the command samples, and again the same, whoever else asks.
  const auto sampled = served({{"sampling", "top-k:5"}, {"seed", 7}, {"temperature", 1.5}})["translation"];
  EXPECT_EQ(sampled, cli("--sampling top-k:5 --seed 7 --temperature 1.5"));
  EXPECT_EQ(served({{"sampling", "top-k:5"}, {"seed", 7}, {"temperature", 1.5}})["translation"], sampled);
  const auto prefixed = served({{"prefix", "Un"}})["translation"].get<std::string>();
  EXPECT_EQ(prefixed, cli("--prefix-tab", "one-prefix.txt"));
  EXPECT_EQ(prefixed.rfind("Un", 0), 0u) << prefixed;
  const std::string with_links = cli("--alignment");
  EXPECT_EQ(served({{"alignment", true}})["alignment"], with_links.substr(with_links.find(" ||| ") + 5));

  const std::vector<std::pair<nlohmann::json, std::string>> refused = {
      {{{"alpha", "high"}}, "\"alpha\""},
      {{{"length_penalty", "loud"}}, "\"length_penalty\""},
      {{{"sampling", "bogus"}}, "\"sampling\" is 'bogus'"},
      {{{"sampling", "top-k:5"}, {"beam", 3}}, "\"sampling\""},
      {{{"temperature", 0.5}}, "\"temperature\" applies to \"sampling\" only"},
      {{{"batch_size", 4}}, "unknown field \"batch_size\""},
      {{{"alignment", "yes"}}, "\"alignment\" must be true or false"},
      {{{"prefix", 3}}, "\"prefix\" must be a string"}};
  for (auto [body, words] : refused) {
    body["text"] = source;
    const auto r = translate(server.port(), body);
    EXPECT_EQ(r.status, 400) << body.dump();
    EXPECT_NE(r.json()["error"].get<std::string>().find(words), std::string::npos) << r.body;
  }
}

// The words of the spans marked data-SIDE="N" in a page's DOM, in order; `lit`: only those
// highlighted.
std::vector<std::string> words_in_dom(const std::string& dom, char side, bool lit) {
  const std::regex span(std::string("<span class=\"w( lit)?\" data-") + side + "=\"[0-9]+\">([^<]*)</span>");
  std::vector<std::string> out;
  for (auto it = std::sregex_iterator(dom.begin(), dom.end(), span); it != std::sregex_iterator(); ++it)
    if (!lit || (*it)[1].matched) out.push_back((*it)[2]);
  return out;
}

TEST_F(Serve, ThePageTranslatesAndShowsTheAlignmentInARealBrowser) {
  nmt::test::write_bytes(file("page-key"), "page-key\n");
  ServerProcess server("-m " + model() + " -q --api-key-file " + file("page-key"), file("page.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const auto page = request(server.port(), "GET", "/");  // the page itself needs no key
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.headers.find("Content-Type: text/html"), std::string::npos);
  const std::regex outside(R"((src|href)\s*=\s*["']?(https?:)?//)");
  EXPECT_FALSE(std::regex_search(page.body, outside)) << "the page loads nothing from elsewhere";

  const std::string chromium = std::filesystem::exists("/usr/bin/chromium") ? "/usr/bin/chromium" : "";
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it): browser check skipped";
  ServerProcess open_server("-m " + model() + " -q", file("page-open.log"));
  ASSERT_GT(open_server.port(), 0) << open_server.log();
  const std::string source = kSources[1];
  auto r = run_command("timeout 120 " + chromium +
                       " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
                       " --virtual-time-budget=20000 --dump-dom 'http://127.0.0.1:" + std::to_string(open_server.port()) +
                       "/?q=" + form_encoded({{"", source}}).substr(1) + "&hover=1' 2>/dev/null");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_NE(r.out.find("data-translated=\"yes\""), std::string::npos) << r.out;
  nmt::test::write_bytes(file("page-source.txt"), source + "\n");
  const auto offline = run_command(nmt::test::nmt_binary() + " translate -q --threads 1 -m " + model() +
                                   " --alignment --input " + file("page-source.txt"));
  ASSERT_EQ(offline.exit_code, 0) << offline.err;
  const std::string line = lines_of(offline.out).at(0);
  std::istringstream translation(line.substr(0, line.find(" ||| ")));
  EXPECT_EQ(words_in_dom(r.out, 't', false), (std::vector<std::string>{std::istream_iterator<std::string>(translation), {}}));
  // Pointing at target word 1 lights it and the source words aligned with it.
  std::vector<std::string> expected_source;
  std::istringstream links(line.substr(line.find(" ||| ") + 5)), source_words(source);
  std::vector<std::string> all_source{std::istream_iterator<std::string>(source_words), {}};
  for (std::string link; links >> link;)
    if (std::stoi(link.substr(link.find('-') + 1)) == 1) expected_source.push_back(all_source.at(std::stoi(link)));
  EXPECT_EQ(words_in_dom(r.out, 's', true), expected_source);
  EXPECT_EQ(words_in_dom(r.out, 't', true).size(), 1u);
}

TEST_F(Serve, AStreamedTranslationComesSentenceBySentenceAsServerSentEvents) {
  ServerProcess server("-m " + model() + " -q", file("stream.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const std::string text = kSources[1] + "  " + kSources[2] + "\n\n" + kSources[3];
  const auto whole = translate(server.port(), {{"text", text}});
  ASSERT_EQ(whole.status, 200) << whole.body;
  const auto streamed = translate(server.port(), {{"text", text}, {"stream", true}});
  ASSERT_EQ(streamed.status, 200) << streamed.body;
  EXPECT_NE(streamed.headers.find("Content-Type: text/event-stream"), std::string::npos) << streamed.headers;
  // The body is chunked: the events are found whole in it, in order.
  const std::regex event_re("event: ([a-z]+)\r?\ndata: ([^\r\n]*)");
  std::vector<std::pair<std::string, nlohmann::json>> events;
  for (auto it = std::sregex_iterator(streamed.body.begin(), streamed.body.end(), event_re); it != std::sregex_iterator(); ++it)
    events.emplace_back((*it)[1], nlohmann::json::parse((*it)[2].str()));
  ASSERT_EQ(events.size(), 4u) << streamed.body;
  std::string joined;
  for (size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(events[i].first, "sentence");
    EXPECT_EQ(events[i].second["index"], i);
    EXPECT_EQ(events[i].second["source"], kSources[i + 1]);
    joined += events[i].second["before"].get<std::string>() + events[i].second["translation"].get<std::string>();
  }
  EXPECT_EQ(events[3].first, "done");
  EXPECT_EQ(events[3].second["sentences"], 3);
  joined += events[3].second["after"].get<std::string>();
  EXPECT_EQ(joined, whole.json()["translation"]);
  EXPECT_EQ(translate(server.port(), {{"text", {"a", "b"}}, {"stream", true}}).status, 400);
}

TEST_F(Serve, MetricsArePrometheusTextCountingRequestsSentencesAndLatency) {
  ServerProcess server("-m " + model() + " -q", file("metrics.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  ASSERT_EQ(translate(server.port(), {{"text", {kSources[0], kSources[1]}}}).status, 200);
  ASSERT_EQ(request(server.port(), "GET", "/no-such-path").status, 404);
  const auto m = request(server.port(), "GET", "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.headers.find("Content-Type: text/plain; version=0.0.4"), std::string::npos) << m.headers;
  // Every line a comment or NAME{LABELS} VALUE, as Prometheus' text format has it.
  const std::regex sample(R"(^[a-z_]+(\{[a-z]+="[^"]*"(,[a-z]+="[^"]*")*\})? [0-9.e+-]+$)");
  for (const auto& line : lines_of(m.body)) {
    if (line.rfind("# ", 0) != 0) {
      EXPECT_TRUE(std::regex_match(line, sample)) << line;
    }
  }
  for (const char* expected : {"nmt_requests_total{path=\"/translate\",status=\"200\"} 1\n",
                               "nmt_requests_total{path=\"other\",status=\"404\"} 1\n", "nmt_sentences_total 2\n",
                               "nmt_queue_sentences 0\n", "nmt_request_duration_seconds_count 2\n",
                               "nmt_request_duration_seconds_bucket{le=\"+Inf\"} 2\n"})
    EXPECT_NE(m.body.find(expected), std::string::npos) << expected << m.body;
}

TEST_F(Serve, CorsLetsTheNamedOriginsReadTheAnswers) {
  ServerProcess server("-m " + model() + " -q --cors https://a.example,https://b.example", file("cors.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  const auto from_b = request(server.port(), "GET", "/health", "", "Origin: https://b.example\r\n");
  EXPECT_NE(from_b.headers.find("Access-Control-Allow-Origin: https://b.example"), std::string::npos) << from_b.headers;
  const auto from_c = request(server.port(), "GET", "/health", "", "Origin: https://c.example\r\n");
  EXPECT_EQ(from_c.headers.find("Access-Control-Allow-Origin"), std::string::npos) << from_c.headers;
  const auto preflight = request(server.port(), "OPTIONS", "/translate", "",
                                 "Origin: https://a.example\r\nAccess-Control-Request-Method: POST\r\n");
  EXPECT_EQ(preflight.status, 204);
  EXPECT_NE(preflight.headers.find("Access-Control-Allow-Methods: GET, POST, OPTIONS"), std::string::npos);
  EXPECT_NE(preflight.headers.find("Access-Control-Allow-Origin: https://a.example"), std::string::npos);
  // Without --cors, no answer says any origin may read it.
  ServerProcess plain("-m " + model() + " -q", file("no-cors.log"));
  ASSERT_GT(plain.port(), 0) << plain.log();
  EXPECT_EQ(request(plain.port(), "GET", "/health", "", "Origin: https://a.example\r\n").headers.find("Access-Control"),
            std::string::npos);
}

TEST_F(Serve, SigtermFinishesTheRequestsInFlightThenExitsZero) {
  ServerProcess server("-m " + model(), file("stop.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  // A request long enough to be in flight when the signal comes.
  nlohmann::json big = {{"text", std::vector<std::string>(300, kSources[5])}, {"beam", 4}};
  HttpReply reply;
  std::thread client([&] { reply = translate(server.port(), big); });
  for (auto deadline = std::chrono::steady_clock::now() + 30s;
       std::chrono::steady_clock::now() < deadline && request(server.port(), "GET", "/health").json()["batches"] == 0;)
    std::this_thread::sleep_for(10ms);
  EXPECT_EQ(server.stop(SIGTERM), 0) << server.log();
  client.join();
  ASSERT_EQ(reply.status, 200) << "the request in flight is answered";
  EXPECT_EQ(reply.json()["translation"].size(), 300u);
  EXPECT_LT(connect_to(server.port()), 0) << "no longer accepting";
  EXPECT_NE(server.log().find("stopped after"), std::string::npos) << server.log();
}

TEST_F(Serve, SigintStopsToo) {
  ServerProcess server("-m " + model() + " -q", file("int.log"));
  ASSERT_GT(server.port(), 0) << server.log();
  EXPECT_EQ(server.stop(SIGINT), 0) << server.log();
}

TEST_F(Serve, BadOptionsAndABusyPortAreErrorsBeforeServing) {
  ServerProcess first("-m " + model() + " -q", file("first.log"));
  ASSERT_GT(first.port(), 0);
  auto busy = run_command(nmt::test::nmt_binary() + " serve -m " + model() + " --port " + std::to_string(first.port()));
  EXPECT_EQ(busy.exit_code, 1);
  EXPECT_NE(busy.err.find(std::to_string(first.port())), std::string::npos) << busy.err;
  auto bad = run_command(nmt::test::nmt_binary() + " serve -m " + model() + " --max-batch 0");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--max-batch"), std::string::npos) << bad.err;
  auto twice = run_command(nmt::test::nmt_binary() + " serve -m " + model() + " -m " + model() + "/");
  EXPECT_EQ(twice.exit_code, 2);
  EXPECT_NE(twice.err.find("tiny-model"), std::string::npos) << twice.err;
}

}  // namespace
