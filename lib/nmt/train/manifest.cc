#include "nmt/train/manifest.h"

#include <limits>

#include <fmt/format.h>

#include "nmt/util/error.h"
#include "nmt/util/json_read.h"

namespace nmt::train {

Manifest parse_manifest(const std::string& text, const std::string& path) {
  const nlohmann::json j = json_read::parse(text, path);
  Manifest m;
  try {
    if (!j.is_object()) throw RuntimeError("not a JSON object");
    if (!j.contains("format")) throw RuntimeError("no format version: not an nmt checkpoint");
    m.format = json_read::integer(j, "format", 1, std::numeric_limits<int>::max());
    m.model_type = json_read::string(j, "model_type");
    m.step = json_read::integer(j, "step", 0, std::numeric_limits<int64_t>::max());
    for (const auto& [name, sum] : json_read::object(j, "files").items()) {
      // Names are joined to the checkpoint directory: nothing may point outside it.
      if (name.empty() || name.find('/') != std::string::npos || name == "." || name == "..")
        throw RuntimeError(fmt::format("file name '{}' is not a plain file name", name));
      if (!sum.is_string()) throw RuntimeError(fmt::format("the checksum of '{}' is not a string", name));
      m.files[name] = sum.get<std::string>();
    }
  } catch (const RuntimeError& e) {
    throw RuntimeError(fmt::format("{}: {}", path, e.what()));
  }
  return m;
}

}  // namespace nmt::train
