// `nmt bench`: the measurements behind scripts/bench/bench.sh. Each subcommand prints one JSON
// object on stdout, so the script can put nmt and the PyTorch reference side by side.
//   bench matmul     achieved GFLOP/s of square float32 matrix products (the machine's peak) and
//                    of nmt's int8 ones (quantised decoding's peak)
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
#include "option_binder.h"
#include "nmt/decode/strategy.h"
#include "nmt/util/runtime_options.h"
#include "train_options.h"
#include "nmt/data/batching.h"
#include "nmt/data/corpus.h"
#include "nmt/decode/translator.h"
#include "nmt/kernels/fused_switch.h"
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

// The model and data of `bench train` and `bench init`: --preset, then the rows of nmt train's
// option table a benchmark takes (so --max-tokens, --threads, ... mean and check what they do in
// nmt train), and --spm.
class BenchModelFlags {
 public:
  BenchModelFlags(CLI::App* cmd, std::vector<std::string> keys)
      : preset_option_(cmd->add_option("--preset", preset_, "Model recipe (see nmt train --preset)")->required()),
        train_(cmd, train::train_option_specs(), on_cpu(),
               OptionUse{std::move(keys), {}, {{"device", "cpu, cuda or cuda:N (default: cpu)"}}}) {
    cmd->add_option("--spm", spm_, "SentencePiece model to use (default: train one on the corpus, as nmt train does)");
  }

  // The preset's options with those given over them, checked.
  train::TrainOptions options() const {
    return with_flag_names([&] {
      train::TrainOptions o = on_cpu();
      train::apply_preset(preset_, o);
      train_.apply(o);
      train::validate_options(o, train::flag_of);
      return o;
    });
  }
  const std::string& preset() const { return preset_; }
  const std::string& spm() const { return spm_; }

 private:
  static train::TrainOptions on_cpu() {  // a benchmark names the device it measures
    train::TrainOptions o;
    o.device = "cpu";
    return o;
  }

  std::string preset_, spm_;
  CLI::Option* preset_option_;
  OptionBinder<train::TrainOptions> train_;
};

const std::vector<std::string> kBenchDataKeys = {"train_prefix", "src_lang", "tgt_lang", "max_tokens", "seed", "threads"};

// Options, corpus encoded with the subword model, and the subword model's bytes.
struct Prepared {
  train::TrainOptions options;
  std::vector<Ids> src, tgt;
  std::vector<data::ExampleLength> lengths;
  std::string spm_bytes;
};

