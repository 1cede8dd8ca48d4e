#pragma once
// Each `nmt` subcommand registers its options and its action on the shared CLI11 app.
// The actions only translate options into library calls; the work lives in lib/.
namespace CLI {
class App;
}

namespace nmt::cli {

void add_bleu_command(CLI::App& app);
void add_train_command(CLI::App& app);
void add_translate_command(CLI::App& app);
void add_eval_command(CLI::App& app);
void add_average_command(CLI::App& app);
void add_attention_command(CLI::App& app);
void add_plot_command(CLI::App& app);
void add_report_command(CLI::App& app);
void add_bench_command(CLI::App& app);

}  // namespace nmt::cli
