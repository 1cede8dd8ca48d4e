#include "nmt/serve/batcher.h"

#include <algorithm>

namespace nmt::serve {

// One request's state. After submit() it is touched only under the batcher's mutex (a large
// request's sentences may be decoded by several workers at once).
struct Batcher::Request {
  std::vector<Sentence> sentences;
  std::vector<Nbest> results;
  size_t remaining = 0;
  bool failed = false;
  std::promise<std::vector<Nbest>> promise;
};

Batcher::Batcher(DecodeFunction decode, BatcherOptions options) : decode_(std::move(decode)), options_(std::move(options)) {
  if (options_.max_batch == 0) options_.max_batch = 1;
  if (options_.workers == 0) options_.workers = 1;
  for (size_t i = 0; i < options_.workers; ++i) threads_.emplace_back([this] { run(); });
}

Batcher::~Batcher() { stop(); }

std::future<std::vector<Nbest>> Batcher::submit(const DecodeKey& key, std::vector<Sentence> sentences) {
  auto request = std::make_shared<Request>();
  auto future = request->promise.get_future();
  if (sentences.empty()) {
    request->promise.set_value({});
    return future;
  }
  request->remaining = sentences.size();
  request->results.resize(sentences.size());
  request->sentences = std::move(sentences);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) throw BatcherStopped();
    const auto now = std::chrono::steady_clock::now();
    auto& queue = queues_[key];
    for (size_t i = 0; i < request->sentences.size(); ++i) queue.push_back(Piece{request, i, now});
    queued_total_ += request->sentences.size();
  }
  queued_.notify_one();
  return future;
}

void Batcher::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  queued_.notify_all();
  std::lock_guard<std::mutex> joining(join_mutex_);  // a second stop() waits for the first's joins
  for (auto& t : threads_)
    if (t.joinable()) t.join();
}

BatcherStats Batcher::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  BatcherStats s = stats_;
  s.queued = queued_total_;
  return s;
}

void Batcher::run() {
  if (options_.on_thread_start) options_.on_thread_start();
  DecodeKey key;
  std::vector<Piece> batch;
  while (next_batch(key, batch)) {
    const size_t answered = decode_batch(key, batch);
    std::lock_guard<std::mutex> lock(mutex_);
    answered_ = answered;
    queued_.notify_all();  // an idle worker may now take what came back
  }
}

bool Batcher::next_batch(DecodeKey& key, std::vector<Piece>& batch) {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (queues_.empty()) {
      if (stopping_) return false;
      queued_.wait(lock);
      continue;
    }
    // The key whose oldest sentence has waited longest goes first.
    auto oldest = std::min_element(queues_.begin(), queues_.end(), [](const auto& a, const auto& b) {
      return a.second.front().queued < b.second.front().queued;
    });
    auto& queue = oldest->second;
    // The window opens at the first arrival, or at the end of the previous batch if later: the
    // clients just answered come back within it and join the sentences that queued meanwhile.
    // Timed from the arrival only, 64 clients settled into two cohorts of ~32 that took turns,
    // each decoded while the other waited (measured: 21 batches of 33 on average, 64 req/s,
    // with 64 wrk connections on 2 busy cores; a batch of 64 costs little more than one of 32).
    const auto due = std::max(queue.front().queued, last_batch_end_) + options_.wait;
    // Once as many sentences have arrived as the last batch answered requests, those clients
    // are probably all back (one client: its next sentence), and waiting longer gains nothing.
    const bool all_back = answered_ > 0 && queued_total_ >= queued_at_end_ + answered_;
    if (stopping_ || all_back || queue.size() >= options_.max_batch || std::chrono::steady_clock::now() >= due) {
      const size_t n = std::min(queue.size(), options_.max_batch);
      key = oldest->first;
      batch.assign(std::make_move_iterator(queue.begin()), std::make_move_iterator(queue.begin() + static_cast<std::ptrdiff_t>(n)));
      queue.erase(queue.begin(), queue.begin() + static_cast<std::ptrdiff_t>(n));
      if (queue.empty()) queues_.erase(oldest);
      queued_total_ -= n;
      answered_ = 0;
      stats_.batches += 1;
      stats_.sentences += n;
      // submit() woke one worker; what it left (a full batch, or the start of a window) is
      // another idle worker's to take or to time.
      if (queued_total_ > 0) queued_.notify_one();
      return true;
    }
    queued_.wait_until(lock, due);
  }
}

size_t Batcher::decode_batch(const DecodeKey& key, std::vector<Piece>& batch) {
  std::vector<Sentence> sentences;
  sentences.reserve(batch.size());
  for (const auto& p : batch) sentences.push_back(p.request->sentences[p.index]);
  std::vector<Nbest> out;
  std::exception_ptr error;
  try {
    out = decode_(key, sentences);
    if (out.size() != batch.size()) throw std::logic_error("the decoder returned a wrong number of translations");
  } catch (...) {
    error = std::current_exception();
  }
  // Before anyone is answered: a client may send again before this thread takes another step,
  // and its sentence must count as one coming back.
  std::lock_guard<std::mutex> lock(mutex_);
  last_batch_end_ = std::chrono::steady_clock::now();
  queued_at_end_ = queued_total_;
  size_t answered = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    Request& r = *batch[i].request;
    if (r.failed) continue;
    if (error) {
      r.failed = true;
      r.promise.set_exception(error);
      ++answered;
      continue;
    }
    r.results[batch[i].index] = std::move(out[i]);
    if (--r.remaining == 0) {
      r.promise.set_value(std::move(r.results));
      ++answered;
    }
  }
  batch.clear();  // releases the requests of answered futures now, not at the next batch
  return answered;
}

}  // namespace nmt::serve
