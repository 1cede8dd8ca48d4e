#include "nmt/models/model_dir.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"
#include "nmt/version.h"

namespace nmt::models {
namespace fs = std::filesystem;

std::string quantization_of(const nlohmann::json& config, const std::string& config_path) {
  if (!config.is_object() || !config.contains("quantization")) return "";
  const auto& q = config.at("quantization");
  if (!q.is_string() || q.get<std::string>() != "int8")
    throw RuntimeError(
        fmt::format("{}: 'quantization' is {}, expected \"int8\" (or no such key: fp32)", config_path, q.dump()));
  return "int8";
}

std::vector<std::string> subword_files(bool shared_vocab) {
  if (shared_vocab) return {kSubwordFile};
  return {kSubwordFile, kSourceSubwordFile};
}

text::SubwordPair load_subwords(const std::string& dir, const ModelConfig& config) {
  auto load = [&](const char* file, int64_t model_size, const char* side) {
    const std::string path = (fs::path(dir) / file).string();
    text::SubwordModel sp = text::SubwordModel::load(path);
    if (sp.vocab_size() != model_size)
      throw RuntimeError(fmt::format("{}: vocabulary size {} does not match the model's {} {} words", path,
                                     sp.vocab_size(), model_size, side));
    return sp;
  };
  text::SubwordPair pair;
  pair.target = load(kSubwordFile, config.tgt_vocab, "target");
  pair.source = config.shared_vocab ? pair.target : load(kSourceSubwordFile, config.src_vocab, "source");
  return pair;
}

nlohmann::json model_directory_config(const nlohmann::json& model, const nlohmann::json& train) {
  return {{"format", kModelFormat}, {"nmt_version", kVersion}, {"model", model}, {"train", train}};
}

namespace {
// A hidden directory beside `target` to build it in (then renamed into place).
fs::path temporary_beside(const fs::path& target, const std::string& what) {
  const fs::path parent = target.has_parent_path() ? target.parent_path() : fs::path(".");
  std::string name = ".";  // built by appending: GCC 12 warns (falsely) on "." + std::string at -O3 in C++20
  name += target.filename().string();
  name += ".tmp-XXXXXX";
  std::string tmpl = (parent / name).string();
  if (!::mkdtemp(tmpl.data())) throw RuntimeError(fmt::format("{}: cannot create: {}", what, std::strerror(errno)));
  return tmpl;
}

// Renames the finished directory `tmp` to `target`; an existing `target` (allowed by the caller)
// is moved aside first and removed only once the new one is in place.
void move_into_place(const fs::path& tmp, const fs::path& target, const std::string& what) {
  std::error_code ec;
  fs::permissions(tmp,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec | fs::perms::others_read |
                      fs::perms::others_exec,
                  ec);
  fs::path old;
  if (fs::exists(fs::symlink_status(target))) {
    old = temporary_beside(target, what);
    fs::remove(old, ec);
    fs::rename(target, old, ec);
    if (ec) throw RuntimeError(fmt::format("{}: cannot move the old one aside: {}", what, ec.message()));
  }
  fs::rename(tmp, target, ec);
  if (ec) {
    std::error_code ignored;
    if (!old.empty()) fs::rename(old, target, ignored);
    throw RuntimeError(fmt::format("{}: cannot move into place: {}", what, ec.message()));
  }
  if (!old.empty()) fs::remove_all(old, ec);
}

// config.json's "format": up to kModelFormat (absent: 1, as nothing else was ever written), else refused.
void check_model_format(const nlohmann::json& config, const std::string& config_path) {
  if (!config.contains("format")) return;
  const auto& format = config["format"];
  if (!format.is_number_integer() || format.get<long long>() < 1)
    throw RuntimeError(fmt::format("{}: \"format\" must be a positive integer, not {}", config_path, format.dump()));
  if (format.get<long long>() > kModelFormat)
    throw RuntimeError(fmt::format("{}: model format {} is newer than this nmt ({}) reads ({}): written by nmt {}; "
                                   "upgrade nmt to load it",
                                   config_path, format.get<long long>(), kVersion, kModelFormat,
                                   config.value("nmt_version", std::string("?"))));
}
}  // namespace

void write_model_directory(const std::string& target, const std::string& what,
                           const std::function<void(const std::string& dir)>& fill) {
  const fs::path tmp = temporary_beside(target, what);
  try {
    fill(tmp.string());
    move_into_place(tmp, target, what);
  } catch (...) {
    std::error_code ec;
    fs::remove_all(tmp, ec);
    throw;
  }
}

void copy_subword_files(const std::string& from, const std::string& to, bool shared_vocab) {
  for (const std::string& f : subword_files(shared_vocab))
    write_file_atomic((fs::path(to) / f).string(), read_small_file((fs::path(from) / f).string(), kMaxSubwordBytes));
}

ModelInfo load_model_info(const std::string& dir) {
  if (const std::string problem = directory_problem(dir); !problem.empty())
    throw RuntimeError(fmt::format("{}: {} (a model directory is what nmt train, average, quantize or import write)", dir, problem));
  ModelInfo m;
  m.dir = dir;
  const std::string config_path = (fs::path(dir) / kConfigFile).string();
  if (!fs::exists(config_path))
    throw RuntimeError(fmt::format("{}: does not exist: {} is not a model directory", config_path, dir));
  m.config = json_read::parse(read_small_file(config_path, kMaxJsonBytes), config_path);
  check_model_format(m.config, config_path);
  try {
    m.model_config = ModelConfig::from_json(json_read::object(m.config, "model"));
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: {}", config_path, e.what()));
  }
  m.subwords = load_subwords(dir, m.model_config);
  m.quantization = quantization_of(m.config, config_path);
  return m;
}

}  // namespace nmt::models
