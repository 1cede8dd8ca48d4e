#pragma once
// A checkpoint's manifest.json, read without LibTorch (so the fuzzer can reach it): format
// version, model type, step and a checksum per file.
#include <cstdint>
#include <map>
#include <string>

namespace nmt::train {

struct Manifest {
  int64_t format = 0;
  std::string model_type;
  int64_t step = 0;
  std::map<std::string, std::string> files;  // file name → checksum (16 hex digits)
};

// Parses manifest.json's text; anything that is not a manifest (bad JSON, wrong types, a
// missing key, a file name with a '/') → RuntimeError "PATH: ..." in one line.
Manifest parse_manifest(const std::string& text, const std::string& path);

}  // namespace nmt::train
