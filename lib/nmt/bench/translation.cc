// `nmt bench translate`: a model directory's translation speed on a source file, and the
// matrix-product work its output took.
#include <torch/torch.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "nmt/bench/bench.h"
#include "nmt/bench/measure.h"
#include "nmt/decode/strategy.h"
#include "nmt/engine/linear.h"
#include "nmt/decode/service.h"
#include "nmt/models/flops.h"
#include "nmt/quant/int8_gemm.h"
#include "nmt/tensor/device.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/io.h"

namespace nmt::bench {

namespace {

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
double output_matmul_flops(decode::TranslationService& service, const std::vector<std::string>& lines,
                           const std::vector<decode::TranslationResult>& hyps) {
  const models::ModelConfig& config = service.members().front().model_config;
  double flops = 0;
  for (size_t i = 0; i < lines.size() && i < hyps.size(); ++i) {
    const auto src_len = static_cast<int64_t>(service.translator().subwords().source.encode(lines[i]).size()) + 1;
    flops += models::forward_matmul_flops(config, 1, src_len, static_cast<int64_t>(hyps[i].token_ids.size()) + 1);
  }
  return flops;
}

// One JSON line of ids per row, as the PyTorch reference reads them.
template <class Rows, class IdsOf>
void write_id_lines(const std::string& path, const Rows& rows, IdsOf&& ids_of) {
  std::string text;
  for (const auto& row : rows) text += nlohmann::json(ids_of(row)).dump() + "\n";
  write_file_atomic(path, text);
}

struct TimedTranslations {
  std::vector<decode::TranslationResult> hyps;  // the best of each line
  decode::TranslateStats stats;
  std::vector<double> latencies_ms;  // per sentence, when translated one at a time
  double seconds = 0;
};

// Every line translated all at once or (per_sentence) one at a time, each timed, after one
// untimed sentence: the allocator and thread pools warm up, as in the reference.
TimedTranslations translate_timed(decode::TranslationService& service, const std::vector<std::string>& lines,
                                  const decode::SearchOptions& search, bool per_sentence, const torch::Device& device) {
  TimedTranslations t;
  service.translate_text({lines.front()}, decode::SearchOptions{});
  synchronize(device);
  reset_peak_gpu_memory(device);
  auto translate = [&](const std::vector<std::string>& batch) {
    std::vector<decode::TranslationRequest> requests;
    for (const auto& line : batch) requests.push_back({line, {}, {}});
    for (auto& best : service.translate(requests, search, {}, &t.stats)) t.hyps.push_back(std::move(best.front()));
    synchronize(device);
  };
  const auto t0 = BenchClock::now();
  if (per_sentence) {
    for (const auto& line : lines) {
      const auto start = BenchClock::now();
      translate({line});
      t.latencies_ms.push_back(1000 * seconds_since(start));
    }
  } else {
    translate(lines);
  }
  t.seconds = seconds_since(t0);
  return t;
}

}  // namespace

nlohmann::json measure_translation(const TranslateBenchOptions& bench, const RuntimeOptions& runtime,
                                   const decode::SearchOptions& search) {
  set_threads(runtime.threads);
  const torch::Device device = resolve_device(runtime.device);
  const auto t_load = BenchClock::now();
  decode::TranslationService service(bench.model_dirs, runtime);
  const double load_secs = seconds_since(t_load);
  auto lines = read_lines(bench.src);
  if (bench.limit > 0 && lines.size() > bench.limit) lines.resize(bench.limit);
  if (!bench.dump_ids.empty())
    write_id_lines(bench.dump_ids, lines, [&](const std::string& l) { return service.translator().subwords().source.encode(l); });
  const TimedTranslations t = translate_timed(service, lines, search, bench.per_sentence, device);
  if (!bench.dump_hyp_ids.empty() && search.beam == 1)
    write_id_lines(bench.dump_hyp_ids, t.hyps, [](const decode::TranslationResult& h) { return h.token_ids; });
  const double output_flops = output_matmul_flops(service, lines, t.hyps);
  const double secs = t.seconds;
  const models::ModelInfo& loaded = service.members().front();
  const std::string weights = loaded.quantization.empty() ? "fp32" : loaded.quantization;
  const bool native = service.translator().uses_cpu_engine();
  return {{"impl", "nmt"}, {"model", loaded.model_config.type}, {"weights", weights},
          {"engine", native ? "native" : "torch"},
          {"gemm_library", native ? nlohmann::json(engine::gemm_library()) : nlohmann::json()},
          {"int8_kernel", weights == "int8" ? nlohmann::json(quant::kernel_name()) : nlohmann::json()},
          {"batch_size", search.batch_size}, {"beam", search.beam}, {"beam_shrink", search.shrink},
          {"alpha", search.alpha}, {"sentences", lines.size()}, {"seconds", secs},
          {"sentences_per_s", lines.size() / secs}, {"target_tokens", t.stats.target_tokens},
          {"target_tokens_per_s", t.stats.target_tokens / secs}, {"output_matmul_gflops", output_flops / secs / 1e9},
          {"load_seconds", load_secs}, {"peak_rss_mb", peak_rss_mb()}, {"device", device.str()},
          {"peak_gpu_mb", peak_gpu_mb(device)}, {"latency_ms", latency_summary(t.latencies_ms)}};
}

}  // namespace nmt::bench
