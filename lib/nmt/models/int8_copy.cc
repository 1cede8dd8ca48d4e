#include "nmt/models/int8_copy.h"

#include <filesystem>

#include <fmt/format.h>

#include "nmt/models/model_dir.h"
#include "nmt/util/error.h"
#include "nmt/util/io.h"
#include "nmt/util/json_read.h"

namespace nmt::models {
namespace fs = std::filesystem;

std::string checked_quantize_target(const std::string& dir, const std::string& out, bool force) {
  std::error_code ec;
  fs::path target = fs::path(out).lexically_normal();
  if (!target.has_filename()) target = target.parent_path();  // "out/"
  if (fs::exists(target, ec) && fs::equivalent(dir, target, ec))
    throw UsageError(fmt::format("{}: the output is the model directory itself", out));
  const bool empty_dir = fs::is_directory(target, ec) && fs::is_empty(target, ec);
  if (fs::exists(fs::symlink_status(target)) && !empty_dir && !force)
    throw UsageError(fmt::format("{}: already exists (--force replaces it)", out));
  const std::string config_path = (fs::path(dir) / kConfigFile).string();
  if (fs::is_directory(dir) && fs::is_regular_file(config_path) &&
      quantization_of(json_read::parse(read_small_file(config_path, kMaxJsonBytes), config_path), config_path) ==
          "int8")
    throw RuntimeError(fmt::format("{}: already an int8 model (\"quantization\": \"int8\")", config_path));
  return target.string();
}

}  // namespace nmt::models
