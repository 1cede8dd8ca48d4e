#include "nmt/train/run_directory.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "nmt/models/model_io.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"
#include "nmt/util/lock.h"

namespace nmt::train {
namespace fs = std::filesystem;
namespace {

// The saved run's identity against this one's: "" when they are the same run, otherwise what
// differs ("heads: 2 in config.json, 4 now"). The model section counts as a whole (minus the
// vocabulary sizes, which come from the subword model), so --heads 4 is another run.
struct IdentityDifference {
  std::string model;  // a model option differs (never resumable)
  std::string train;  // a training option differs (resumable with --resume)
};

std::string first_difference(const nlohmann::json& saved, const nlohmann::json& now) {
  for (const auto& [key, value] : now.items())
    if (!saved.contains(key) || saved[key] != value)
      return fmt::format("{}: {} in config.json, {} now", key, saved.contains(key) ? saved[key].dump() : "unset", value.dump());
  for (const auto& [key, value] : saved.items())
    if (!now.contains(key)) return fmt::format("{}: {} in config.json, unset now", key, value.dump());
  return "";
}

IdentityDifference run_difference(const fs::path& out, const TrainOptions& o) {
  const std::string path = (out / models::kConfigFile).string();
  const nlohmann::json saved = json_read::parse(read_small_file(path, kMaxJsonBytes), path);
  nlohmann::json saved_model, saved_train;
  try {
    // Through the option tables, so options added since (at their defaults) still match.
    saved_model = models::ModelConfig::from_json(json_read::object(saved, "model")).to_json();
    saved_train = TrainOptions::from_json(json_read::object(saved, "train")).to_json();
  } catch (const nlohmann::json::exception& e) {
    throw RuntimeError(fmt::format("{}: corrupt: {}", path, e.what()));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: corrupt: {}", path, e.what()));
  }
  nlohmann::json now_model = o.model.to_json();
  for (const char* derived : {"src_vocab", "tgt_vocab", "shared_vocab"}) {
    saved_model.erase(derived);
    now_model.erase(derived);
  }
  return {first_difference(saved_model, now_model), first_difference(run_identity(saved_train), run_identity(o.to_json()))};
}

}  // namespace

bool claim_out_dir(const fs::path& out, const TrainOptions& o, const CheckpointManager& checkpoints) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(out)) {
    const std::string name = entry.path().filename().string();
    if (name != DirectoryLock::kFileName) names.push_back(name);
  }
  if (names.empty()) return false;
  auto is_temporary = [](const std::string& name) { return name.size() > 4 && name.compare(name.size() - 4, 4, ".tmp") == 0; };
  auto only = [&](std::initializer_list<const char*> allowed) {
    return std::all_of(names.begin(), names.end(), [&](const std::string& n) {
      return is_temporary(n) || std::any_of(allowed.begin(), allowed.end(), [&](const char* a) { return n == a; });
    });
  };
  // config.json is a run's signature: nmt writes it before metrics.jsonl, checkpoints/ or
  // model.pt. Without it, only a run killed during set-up (spm.model) is ours to redo.
  if (!fs::exists(out / models::kConfigFile)) {
    if (only({models::kSubwordFile, models::kSourceSubwordFile})) return false;
    throw UsageError(fmt::format("{}: --out is not empty and holds no nmt run (no {}); choose a new --out", o.out_dir,
                                 models::kConfigFile));
  }
  const IdentityDifference diff = run_difference(out, o);
  if (!checkpoints.list().empty()) {
    if (!diff.model.empty())
      throw UsageError(fmt::format("{}: holds a run of another model ({}); a model option cannot change on the same --out, "
                                   "choose a new --out",
                                   o.out_dir, diff.model));
    if (o.resume || diff.train.empty()) return true;
    throw UsageError(fmt::format("{}: holds a run with other options ({}); use --resume to continue it with the new "
                                 "options or choose a new --out",
                                 o.out_dir, diff.train));
  }
  if (o.resume)
    throw UsageError(fmt::format("{}: --resume given but there is no complete checkpoint to resume from", o.out_dir));
  if (fs::exists(out / models::kWeightsFile))
    throw UsageError(fmt::format("{}: holds a trained model ({}) but no checkpoint to continue from; choose a new --out "
                                 "(or delete {} to train again)",
                                 o.out_dir, models::kWeightsFile, (out / models::kWeightsFile).string()));
  if (!diff.model.empty() || !diff.train.empty())
    throw UsageError(fmt::format("{}: holds another run ({}); choose a new --out", o.out_dir,
                                 diff.model.empty() ? diff.train : diff.model));
  if (!only({models::kConfigFile, models::kSubwordFile, models::kSourceSubwordFile, "metrics.jsonl", "checkpoints"}))
    throw UsageError(fmt::format("{}: holds files nmt did not write; choose a new --out", o.out_dir));
  // The same run, killed before its first checkpoint: it simply starts again.
  for (const char* f : {"metrics.jsonl", "checkpoints"}) fs::remove_all(out / f);
  return false;
}

void adopt_init_architecture(TrainOptions& o) {
  const fs::path path = fs::path(o.init_from) / models::kConfigFile;
  if (o.init_from.empty() || !fs::is_regular_file(path)) return;
  try {
    const nlohmann::json saved = json_read::parse(read_small_file(path.string(), kMaxJsonBytes), path.string());
    o.model = models::ModelConfig::from_json(json_read::object(saved, "model"));
    o.separate_vocab = !o.model.shared_vocab;
  } catch (const RuntimeError&) {
    // check_init_from reports it, naming the file.
  }
}

void check_init_from(const TrainOptions& o) {
  const fs::path dir(o.init_from);
  if (const std::string problem = directory_problem(o.init_from); !problem.empty())
    throw OptionError("init_from", fmt::format(" {}: {}", o.init_from, problem));
  for (const char* f : {models::kConfigFile, models::kWeightsFile})  // the subword files once the layout is known
    if (!fs::is_regular_file(dir / f))
      throw OptionError("init_from", fmt::format(" {}: not a model directory (no {})", o.init_from, f));
  const std::string path = (dir / models::kConfigFile).string();
  const nlohmann::json saved = json_read::parse(read_small_file(path, kMaxJsonBytes), path);
  nlohmann::json theirs, ours = o.model.to_json();
  models::ModelConfig their_config;
  try {
    their_config = models::ModelConfig::from_json(json_read::object(saved, "model"));
    theirs = their_config.to_json();
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: corrupt: {}", path, e.what()));
  }
  if (their_config.shared_vocab == o.separate_vocab)
    throw OptionError("init_from", fmt::format(" {}: has {}; {}", o.init_from,
                                               their_config.shared_vocab ? "one joint vocabulary" : "separate vocabularies",
                                               their_config.shared_vocab ? "leave out --separate-vocab" : "give --separate-vocab"));
  for (const std::string& f : models::subword_files(their_config.shared_vocab))
    if (!fs::is_regular_file(dir / f))
      throw OptionError("init_from", fmt::format(" {}: not a model directory (no {})", o.init_from, f));
  for (const char* derived : {"src_vocab", "tgt_vocab", "shared_vocab"}) {
    theirs.erase(derived);
    ours.erase(derived);
  }
  if (const std::string diff = first_difference(theirs, ours); !diff.empty())
    throw OptionError("init_from", fmt::format(" {}: another architecture ({}); give the same model options (e.g. its "
                                               "--preset)",
                                               o.init_from, diff));
}

}  // namespace nmt::train
