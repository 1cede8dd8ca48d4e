#include "option_binder.h"

#include <algorithm>

#include "nmt/decode/search_options.h"
#include "nmt/serve/options.h"
#include "nmt/train/options.h"
#include "nmt/util/runtime_options.h"

namespace nmt::cli {

namespace {
template <class S>
const OptionSpec<S>* flagged(const std::vector<OptionSpec<S>>& specs, const std::string& key) {
  const OptionSpec<S>* spec = find_option(specs, key);
  return spec && !spec->flag.empty() ? spec : nullptr;
}
}  // namespace

std::string flag_of(const std::string& key) {
  if (const auto* s = flagged(decode::search_option_specs(), key)) return s->long_flag();
  if (const auto* s = flagged(runtime_option_specs(), key)) return s->long_flag();
  if (const auto* s = flagged(serve::serve_option_specs(), key)) return s->long_flag();
  return train::flag_of(key);  // train's table, else "--" + the key with dashes
}

CLI::Option* add_model_option(CLI::App* cmd, std::vector<std::string>& dirs, ModelList list) {
  const char* help = list == ModelList::kEnsemble
                         ? "Model directory written by nmt train; repeat for an ensemble (the models' log-probabilities "
                           "are averaged at each step; they must share the subword vocabularies, source and target)"
                         : "Model directory written by nmt train; repeat to serve several (the first is the default)";
  return cmd->add_option("-m,--model", dirs, help)
      ->required()
      ->expected(1)
      ->allow_extra_args(false)  // one directory per -m: a positional argument after it is not a model
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

}  // namespace nmt::cli
