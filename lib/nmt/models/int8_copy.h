#pragma once
// `nmt quantize DIR -o OUT`, as every build runs it (torch-free): what it reports and how OUT is
// checked. The LibTorch build quantises its modules and writes model.int8.pt beside the int8
// model.safetensors (models/quantize.h); the build without LibTorch writes the int8
// model.safetensors from DIR's on the CPU engine (decode/engine_quantize.h). Both hold the same
// int8 values and scales; every build reads either directory.
#include <cstdint>
#include <string>

namespace nmt::models {

struct QuantizeSummary {
  int64_t linears = 0;       // Linears quantised
  int64_t int8_weights = 0;  // their weights (int8 values)
  int64_t fp32_weights = 0;  // every other stored value (fp32)
  double seconds = 0;        // loading, quantising and writing
};

// OUT made a path to write the int8 directory at ("out/" → "out"), once checked: OUT may not be
// DIR, and an existing OUT (other than an empty directory) is replaced only with `force`
// (UsageError otherwise); DIR already int8 → RuntimeError naming its config.json.
std::string checked_quantize_target(const std::string& dir, const std::string& out, bool force);

// `nmt quantize DIR -o OUT`: writes OUT as an int8 model directory (config.json marked int8, the
// subword models copied, the int8 weights) built in a hidden directory beside OUT and renamed
// into place, so a failure leaves no partial OUT (checked_quantize_target's errors first). DIR
// not an fp32 model directory → RuntimeError naming the file. Defined by the binary: LibTorch's
// (models/quantize.cc) or the engine's (decode/without_torch.cc).
QuantizeSummary quantize_model_dir(const std::string& dir, const std::string& out, bool force);

}  // namespace nmt::models
