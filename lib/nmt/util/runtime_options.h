#pragma once
// Where and how a command runs: threads, device, int8 decoding, quiet. Each option is declared
// once here (its flag, help and range) and shared by the option tables of every command that
// takes it: `nmt train`'s (train/options.cc) and the decoding commands' (runtime_option_specs).
#include <string>
#include <vector>

#include "nmt/util/option_spec.h"

namespace nmt {

inline constexpr int kMaxThreads = 4096;

template <class S>
OptionSpec<S> threads_option(int S::*field, const char* group = "Runtime") {
  return option("threads", "--threads", group,
                "Threads: OpenBLAS's pool where OpenBLAS is loaded (LibTorch's is then 1), else LibTorch's "
                "(0 = the libraries' default)",
                field)
      .range(0, kMaxThreads);
}

template <class S>
OptionSpec<S> device_option(std::string S::*field, const char* group = "Runtime") {
  return option("device", "--device", group, "cpu, cuda or cuda:N (default: CUDA when available, else cpu)", field);
}

struct RuntimeOptions {
  int threads = 0;     // 0: the libraries' default
  std::string device;  // empty: CUDA when available, else the CPU
  bool int8 = false;   // quantise fp32 models on load (models/quantize.h)
  // Which decoder runs on the CPU: "native" (nmt's own engine, engine/engine.h), "torch"
  // (LibTorch: the reference, and the only one on a GPU), or "auto": the engine for the models
  // and searches it takes, LibTorch for the rest.
  std::string engine = "auto";
  bool quiet = false;
};

// threads, device, int8, engine, quiet.
const std::vector<OptionSpec<RuntimeOptions>>& runtime_option_specs();

}  // namespace nmt
