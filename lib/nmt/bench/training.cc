// `nmt bench train` and `nmt bench init`: a preset's model on a corpus encoded as nmt train
// encodes it; training timed over fixed batches, or the fresh model written out.
#include <torch/torch.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "nmt/bench/bench.h"
#include "nmt/bench/measure.h"
#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/kernels/fused_switch.h"
#include "nmt/models/flops.h"
#include "nmt/models/model.h"
#include "nmt/models/model_io.h"
#include "nmt/tensor/batch.h"
#include "nmt/tensor/device.h"
#include "nmt/tensor/threads.h"
#include "nmt/text/subword.h"
#include "nmt/train/encoded_set.h"
#include "nmt/train/step.h"
#include "nmt/util/allocator.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::bench {

namespace {

// Options (vocabularies set from the subword model), corpus encoded with the subword model, and
// the subword model's bytes.
struct EncodedCorpus {
  train::TrainOptions options;
  std::vector<text::TokenIds> src, tgt;
  std::vector<data::ExampleLength> lengths;
  std::string spm_bytes;
};

EncodedCorpus encode_corpus(const train::TrainOptions& options, const std::string& spm) {
  EncodedCorpus c;
  c.options = options;
  if (c.options.train_prefix.empty()) throw OptionError("train_prefix", " is required");
  auto corpus = data::read_parallel(c.options.train_prefix, c.options.src_lang, c.options.tgt_lang).corpus;
  // The subword model and encoding nmt train makes (vocabulary, type, seed; long pairs left out).
  c.spm_bytes = spm.empty() ? text::SubwordModel::train_serialized(train::joint_sentences(corpus),
                                                                   train::subword_options(c.options))
                            : read_file(spm);
  auto sp = text::SubwordModel::load_from_serialized(c.spm_bytes, spm.empty() ? "trained subword model" : spm);
  c.options.model.src_vocab = c.options.model.tgt_vocab = sp.vocab_size();
  c.options.model.shared_vocab = true;
  size_t dropped = 0;
  train::EncodedSet set =
      train::encode_set(corpus, text::SubwordPair::joint(sp), c.options.model.max_positions - 1, true, &dropped);
  c.src = std::move(set.src);
  c.tgt = std::move(set.tgt);
  c.lengths = std::move(set.lengths);
  return c;
}

nlohmann::json model_config_json(const train::TrainOptions& o) {
  return models::model_directory_config(o.model.to_json(), o.to_json());
}

// The first `count` batches in training order (epoch 0 of the shuffled plan), the same for nmt
// and the reference, on `device`; written as JSON lines to `dump_path` when given.
std::vector<Batch> first_batches(const EncodedCorpus& c, size_t count, const torch::Device& device,
                                 const std::string& dump_path) {
  data::BatchOptions bo;
  bo.max_tokens = static_cast<size_t>(c.options.max_tokens);
  bo.seed = c.options.seed;
  const auto plan = data::plan_batches(c.lengths, bo, 0);
  if (plan.size() < count) throw UsageError(fmt::format("the corpus gives {} batches; {} needed", plan.size(), count));
  std::ofstream dump;
  if (!dump_path.empty()) {
    dump.open(dump_path, std::ios::binary | std::ios::trunc);
    if (!dump) throw RuntimeError(fmt::format("{}: cannot write", dump_path));
  }
  std::vector<Batch> batches;
  for (size_t b = 0; b < count; ++b) {
    std::vector<const text::TokenIds*> s, t;
    nlohmann::json j = {{"src", nlohmann::json::array()}, {"tgt", nlohmann::json::array()}};
    for (size_t i : plan[b]) {
      s.push_back(&c.src[i]);
      t.push_back(&c.tgt[i]);
      if (dump) j["src"].push_back(c.src[i]), j["tgt"].push_back(c.tgt[i]);
    }
    batches.push_back(to_device(make_batch(s, t), device));
    if (dump) dump << j.dump() << '\n';
  }
  return batches;
}

// What the timed updates did: tokens (both sides), matrix-product work, loss, time.
struct TimedUpdates {
  int64_t tokens = 0, tgt_tokens = 0;
  double flops = 0, loss_per_token = 0, seconds = 0;
};

// The updates on batches first, first + 1, ... of `all`, timed (the ones before warm up).
TimedUpdates time_updates(models::Seq2SeqModelImpl& model, torch::optim::Adam& optimizer,
                          const std::vector<torch::Tensor>& params, const std::vector<Batch>& all, size_t first,
                          const train::TrainOptions& o, const torch::Device& device) {
  TimedUpdates u;
  torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
  synchronize(device);
  reset_peak_gpu_memory(device);
  const auto t0 = BenchClock::now();
  for (size_t i = first; i < all.size(); ++i) {
    const Batch& b = all[i];
    auto r = train::train_step(model, optimizer, params, b, o, o.lr);
    loss_sum += r.sums.loss.to(torch::kDouble);
    u.tokens += b.src_tokens + b.tgt_tokens;
    u.tgt_tokens += b.tgt_tokens;
    u.flops += 3 * models::forward_matmul_flops(o.model, b.size(), b.src.size(1), b.tgt_in.size(1));
  }
  synchronize(device);
  u.seconds = seconds_since(t0);
  u.loss_per_token = loss_sum.item<double>() / std::max<int64_t>(u.tgt_tokens, 1);
  return u;
}

}  // namespace

