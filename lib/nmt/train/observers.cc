#include "nmt/train/observers.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include <fmt/format.h>

#include "nmt/data/batching.h"
#include "nmt/decode/strategy.h"
#include "nmt/decode/greedy.h"
#include "nmt/metrics/bleu.h"
#include "nmt/models/model_io.h"
#include "nmt/models/weights_file.h"
#include "nmt/tensor/batch.h"
#include "nmt/tensor/device.h"
#include "nmt/train/loss.h"
#include "nmt/util/error.h"

namespace nmt::train {

bool validations_open(const TrainOptions& o, int64_t step) { return step >= o.valid_after; }

bool validates_after_update(const TrainOptions& o, int64_t step) {
  return o.valid_every > 0 && step % o.valid_every == 0 && validations_open(o, step);
}

// ---- Logger

void Logger::update_done(const UpdateInfo& u) {
  const TrainState& s = state_.saved;
  // Summed where the update ran: a copy to the host each update would wait for the GPU's queue
  // to drain; the sums are read only when a line is logged.
  if (loss_sum_.device() != u.sums.loss.device()) {
    loss_sum_ = loss_sum_.to(u.sums.loss.device());
    nll_sum_ = nll_sum_.to(u.sums.nll.device());
  }
  loss_sum_ += u.sums.loss.to(torch::kDouble);
  nll_sum_ += u.sums.nll.to(torch::kDouble);
  window_tokens_ += u.tgt_tokens;
  window_src_tokens_ += u.src_tokens;
  window_all_reduce_s_ += u.all_reduce_seconds;
  window_updates_ += 1;
  if (progress_.due()) {
    const double secs = std::chrono::duration<double>(Clock::now() - window_start_).count();
    const double in_epoch = std::chrono::duration<double>(Clock::now() - u.epoch_start).count();
    const double loss = window_tokens_ ? loss_sum_.item<double>() / window_tokens_ : 0.0;
    progress_.show(fmt::format("epoch {} | batch {}/{} | step {} | loss {:.3f} | tok/s {:.0f} | elapsed {} | epoch ETA {}",
                               s.epoch, u.batch_end, u.plan_size, s.step, loss,
                               (window_tokens_ + window_src_tokens_) / std::max(secs, 1e-9),
                               viz::format_duration(state_.elapsed()),
                               viz::eta_text(static_cast<double>(u.batch_end - u.epoch_first_batch),
                                             static_cast<double>(u.plan_size - u.epoch_first_batch), in_epoch)));
  }
  if (o_.log_every <= 0 || s.step % o_.log_every != 0) return;
  const double secs = std::chrono::duration<double>(Clock::now() - window_start_).count();
  const double loss = loss_sum_.item<double>() / window_tokens_, nll = nll_sum_.item<double>() / window_tokens_;
  const double tps = (window_tokens_ + window_src_tokens_) / std::max(secs, 1e-9);
  // On a terminal the live line shows this; the numbers still go to metrics.jsonl.
  if (!progress_.enabled())
    log_(fmt::format("step {} | epoch {} | batch {}/{} | loss {:.3f} | ppl {:.2f} | lr {:.3g} | tok/s {:.0f} | elapsed {}",
                     s.step, s.epoch, u.batch_end, u.plan_size, loss, std::exp(std::min(nll, 50.0)),
                     u.lr, tps, viz::format_duration(state_.elapsed())));
  nlohmann::json event = {{"event", "train"}, {"step", s.step}, {"epoch", s.epoch}, {"train_loss", loss},
                           {"train_nll", nll}, {"lr", u.lr}, {"tokens_per_s", tps}, {"wall_time", state_.elapsed()},
                           {"updates_per_s", window_updates_ / std::max(secs, 1e-9)}};
  if (window_all_reduce_s_ > 0) event["all_reduce_s_per_update"] = window_all_reduce_s_ / window_updates_;
  metrics_.write(event);
  window_all_reduce_s_ = 0;
  window_updates_ = 0;
  loss_sum_.zero_();
  nll_sum_.zero_();
  window_tokens_ = window_src_tokens_ = 0;
  window_start_ = Clock::now();
}

void Logger::validation_done(const ValidationResult& v) {
  const TrainState& s = state_.saved;
  metrics_.write(v.entry);
  log_(fmt::format("validation | step {} | epoch {} | loss {:.3f} | ppl {:.2f}{} | {}", s.step, s.epoch, v.loss, v.ppl,
                   o_.valid_bleu ? fmt::format(" | BLEU {:.2f}", v.bleu) : "",
                   v.improved ? "new best" : fmt::format("no improvement ({}/{})", s.bad_validations,
                                                         o_.patience > 0 ? std::to_string(o_.patience) : "-")));
}

// ---- Validator

void Validator::update_done(const UpdateInfo&) {
  if (validates_after_update(o_, state_.saved.step)) validate();
}

void Validator::epoch_done() {
  if (o_.valid_every <= 0 && validations_open(o_, state_.saved.step)) validate();
}

void Validator::stopped(StopReason reason) {
  if (reason == StopReason::kSignal || reason == StopReason::kNonFinite) return;
  const auto& history = state_.saved.history;
  if (history.empty() || history.back()["step"] != state_.saved.step) validate();
}

void Validator::validate() {
  TrainState& s = state_.saved;
  ValidationResult v = measure();
  // Diverged weights give a NaN loss (and BLEU 0): never a "new best", never saved.
  if (!std::isfinite(v.loss) || !std::isfinite(v.bleu)) {
    const bool loss_bad = !std::isfinite(v.loss);
    const double bad = loss_bad ? v.loss : v.bleu;
    // NaN is shown as "nan" whatever its sign bit: x86's default NaN is negative, and fmt
    // prints it "-nan", which some CPUs' and kernels' results gave and others' did not.
    throw RuntimeError(fmt::format("validation at step {}: the {} is {}; training diverged (try a lower --lr or "
                                   "--clip-norm); the best weights so far and the last good checkpoint are kept in {}",
                                   s.step, loss_bad ? "loss" : "BLEU", std::isnan(bad) ? "nan" : fmt::format("{}", bad),
                                   o_.out_dir));
  }
  const double metric = o_.best_metric == BestMetric::kBleu ? v.bleu : -v.loss;
  v.improved = !s.has_best || metric > s.best;
  if (v.improved) {
    s.best = metric;
    s.has_best = true;
    s.bad_validations = 0;
    models::save_directory_weights(model_, out_.string());
  } else {
    s.bad_validations += 1;
  }
  v.entry = {{"event", "valid"}, {"step", s.step}, {"epoch", s.epoch},
             {"val_loss", v.loss}, {"val_ppl", v.ppl}, {"wall_time", state_.elapsed()}};
  if (o_.valid_bleu) v.entry["val_bleu"] = v.bleu;
  s.history.push_back(v.entry);
  state_.validation_done(v);
}

ValidationResult Validator::measure() {
  ValidationResult r;
  const bool was_training = model_.is_training();
  model_.eval();
  {
    torch::InferenceMode guard;
    data::BatchOptions bo;
    bo.max_tokens = static_cast<size_t>(o_.max_tokens);
    bo.shuffle = false;
    torch::Tensor nll = torch::zeros({}, torch::kDouble);
    int64_t tokens = 0;
    for (const auto& idx : data::plan_batches(valid_.lengths, bo, 0)) {
      std::vector<const text::TokenIds*> s, t;
      for (size_t i : idx) {
        s.push_back(&valid_.src[i]);
        t.push_back(&valid_.tgt[i]);
      }
      Batch b = to_device(make_batch(s, t), device_);
      auto logits = model_.forward(b.src, b.src_mask, b.tgt_in).to(torch::kFloat);
      nll += label_smoothed_loss(logits, b.tgt_out, 0.0).nll.to(torch::kCPU, torch::kDouble);
      tokens += b.tgt_tokens;
    }
    r.loss = nll.item<double>() / static_cast<double>(std::max<int64_t>(tokens, 1));
    r.ppl = std::exp(std::min(r.loss, 50.0));
  }
  if (o_.valid_bleu) {
    decode::SearchOptions search;
    search.beam = o_.valid_beam;
    search.max_len_b = o_.valid_max_len_b;
    std::vector<std::string> out;
    out.reserve(valid_.src.size());
    for (const auto& n : decode::search(model_, valid_.src, decode::decode_options(search), *decode::make_search_strategy(search)))
      out.push_back(n.empty() ? std::string() : target_subwords_.decode(n.front().tokens));
    r.bleu = metrics::BleuScorer().corpus_score(out, {valid_.tgt_text}).score;
  }
  if (was_training) model_.train();
  return r;
}

// ---- Checkpointer

void Checkpointer::update_done(const UpdateInfo&) {
  const int64_t step = state_.saved.step;
  const bool validated = validates_after_update(o_, step);  // saved with the validation
  if (!validated && o_.save_every > 0 && step % o_.save_every == 0) save();
}

void Checkpointer::validation_done(const ValidationResult&) { save(); }

void Checkpointer::stopped(StopReason reason) {
  if (reason != StopReason::kNonFinite && saved_step_ != state_.saved.step) save();
}

void Checkpointer::save() {
  state_.saved.elapsed = state_.elapsed();
  checkpoints_.save(model_, optimizer_, state_.saved, o_.model.type);
  saved_step_ = state_.saved.step;
}

}  // namespace nmt::train
