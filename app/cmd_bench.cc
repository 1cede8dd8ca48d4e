// `nmt bench`: the measurements behind scripts/bench.sh. Each subcommand prints one JSON
// object on stdout, so the script can put nmt and the PyTorch reference side by side.
//   bench matmul     achieved GFLOP/s of square float32 matrix products (the machine's peak)
//   bench train      training tokens/s over fixed batches after warm-up, GFLOP/s, peak RSS
//   bench translate  translation sentences/s and target tokens/s, peak RSS
//   bench init       a model directory with freshly initialised weights (no training)
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "search_flags.h"
#include "train_options.h"
#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/decode/translator.h"
#include "nmt/models/flops.h"
#include "nmt/models/model_io.h"
#include "nmt/quant/int8_gemm.h"
#include "nmt/tensor/batch.h"
#include "nmt/tensor/device.h"
#include "nmt/text/subword.h"
#include "nmt/train/presets.h"
#include "nmt/train/step.h"
#include "nmt/tensor/threads.h"
#include "nmt/train/trainer.h"
#include "nmt/util/allocator.h"
#include "nmt/util/blas.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"

namespace nmt::cli {

namespace {
using Clock = std::chrono::steady_clock;

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct BenchModelArgs {
  std::string preset, train_prefix, src = "en", tgt = "fr", spm;
  int threads = 0;
  int64_t max_tokens = 0;
  uint64_t seed = 1;
};

void add_model_args(CLI::App* cmd, BenchModelArgs& a) {
  cmd->add_option("--preset", a.preset, "Model recipe (see nmt train --preset)")->required();
  cmd->add_option("--train", a.train_prefix, "Parallel corpus PREFIX (PREFIX.src, PREFIX.tgt)")->required();
  cmd->add_option("--src", a.src, "Source language suffix")->capture_default_str();
  cmd->add_option("--tgt", a.tgt, "Target language suffix")->capture_default_str();
  cmd->add_option("--spm", a.spm, "SentencePiece model to use (default: train one on the corpus, as nmt train does)");
  cmd->add_option("--threads", a.threads, "Threads (as nmt train --threads)")->capture_default_str();
  cmd->add_option("--max-tokens", a.max_tokens, "Padded tokens per side per batch (default: the preset's)");
  cmd->add_option("--seed", a.seed, "Random seed")->capture_default_str();
}

// Options, corpus encoded with the subword model, and the subword model's bytes.
struct Prepared {
  train::TrainOptions options;
  std::vector<Ids> src, tgt;
  std::vector<data::ExampleLength> lengths;
  std::string spm_bytes;
};

Prepared prepare(const BenchModelArgs& a) {
  Prepared p;
  with_flag_names([&] { train::apply_preset(a.preset, p.options); });
  if (a.max_tokens > 0) p.options.max_tokens = a.max_tokens;
  p.options.seed = a.seed;
  p.options.threads = a.threads;
  p.options.train_prefix = a.train_prefix;
  p.options.src_lang = a.src;
  p.options.tgt_lang = a.tgt;
  auto corpus = data::read_parallel(a.train_prefix, a.src, a.tgt).corpus;
  // The subword model and encoding nmt train makes (vocabulary, type, seed; long pairs left out).
  p.spm_bytes = a.spm.empty()
                    ? text::SubwordModel::train_serialized(train::joint_sentences(corpus), train::subword_options(p.options))
                    : read_file(a.spm);
  auto sp = text::SubwordModel::load_from_serialized(p.spm_bytes, a.spm.empty() ? "trained subword model" : a.spm);
  p.options.model.src_vocab = p.options.model.tgt_vocab = sp.vocab_size();
  p.options.model.shared_vocab = true;
  size_t dropped = 0;
  train::EncodedSet set =
      train::encode_set(corpus, text::SubwordPair::joint(sp), p.options.model.max_positions - 1, true, &dropped);
  p.src = std::move(set.src);
  p.tgt = std::move(set.tgt);
  p.lengths = std::move(set.lengths);
  return p;
}

nlohmann::json model_config_json(const train::TrainOptions& o) {
  return models::model_directory_config(o.model.to_json(), o.to_json());
}

void add_matmul(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("matmul", "Achieved GFLOP/s of float32 matrix products (best of several sizes)");
  auto threads = std::make_shared<int>(0);
  cmd->add_option("--threads", *threads, "Threads (as nmt train --threads)")->capture_default_str();
  cmd->callback([threads] {
    set_threads(*threads);
    torch::NoGradGuard guard;
    nlohmann::json sizes = nlohmann::json::object();
    double best = 0;
    for (int64_t n : {256, 512, 1024, 2048}) {
      auto a = torch::randn({n, n}), b = torch::randn({n, n});
      for (int i = 0; i < 2; ++i) (void)torch::mm(a, b);
      const int reps = static_cast<int>(std::max<int64_t>(3, (int64_t{1} << 31) / (n * n * n)));
      const auto t0 = Clock::now();
      for (int i = 0; i < reps; ++i) (void)torch::mm(a, b);
      const double gflops = 2.0 * n * n * n * reps / seconds_since(t0) / 1e9;
      sizes[std::to_string(n)] = gflops;
      best = std::max(best, gflops);
    }
    std::cout << nlohmann::json{{"peak_gflops", best}, {"by_size", sizes}, {"threads", *threads},
                                {"blas_core", select_blas_kernels()}}
                     .dump()
              << '\n';
  });
}

void add_train(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("train", "Training tokens/s on fixed batches after warm-up");
  auto a = std::make_shared<BenchModelArgs>();
  auto steps = std::make_shared<int64_t>(10);
  auto warmup = std::make_shared<int64_t>(3);
  auto dump_batches = std::make_shared<std::string>();
  auto dump_config = std::make_shared<std::string>();
  auto device_name = std::make_shared<std::string>("cpu");
  auto bf16 = std::make_shared<bool>(false);
  add_model_args(cmd, *a);
  cmd->add_option("--device", *device_name, "cpu, cuda or cuda:N (as nmt train --device)")->capture_default_str();
  cmd->add_flag("--bf16", *bf16, "bf16 autocast of the forward pass (CUDA; as nmt train --bf16)");
  cmd->add_option("--steps", *steps, "Timed updates")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", *warmup, "Untimed updates first")->capture_default_str();
  cmd->add_option("--dump-batches", *dump_batches,
                  "Write the warm-up + timed batches as JSON lines {\"src\": [[ids]], \"tgt\": [[ids]]} (no BOS/EOS)");
  cmd->add_option("--dump-config", *dump_config, "Write the model's config.json (for the PyTorch reference)");
  cmd->callback([a, steps, warmup, dump_batches, dump_config, device_name, bf16] {
    set_threads(a->threads);
    keep_freed_memory_for_reuse();  // as nmt train does
    const torch::Device device = resolve_device(*device_name);
    if (*bf16 && !device.is_cuda()) throw UsageError("--bf16 needs a CUDA device (--device cuda)");
    torch::manual_seed(a->seed);
    Prepared p = prepare(*a);
    p.options.bf16 = *bf16;
    p.options.device = *device_name;
    const auto& o = p.options;
    data::BatchOptions bo;
    bo.max_tokens = static_cast<size_t>(o.max_tokens);
    bo.seed = o.seed;
    // Batches in training order (epoch 0 of the shuffled plan), the same for nmt and reference.
    const auto plan = data::plan_batches(p.lengths, bo, 0);
    const size_t needed = static_cast<size_t>(*warmup + *steps);
    if (plan.size() < needed) throw UsageError(fmt::format("the corpus gives {} batches; {} needed", plan.size(), needed));
    std::vector<Batch> batches;
    std::ofstream dump;
    if (!dump_batches->empty()) {
      dump.open(*dump_batches, std::ios::binary | std::ios::trunc);
      if (!dump) throw RuntimeError(fmt::format("{}: cannot write", *dump_batches));
    }
    for (size_t b = 0; b < needed; ++b) {
      std::vector<const Ids*> s, t;
      nlohmann::json j = {{"src", nlohmann::json::array()}, {"tgt", nlohmann::json::array()}};
      for (size_t i : plan[b]) {
        s.push_back(&p.src[i]);
        t.push_back(&p.tgt[i]);
        if (dump) j["src"].push_back(p.src[i]), j["tgt"].push_back(p.tgt[i]);
      }
      batches.push_back(to_device(make_batch(s, t), device));
      if (dump) dump << j.dump() << '\n';
    }
    if (!dump_config->empty()) write_file_atomic(*dump_config, model_config_json(o).dump(2) + "\n");

    auto model = models::make_model(o.model);
    model->to(device);
    model->train();
    auto params = model->parameters();
    auto optimizer = train::make_optimizer(params, o);
    for (int64_t i = 0; i < *warmup; ++i) train::train_step(*model, optimizer, params, batches[i], o, o.lr);
    int64_t tokens = 0;
    double flops = 0;
    torch::Tensor loss_sum = torch::zeros({}, torch::TensorOptions().dtype(torch::kDouble).device(device));
    int64_t tgt_tokens = 0;
    synchronize(device);
    reset_peak_gpu_memory(device);
    const auto t0 = Clock::now();
    for (int64_t i = *warmup; i < *warmup + *steps; ++i) {
      const Batch& b = batches[i];
      auto r = train::train_step(*model, optimizer, params, b, o, o.lr);
      loss_sum += r.sums.loss.to(torch::kDouble);
      tokens += b.src_tokens + b.tgt_tokens;
      tgt_tokens += b.tgt_tokens;
      flops += 3 * models::forward_matmul_flops(o.model, b.size(), b.src.size(1), b.tgt_in.size(1));
    }
    synchronize(device);
    const double secs = seconds_since(t0);
    std::cout << nlohmann::json{{"impl", "nmt"}, {"model", o.model.type}, {"preset", a->preset}, {"steps", *steps},
                                {"device", device.str()}, {"bf16", *bf16}, {"peak_gpu_mb", peak_gpu_mb(device)},
                                {"seconds", secs}, {"tokens", tokens}, {"tokens_per_s", tokens / secs},
                                {"matmul_flops", flops}, {"gflops", flops / secs / 1e9},
                                {"parameters", models::count_parameters(*model)}, {"peak_rss_mb", peak_rss_mb()},
                                {"final_loss", loss_sum.item<double>() / std::max<int64_t>(tgt_tokens, 1)},
                                {"max_tokens", o.max_tokens}}
                     .dump()
              << '\n';
  });
}

void add_init(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("init", "Write a model directory with freshly initialised weights (no training)");
  auto a = std::make_shared<BenchModelArgs>();
  auto out = std::make_shared<std::string>();
  add_model_args(cmd, *a);
  cmd->add_option("-o,--out", *out, "Model directory to create")->required();
  cmd->callback([a, out] {
    torch::manual_seed(a->seed);
    Prepared p = prepare(*a);
    std::filesystem::create_directories(*out);
    write_file_atomic(*out + "/" + models::kSubwordFile, p.spm_bytes);
    write_file_atomic(*out + "/" + models::kConfigFile, model_config_json(p.options).dump(2) + "\n");
    auto model = models::make_model(p.options.model);
    models::save_weights(*model, *out + "/" + models::kWeightsFile);
  });
}

// p50/p95/p99 (nearest rank) and mean of per-sentence times; null when none were taken.
nlohmann::json latency_summary(std::vector<double> ms) {
  if (ms.empty()) return nullptr;
  std::sort(ms.begin(), ms.end());
  auto rank = [&](double p) { return ms[std::min(ms.size() - 1, static_cast<size_t>(std::ceil(p * ms.size())) - 1)]; };
  double sum = 0;
  for (double x : ms) sum += x;
  return {{"p50", rank(0.50)}, {"p95", rank(0.95)}, {"p99", rank(0.99)}, {"mean", sum / ms.size()}};
}

void add_translate(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("translate", "Translation speed of a model directory on a source file");
  auto model_dir = std::make_shared<std::string>();
  auto src = std::make_shared<std::string>();
  auto threads = std::make_shared<int>(0);
  auto batch_size = std::make_shared<int64_t>(64);
  auto limit = std::make_shared<size_t>(0);
  auto search = std::make_shared<SearchFlags>();
  auto dump_ids = std::make_shared<std::string>();
  auto dump_hyp_ids = std::make_shared<std::string>();
  auto device_name = std::make_shared<std::string>("cpu");
  auto per_sentence = std::make_shared<bool>(false);
  cmd->add_option("-m,--model", *model_dir, "Model directory")->required();
  cmd->add_option("--device", *device_name, "cpu, cuda or cuda:N (as nmt translate --device)")->capture_default_str();
  cmd->add_option("--src", *src, "Source sentences")->required();
  cmd->add_option("--threads", *threads, "Threads (as nmt translate --threads)")->capture_default_str();
  cmd->add_option("--batch-size", *batch_size, "Sentences per batch")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--limit", *limit, "Only the first N sentences (0 = all)")->capture_default_str();
  add_search_flags(cmd, *search, "Beam size (1 = greedy)");
  cmd->add_option("--dump-ids", *dump_ids, "Write the encoded sources as JSON lines of ids (for the PyTorch reference)");
  cmd->add_option("--dump-hyp-ids", *dump_hyp_ids, "Write the output ids as JSON lines (greedy only)");
  cmd->add_flag("--per-sentence", *per_sentence,
                "Translate the sentences one at a time, each timed: adds latency_ms (p50, p95, p99, mean) to the result, "
                "what a server's latency at one connection compares with");
  cmd->callback([=] {
    check_search_flags(*search, 1000);
    const int64_t beam = search->beam.beam;
    set_threads(*threads);
    const torch::Device device = resolve_device(*device_name);
    const auto t_load = Clock::now();
    models::LoadedModel loaded = models::load_model(*model_dir);
    loaded.model->to(device);
    decode::Translator translator(std::move(loaded));
    const double load_secs = seconds_since(t_load);
    auto lines = read_lines(*src);
    if (*limit > 0 && lines.size() > *limit) lines.resize(*limit);
    if (!dump_ids->empty()) {
      std::string text;
      for (const auto& l : lines) text += nlohmann::json(translator.subwords().source.encode(l)).dump() + "\n";
      write_file_atomic(*dump_ids, text);
    }
    decode::DecodeOptions d;
    d.max_sentences = *batch_size;
    search->apply_to(d);
    decode::TranslateStats stats;
    std::vector<decode::Hypothesis> hyps;
    // One untimed sentence first: the allocator and thread pools warm up, as in the reference.
    translator.translate({lines.front()}, d);
    synchronize(device);
    reset_peak_gpu_memory(device);
    const decode::BeamOptions& b = search->beam;
    auto translate = [&](const std::vector<std::string>& batch) {
      if (beam > 1) {
        translator.translate_beam(batch, d, b, &stats);
      } else {
        std::vector<decode::Hypothesis> h;
        translator.translate(batch, d, &stats, &h);
        for (auto& x : h) hyps.push_back(std::move(x));
      }
      synchronize(device);
    };
    std::vector<double> latencies_ms;
    const auto t0 = Clock::now();
    if (*per_sentence) {
      for (const auto& line : lines) {
        const auto start = Clock::now();
        translate({line});
        latencies_ms.push_back(1000 * seconds_since(start));
      }
    } else {
      translate(lines);
    }
    const double secs = seconds_since(t0);
    if (!dump_hyp_ids->empty() && beam == 1) {
      std::string text;
      for (const auto& h : hyps) text += nlohmann::json(h.tokens).dump() + "\n";
      write_file_atomic(*dump_hyp_ids, text);
    }
    const std::string weights = translator.loaded().quantization.empty() ? "fp32" : translator.loaded().quantization;
    std::cout << nlohmann::json{{"impl", "nmt"}, {"model", translator.loaded().model_config.type},
                                {"weights", weights}, {"int8_kernel", weights == "int8" ? nlohmann::json(quant::kernel_name()) : nlohmann::json()},
                                {"batch_size", *batch_size},
                                {"beam", beam}, {"beam_shrink", b.shrink}, {"alpha", b.alpha}, {"sentences", lines.size()}, {"seconds", secs},
                                {"sentences_per_s", lines.size() / secs}, {"target_tokens", stats.target_tokens},
                                {"target_tokens_per_s", stats.target_tokens / secs}, {"load_seconds", load_secs},
                                {"peak_rss_mb", peak_rss_mb()}, {"device", device.str()},
                                {"peak_gpu_mb", peak_gpu_mb(device)},
                                {"latency_ms", latency_summary(latencies_ms)}}
                     .dump()
              << '\n';
  });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Speed measurements (used by scripts/bench.sh; JSON on stdout)");
  bench->require_subcommand(1, 1);
  add_matmul(*bench);
  add_train(*bench);
  add_translate(*bench);
  add_init(*bench);
}

}  // namespace nmt::cli
