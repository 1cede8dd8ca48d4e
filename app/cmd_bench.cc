// `nmt bench`: the measurements behind scripts/bench/bench.sh (lib/nmt/bench/bench.h). Each
// subcommand prints one JSON object on stdout, so the script can put nmt and the PyTorch
// reference side by side.
//   bench matmul     achieved GFLOP/s of square float32 matrix products (the machine's peak) and
//                    of nmt's int8 ones (quantised decoding's peak)
//   bench train      training tokens/s over fixed batches after warm-up, GFLOP/s, peak RSS
//   bench translate  translation sentences/s and target tokens/s, peak RSS
//   bench init       a model directory with freshly initialised weights (no training)
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "option_binder.h"
#include "nmt/bench/bench.h"
#include "nmt/bench/options.h"
#include "nmt/decode/search_options.h"
#include "nmt/train/options.h"
#include "nmt/train/presets.h"
#include "nmt/util/runtime_options.h"

namespace nmt::cli {

namespace {

void print_json(const nlohmann::json& result) { std::cout << result.dump() << '\n'; }

// The model and data of `bench train` and `bench init`: --preset, then the rows of nmt train's
// option table a benchmark takes (so --max-tokens, --threads, ... mean and check what they do in
// nmt train), and --spm.
class BenchModelFlags {
 public:
  BenchModelFlags(CLI::App* cmd, std::vector<std::string> keys)
      : preset_(cmd, bench::model_recipe_option_specs(), {}, OptionUse{{"preset"}, {}, {}}),
        train_(cmd, train::train_option_specs(), on_cpu(),
               OptionUse{std::move(keys), {}, {{"device", "cpu, cuda or cuda:N (default: cpu)"}}}),
        spm_(cmd, bench::model_recipe_option_specs(), {}, OptionUse{{"spm"}, {}, {}}) {}

  // The preset's options with those given over them, checked.
  train::TrainOptions options() const {
    return with_flag_names([&] {
      train::TrainOptions o = on_cpu();
      train::apply_preset(recipe().preset, o);
      train_.apply(o);
      train::validate_options(o, train::flag_of);
      return o;
    });
  }
  bench::ModelRecipe recipe() const {
    bench::ModelRecipe r;
    preset_.apply(r);
    spm_.apply(r);
    return r;
  }

 private:
  static train::TrainOptions on_cpu() {  // a benchmark names the device it measures
    train::TrainOptions o;
    o.device = "cpu";
    return o;
  }

  // --preset before the train rows in --help, --spm after them.
  OptionBinder<bench::ModelRecipe> preset_;
  OptionBinder<train::TrainOptions> train_;
  OptionBinder<bench::ModelRecipe> spm_;
};

const std::vector<std::string> kBenchDataKeys = {"train_prefix", "src_lang", "tgt_lang",
                                                 "max_tokens", "seed", "threads"};

void add_matmul(CLI::App& bench) {
  auto* cmd = bench.add_subcommand(
      "matmul", "Achieved GFLOP/s of float32 matrix products and of nmt's int8 ones (best of several sizes)");
  auto runtime = std::make_shared<OptionBinder<RuntimeOptions>>(cmd, runtime_option_specs(), RuntimeOptions{},
                                                                OptionUse{{"threads"}, {}, {}});
  cmd->callback([runtime] { print_json(bench::measure_matmul(runtime->checked())); });
}

void add_train(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("train", "Training tokens/s on fixed batches after warm-up");
  std::vector<std::string> keys = kBenchDataKeys;
  keys.insert(keys.end(), {"device", "bf16"});
  auto model = std::make_shared<BenchModelFlags>(cmd, keys);
  auto timing = std::make_shared<OptionBinder<bench::TrainBenchOptions>>(cmd, bench::train_bench_option_specs());
  cmd->callback([model, timing] {
    const bench::TrainBenchOptions b = timing->checked();
    const train::TrainOptions options = model->options();
    print_json(with_flag_names([&] { return bench::measure_training(options, model->recipe(), b); }));
  });
}

void add_init(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("init", "Write a model directory with freshly initialised weights (no training)");
  auto model = std::make_shared<BenchModelFlags>(cmd, kBenchDataKeys);
  auto out = std::make_shared<OptionBinder<bench::InitBenchOptions>>(cmd, bench::init_bench_option_specs());
  cmd->callback([model, out] {
    const bench::InitBenchOptions init = out->checked();
    const train::TrainOptions options = model->options();
    with_flag_names([&] { bench::write_initialised_model(options, model->recipe(), init); });
  });
}

void add_translate(CLI::App& bench) {
  auto* cmd = bench.add_subcommand("translate", "Translation speed of a model directory on a source file");
  auto own = std::make_shared<OptionBinder<bench::TranslateBenchOptions>>(cmd, bench::translate_bench_option_specs());
  RuntimeOptions on_cpu;  // a benchmark names the device it measures
  on_cpu.device = "cpu";
  auto runtime = std::make_shared<OptionBinder<RuntimeOptions>>(
      cmd, runtime_option_specs(), on_cpu,
      OptionUse{{"threads", "device", "int8", "engine"}, {}, {{"device", "cpu, cuda or cuda:N (default: cpu)"}}});
  auto search = std::make_shared<OptionBinder<decode::SearchOptions>>(
      cmd, decode::search_option_specs(), decode::SearchOptions{},
      OptionUse{{}, {"nbest", "sampling", "temperature", "seed"}, {}});  // one best translation, searched
  cmd->callback([own, runtime, search, on_cpu] {
    const bench::TranslateBenchOptions b = own->checked();
    const RuntimeOptions r = runtime->checked(on_cpu);
    decode::SearchOptions o;
    search->apply(o);
    decode::validate_search_options(o, flag_of);
    print_json(bench::measure_translation(b, r, o));
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
