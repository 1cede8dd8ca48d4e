#pragma once
// Each `nmt` subcommand registers its options and its action on the shared CLI11 app.
// The actions only translate options into library calls; the work lives in lib/.
#include <string>
#include <vector>

namespace CLI {
class App;
}

namespace nmt::cli {

void add_bleu_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_prepare_command(CLI::App& app);
void add_translate_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_average_command(CLI::App& app);
void add_quantize_command(CLI::App& app);
void add_upgrade_command(CLI::App& app);
void add_import_command(CLI::App& app);
void add_attention_command(CLI::App& app);
void add_score_command(CLI::App& app);
void add_plot_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_bench_command(CLI::App& app);
void add_serve_command(CLI::App& app);

// The command line with sacreBLEU's several-letter short options after `bleu` (-sl, -tok,
// -pbs, ...) spelled out as long options, for `nmt bleu` to take sacreBLEU's command lines.
std::vector<std::string> expand_sacrebleu_options(const std::vector<std::string>& args);

}  // namespace nmt::cli