Prepared prepare(const train::TrainOptions& options, const std::string& spm) {
  Prepared p;
  p.options = options;
  if (p.options.train_prefix.empty()) throw UsageError("--train is required");
  auto corpus = data::read_parallel(p.options.train_prefix, p.options.src_lang, p.options.tgt_lang).corpus;
  // The subword model and encoding nmt train makes (vocabulary, type, seed; long pairs left out).
  p.spm_bytes = spm.empty()
                    ? text::SubwordModel::train_serialized(train::joint_sentences(corpus), train::subword_options(p.options))
                    : read_file(spm);
  auto sp = text::SubwordModel::load_from_serialized(p.spm_bytes, spm.empty() ? "trained subword model" : spm);
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

// The best achieved GFLOP/s of `product(n)`, an n x n by n x n matrix product (2n³ operations),
// over square sizes 256..2048: each size warmed up twice, then repeated for about 2^31 operations.
template <class Product>
std::pair<double, nlohmann::json> best_square_product_speed(Product&& product) {
  nlohmann::json sizes = nlohmann::json::object();
  double best = 0;
  for (int64_t n : {256, 512, 1024, 2048}) {
    for (int i = 0; i < 2; ++i) product(n);
    const int reps = static_cast<int>(std::max<int64_t>(3, (int64_t{1} << 31) / (n * n * n)));
    const auto t0 = Clock::now();
    for (int i = 0; i < reps; ++i) product(n);
    const double gflops = 2.0 * n * n * n * reps / seconds_since(t0) / 1e9;
    sizes[std::to_string(n)] = gflops;
    best = std::max(best, gflops);
  }
  return {best, sizes};
}

// nmt's int8 product as quantised decoding runs it (quant::linear: the activations quantised per
// row at each call, the weights packed once), on the operands of the size at hand.
class Int8SquareProduct {
 public:
  explicit Int8SquareProduct(int threads) : threads_(threads) {}
  void operator()(int64_t n) {
    if (n != n_) {
      auto w = torch::randn({n, n});
      weight_ = std::make_unique<quant::PackedWeight>(quant::quantize_weight(w.data_ptr<float>(), n, n));
      x_ = torch::randn({n, n});
      y_ = torch::empty({n, n});
      n_ = n;
    }
    quant::linear(x_.data_ptr<float>(), n, *weight_, nullptr, y_.data_ptr<float>(), threads_);
  }

 private:
  int threads_;
  int64_t n_ = 0;
  std::unique_ptr<quant::PackedWeight> weight_;
  torch::Tensor x_, y_;
};

void add_matmul(CLI::App& bench) {
  auto* cmd = bench.add_subcommand(
      "matmul", "Achieved GFLOP/s of float32 matrix products and of nmt's int8 ones (best of several sizes)");
  auto runtime = std::make_shared<OptionBinder<RuntimeOptions>>(cmd, runtime_option_specs(), RuntimeOptions{},
                                                                OptionUse{{"threads"}, {}, {}});
  cmd->callback([runtime] {
    const RuntimeOptions r = runtime->checked();
    set_threads(r.threads);
    torch::NoGradGuard guard;
    torch::Tensor a, b;
    const auto [fp32_peak, fp32_sizes] = best_square_product_speed([&](int64_t n) {
      if (!a.defined() || a.size(0) != n) a = torch::randn({n, n}), b = torch::randn({n, n});
      (void)torch::mm(a, b);
    });
    // The int8 rows of a decoding benchmark divide by this peak as the float32 rows divide by
    // peak_gflops: both count a multiply-add as 2 operations.
    // --threads 0 (the libraries' default) is one thread per core here, as in quantised decoding.
    const auto [int8_peak, int8_sizes] = best_square_product_speed(Int8SquareProduct(configured_threads()));
    std::cout << nlohmann::json{{"peak_gflops", fp32_peak},   {"by_size", fp32_sizes},
                                {"int8_peak_gflops", int8_peak}, {"int8_by_size", int8_sizes},
                                {"int8_kernel", quant::kernel_name()}, {"threads", r.threads},
                                {"blas_core", select_blas_kernels()}}
                     .dump()
              << '\n';
  });
}

void add_train(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("train", "Training tokens/s on fixed batches after warm-up");
  std::vector<std::string> keys = kBenchDataKeys;
  keys.insert(keys.end(), {"device", "bf16"});
  auto a = std::make_shared<BenchModelFlags>(cmd, keys);
  auto steps = std::make_shared<int64_t>(10);
  auto warmup = std::make_shared<int64_t>(3);
  auto dump_batches = std::make_shared<std::string>();
  auto dump_config = std::make_shared<std::string>();
  cmd->add_option("--steps", *steps, "Timed updates")->capture_default_str()->check(CLI::PositiveNumber);
  cmd->add_option("--warmup", *warmup, "Untimed updates first")->capture_default_str();
  cmd->add_option("--dump-batches", *dump_batches,
                  "Write the warm-up + timed batches as JSON lines {\"src\": [[ids]], \"tgt\": [[ids]]} (no BOS/EOS)");
  cmd->add_option("--dump-config", *dump_config, "Write the model's config.json (for the PyTorch reference)");
  auto unfused = std::make_shared<bool>(false);
  cmd->add_flag("--unfused", *unfused,
                "ATen's operators and torch::optim::Adam only, without nmt's fused training kernels (to measure what they bring)");
  cmd->callback([a, steps, warmup, dump_batches, dump_config, unfused] {
    const train::TrainOptions options = a->options();
    kernels::set_fused_training_kernels(!*unfused);
    set_threads(options.threads);
    keep_freed_memory_for_reuse();  // as nmt train does
    const torch::Device device = resolve_device(options.device);
    if (options.bf16 && !device.is_cuda()) throw UsageError("--bf16 needs a CUDA device (--device cuda)");
    torch::manual_seed(static_cast<uint64_t>(options.seed));
    Prepared p = prepare(options, a->spm());
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
    std::cout << nlohmann::json{{"impl", "nmt"}, {"fused", !*unfused}, {"model", o.model.type}, {"preset", a->preset()}, {"steps", *steps},
                                {"device", device.str()}, {"bf16", o.bf16}, {"peak_gpu_mb", peak_gpu_mb(device)},
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
  auto a = std::make_shared<BenchModelFlags>(cmd, kBenchDataKeys);
  auto out = std::make_shared<std::string>();
  cmd->add_option("-o,--out", *out, "Model directory to create")->required();
  cmd->callback([a, out] {
    const train::TrainOptions options = a->options();
    torch::manual_seed(static_cast<uint64_t>(options.seed));
    Prepared p = prepare(options, a->spm());
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

// The matrix-product work of the translations themselves: for each sentence one teacher-forced
// forward pass over its source and its output, EOS included (models::forward_matmul_flops), which
// is what greedy decoding with a cache computes at the least; beam search computes about `beam`
// times the decoder's share of it. Divided by the time and by `nmt bench matmul`'s peak it says
// how much of the machine's matrix-product speed a decoding row turns into output.
double output_matmul_flops(decode::Translator& translator, const std::vector<std::string>& lines,
                           const std::vector<decode::Hypothesis>& hyps) {
  const models::ModelConfig& config = translator.loaded().model_config;
  double flops = 0;
  for (size_t i = 0; i < lines.size() && i < hyps.size(); ++i) {
    const auto src_len = static_cast<int64_t>(translator.subwords().source.encode(lines[i]).size()) + 1;
    flops += models::forward_matmul_flops(config, 1, src_len, static_cast<int64_t>(hyps[i].tokens.size()) + 1);
  }
  return flops;
}

void add_translate(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("translate", "Translation speed of a model directory on a source file");
  auto model_dir = std::make_shared<std::string>();
  auto src = std::make_shared<std::string>();
  auto limit = std::make_shared<size_t>(0);
  auto dump_ids = std::make_shared<std::string>();
  auto dump_hyp_ids = std::make_shared<std::string>();
  auto per_sentence = std::make_shared<bool>(false);
  cmd->add_option("-m,--model", *model_dir, "Model directory")->required();
  cmd->add_option("--src", *src, "Source sentences")->required();
  cmd->add_option("--limit", *limit, "Only the first N sentences (0 = all)")->capture_default_str();
  RuntimeOptions on_cpu;  // a benchmark names the device it measures
  on_cpu.device = "cpu";
  auto runtime = std::make_shared<OptionBinder<RuntimeOptions>>(
      cmd, runtime_option_specs(), on_cpu,
      OptionUse{{"threads", "device", "int8"}, {}, {{"device", "cpu, cuda or cuda:N (default: cpu)"}}});
  auto search = std::make_shared<OptionBinder<decode::SearchOptions>>(
      cmd, decode::search_option_specs(), decode::SearchOptions{},
      OptionUse{{}, {"nbest", "sampling", "temperature", "seed"}, {}});  // one best translation, searched
  cmd->add_option("--dump-ids", *dump_ids, "Write the encoded sources as JSON lines of ids (for the PyTorch reference)");
  cmd->add_option("--dump-hyp-ids", *dump_hyp_ids, "Write the output ids as JSON lines (greedy only)");
  cmd->add_flag("--per-sentence", *per_sentence,
                "Translate the sentences one at a time, each timed: adds latency_ms (p50, p95, p99, mean) to the result, "
                "what a server's latency at one connection compares with");
  cmd->callback([=] {
    const RuntimeOptions r = runtime->checked(on_cpu);
    decode::SearchOptions o;
    search->apply(o);
    decode::validate_search_options(o, flag_of);
    const int64_t beam = o.beam;
    set_threads(r.threads);
    const torch::Device device = resolve_device(r.device);
    const auto t_load = Clock::now();
    decode::Translator translator = decode::load_translator({*model_dir}, r);
    const double load_secs = seconds_since(t_load);
    auto lines = read_lines(*src);
    if (*limit > 0 && lines.size() > *limit) lines.resize(*limit);
    if (!dump_ids->empty()) {
      std::string text;
      for (const auto& l : lines) text += nlohmann::json(translator.subwords().source.encode(l)).dump() + "\n";
      write_file_atomic(*dump_ids, text);
    }
    const decode::DecodeOptions d = decode::decode_options(o);
    const auto strategy = decode::make_search_strategy(o);
    decode::TranslateStats stats;
    std::vector<decode::Hypothesis> hyps;
    // One untimed sentence first: the allocator and thread pools warm up, as in the reference.
    translator.translate({lines.front()}, d);
    synchronize(device);
    reset_peak_gpu_memory(device);
    auto translate = [&](const std::vector<std::string>& batch) {
      for (auto& n : translator.translate(batch, d, *strategy, &stats))
        hyps.push_back(std::move(n.front().hypothesis));
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
    const double output_flops = output_matmul_flops(translator, lines, hyps);
    const std::string weights = translator.loaded().quantization.empty() ? "fp32" : translator.loaded().quantization;
    std::cout << nlohmann::json{{"impl", "nmt"}, {"model", translator.loaded().model_config.type},
                                {"weights", weights}, {"int8_kernel", weights == "int8" ? nlohmann::json(quant::kernel_name()) : nlohmann::json()},
                                {"batch_size", o.batch_size},
                                {"beam", beam}, {"beam_shrink", o.shrink}, {"alpha", o.alpha}, {"sentences", lines.size()}, {"seconds", secs},
                                {"sentences_per_s", lines.size() / secs}, {"target_tokens", stats.target_tokens},
                                {"target_tokens_per_s", stats.target_tokens / secs},
                                {"output_matmul_gflops", output_flops / secs / 1e9}, {"load_seconds", load_secs},
                                {"peak_rss_mb", peak_rss_mb()}, {"device", device.str()},
                                {"peak_gpu_mb", peak_gpu_mb(device)},
                                {"latency_ms", latency_summary(latencies_ms)}}
                     .dump()
              << '\n';
  });
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* bench = app.add_subcommand("bench", "Speed measurements (used by scripts/bench/bench.sh; JSON on stdout)");
  bench->require_subcommand(1, 1);
  add_matmul(*bench);
  add_train(*bench);
  add_translate(*bench);
  add_init(*bench);
}

}  // namespace nmt::cli
