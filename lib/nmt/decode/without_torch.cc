// What a binary without LibTorch links in LibTorch's place (the `nmt` of NMT_LIBTORCH=none, and
// the launcher of the LibTorch builds when it translates itself): translators on the CPU engine
// alone, thread settings for the engine's OpenMP and nmt's int8 kernels, and module factories
// that say training needs LibTorch. The LibTorch library defines the same functions
// (torch_decoder.cc, tensor/threads.cc, models/transformer.cc, models/gru_bahdanau.cc); a
// binary links one or the other, never both.
#include <filesystem>

#include <fmt/format.h>

#include "nmt/decode/cpu_engine.h"
#include "nmt/decode/engine_quantize.h"
#include "nmt/models/marian_import.h"
#include "nmt/models/gru_config.h"
#include "nmt/models/transformer_config.h"
#include "nmt/tensor/threads.h"
#include "nmt/util/error.h"

namespace nmt {

// The engine's products take their threads per call (EngineDecodeOptions::threads).
void set_threads(int threads) { remember_threads(threads); }

namespace models {

HostTensors read_torch_save_weights(const std::string& path) {
  throw RuntimeError(fmt::format("{}: a pytorch_model.bin needs LibTorch's unpickler, and this nmt is built without "
                                 "LibTorch; save the model as model.safetensors (transformers: "
                                 "save_pretrained(dir, safe_serialization=True)) or import with a LibTorch build",
                                 path));
}

// model.safetensors alone, then read back as the CPU engine will translate it: every tensor it
// needs there, with its shape.
void write_imported_weights(const ModelConfig& config, const HostTensors& mapped, const std::string& file,
                            const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / kSafetensorsFile).string();
  write_imported_safetensors(mapped, file, path);
  (void)decode::cpu_engine_model(path, config, /*int8=*/false);
}

// The int8 copy written from model.safetensors on the engine's loaders.
QuantizeSummary quantize_model_dir(const std::string& dir, const std::string& out, bool force) {
  return decode::quantize_on_engine(dir, out, force);
}
}  // namespace models

namespace decode {

std::string decoder_library() { return "CPU engine, no LibTorch"; }

Translator load_translator(const std::vector<std::string>& model_dirs, const RuntimeOptions& runtime) {
  if (runtime.engine == "torch")
    throw UsageError("--engine torch: this nmt decodes on its CPU engine alone (built without LibTorch); "
                     "use --engine auto or native, or a LibTorch build of nmt");
  if (!runtime.device.empty() && runtime.device != "cpu")
    throw UsageError(runtime.engine == "native"
                         ? fmt::format("--device {}: --engine native decodes on the CPU; a GPU needs --engine torch or auto",
                                       runtime.device)
                         : fmt::format("--device {}: this nmt decodes on the CPU alone (built without LibTorch); "
                                       "a GPU needs a LibTorch build of nmt",
                                       runtime.device));
  const std::string refusal = runtime.engine == "native" ? "--engine native: {}; use --engine torch or auto"
                                                         : "{}; this nmt is built without LibTorch (NMT_LIBTORCH=none)";
  return load_engine_translator(model_dirs, runtime, refusal);
}

}  // namespace decode

namespace models {

namespace {
[[noreturn]] void no_modules(const ModelConfig& config) {
  throw UsageError(fmt::format("building a {} module needs LibTorch: train and average need a LibTorch "
                               "build of nmt (NMT_LIBTORCH=debian or wheel)",
                               config.type));
}
}  // namespace

std::shared_ptr<Seq2SeqModelImpl> make_transformer_module(const ModelConfig& config) { no_modules(config); }
std::shared_ptr<Seq2SeqModelImpl> make_gru_module(const ModelConfig& config) { no_modules(config); }

}  // namespace models
}  // namespace nmt