nlohmann::json measure_training(const train::TrainOptions& options, const ModelRecipe& recipe,
                                const TrainBenchOptions& bench) {
  kernels::set_fused_training_kernels(!bench.unfused);
  set_threads(options.threads);
  keep_freed_memory_for_reuse();  // as nmt train does
  const torch::Device device = resolve_device(options.device);
  if (options.bf16 && !device.is_cuda())
    throw OptionError(std::vector<std::string>{"bf16", "device"}, "{0} needs a CUDA device ({1} cuda)");
  torch::manual_seed(static_cast<uint64_t>(options.seed));
  const EncodedCorpus c = encode_corpus(options, recipe.spm);
  const train::TrainOptions& o = c.options;
  const std::vector<Batch> batches =
      first_batches(c, static_cast<size_t>(bench.warmup + bench.steps), device, bench.dump_batches);
  if (!bench.dump_config.empty()) write_file_atomic(bench.dump_config, model_config_json(o).dump(2) + "\n");

  auto model = models::make_model(o.model);
  model->to(device);
  model->train();
  auto params = model->parameters();
  auto optimizer = train::make_optimizer(params, o);
  for (int64_t i = 0; i < bench.warmup; ++i) train::train_step(*model, optimizer, params, batches[i], o, o.lr);
  const TimedUpdates u = time_updates(*model, optimizer, params, batches, static_cast<size_t>(bench.warmup), o, device);
  return {{"impl", "nmt"}, {"fused", !bench.unfused}, {"model", o.model.type}, {"preset", recipe.preset},
          {"steps", bench.steps}, {"device", device.str()}, {"bf16", o.bf16}, {"peak_gpu_mb", peak_gpu_mb(device)},
          {"seconds", u.seconds}, {"tokens", u.tokens}, {"tokens_per_s", u.tokens / u.seconds},
          {"matmul_flops", u.flops}, {"gflops", u.flops / u.seconds / 1e9},
          {"parameters", models::count_parameters(*model)}, {"peak_rss_mb", peak_rss_mb()},
          {"final_loss", u.loss_per_token}, {"max_tokens", o.max_tokens}};
}

void write_initialised_model(const train::TrainOptions& options, const ModelRecipe& recipe,
                             const InitBenchOptions& init) {
  torch::manual_seed(static_cast<uint64_t>(options.seed));
  const EncodedCorpus c = encode_corpus(options, recipe.spm);
  std::filesystem::create_directories(init.out_dir);
  write_file_atomic(init.out_dir + "/" + models::kSubwordFile, c.spm_bytes);
  write_file_atomic(init.out_dir + "/" + models::kConfigFile, model_config_json(c.options).dump(2) + "\n");
  auto model = models::make_model(c.options.model);
  models::save_weights(*model, init.out_dir + "/" + models::kWeightsFile);
}

}  // namespace nmt::bench
