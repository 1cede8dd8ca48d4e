// libFuzzer target: a checkpoint's manifest.json (nmt::train::parse_manifest). Anything may
// be refused, with nmt::Error only; nothing may crash, leak or hit undefined behaviour.
#include <cstdint>
#include <string>

#include "nmt/train/manifest.h"
#include "nmt/util/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto m = nmt::train::parse_manifest(text, "manifest.json");
    (void)m;
  } catch (const nmt::Error&) {
  }
  return 0;
}
