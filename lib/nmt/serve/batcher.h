#pragma once
// Dynamic batching for `nmt serve`: request threads queue sentences, one decoding thread takes
// them in batches. Decoding a batch of 64 sentences costs little more than decoding one (the
// matrix products are wider, not more numerous), so many clients sending one sentence each
// approach the offline throughput only when their sentences share batches. Torch-free: the
// decoding itself is a function given by the caller, so the queue is tested without a model.
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "nmt/decode/translation_result.h"
#include "nmt/text/lexical_constraints.h"

namespace nmt::serve {

// What sentences are decoded with; only sentences with equal keys share a batch.
struct DecodeKey {
  std::string model;
  int beam = 1;
  int nbest = 1;
  bool constrained = false;  // phrases must appear: beam search even for a beam of one
  bool markup = false;       // the texts carry inline tags (text/markup.h), put back after translation
  bool alignment = false;    // each answer has its word alignment
  // The request's own search options (decode/search_options.h) as a JSON object of the keys it
  // set, "" for none: the server's options with these.
  std::string search = std::string();
  // Nonzero: a batch of this request's sentences alone (sampling: a seed then draws what it
  // draws for the request alone, whoever else is asking).
  uint64_t alone = 0;
  auto fields() const { return std::tie(model, beam, nbest, constrained, markup, alignment, search, alone); }
  bool operator<(const DecodeKey& o) const { return fields() < o.fields(); }
  bool operator==(const DecodeKey& o) const { return fields() == o.fields(); }
};

// One sentence to translate, with the phrases its translation must contain and avoid, and the
// target text it must start with ("": none).
struct Sentence {
  std::string text;
  text::PhraseConstraints constraints;
  std::string prefix;
  Sentence(std::string t, text::PhraseConstraints c = {}) : text(std::move(t)), constraints(std::move(c)) {}
  Sentence(const char* t) : text(t) {}
};

// A sentence's translations, best first, as every front end reports them (decode/translation_result.h).
using decode::Nbest;
using decode::TranslationResult;

// Decodes one batch: one Nbest per sentence, in order. May throw; the error goes to every
// request with a sentence in that batch.
using DecodeFunction = std::function<std::vector<Nbest>(const DecodeKey&, const std::vector<Sentence>&)>;

struct BatcherOptions {
  size_t max_batch = 64;                       // sentences per decoding batch
  // How long a sentence may wait for others to share its batch: after it arrived, and after the
  // previous batch ended, unless as many sentences as that batch answered requests have come
  // (see Batcher::next_batch).
  std::chrono::microseconds wait{10000};
  // Decoding threads, each taking its own batches (CTranslate2's inter_threads): while one
  // decodes the long tail of a batch, few rows wide, another decodes a full one.
  size_t workers = 1;
  // Runs on each decoding thread before it decodes anything (e.g. its LibTorch thread settings).
  std::function<void()> on_thread_start;
};

// Thrown by submit() once stop() has begun.
class BatcherStopped : public std::runtime_error {
 public:
  BatcherStopped() : std::runtime_error("the server is shutting down") {}
};

struct BatcherStats {
  size_t batches = 0;
  size_t sentences = 0;
  size_t queued = 0;  // sentences waiting for a batch now
};

class Batcher {
 public:
  Batcher(DecodeFunction decode, BatcherOptions options);
  ~Batcher();  // stop()
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Queues one request's sentences; the future gives one Nbest per sentence, in order, or the
  // decoding error. An empty request is answered at once.
  std::future<std::vector<Nbest>> submit(const DecodeKey& key, std::vector<Sentence> sentences);

  // Refuses new requests, decodes everything already queued (without waiting for more), and
  // joins the decoding threads. Idempotent, and safe from several threads at once.
  void stop();

  BatcherStats stats() const;

 private:
  struct Request;
  struct Piece {  // one sentence of one request
    std::shared_ptr<Request> request;
    size_t index;
    std::chrono::steady_clock::time_point queued;
  };
  void run();
  // Waits for a batch to be due and takes it out of the queue; false when stopping with nothing left.
  bool next_batch(DecodeKey& key, std::vector<Piece>& batch);
  // Decodes and answers; returns how many requests it answered (completed or failed).
  size_t decode_batch(const DecodeKey& key, std::vector<Piece>& batch);

  DecodeFunction decode_;
  BatcherOptions options_;
  mutable std::mutex mutex_;
  std::condition_variable queued_;
  std::map<DecodeKey, std::deque<Piece>> queues_;  // per key, oldest first
  bool stopping_ = false;
  BatcherStats stats_;
  size_t queued_total_ = 0;  // sentences queued, all keys
  std::chrono::steady_clock::time_point last_batch_end_{};
  size_t answered_ = 0;       // requests the last batch answered (0 once the next is taken)
  size_t queued_at_end_ = 0;  // queued_total_ when it ended
  std::vector<std::thread> threads_;
  std::mutex join_mutex_;  // stop() on two threads at once (the server's and its owner's) joins once
};

}  // namespace nmt::serve
