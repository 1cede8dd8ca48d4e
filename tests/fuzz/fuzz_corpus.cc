// libFuzzer target: the corpus readers (parallel files and TSV) on arbitrary bytes.
// Expected outcomes: a corpus plus counted skips, or nmt::Error; never a crash or hang.
#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

#include "nmt/data/corpus.h"
#include "nmt/util/error.h"

namespace {
std::string dir() {
  static const std::string d = [] {
    char tmpl[] = "/tmp/nmt-fuzz-corpus-XXXXXX";
    return std::string(mkdtemp(tmpl));
  }();
  return d;
}
void write(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream o(path, std::ios::binary | std::ios::trunc);
  o.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The first byte picks options; the rest is split at the first 0xFF into the two sides.
  if (size == 0) return 0;
  const uint8_t flags = data[0];
  ++data;
  --size;
  size_t cut = 0;
  while (cut < size && data[cut] != 0xFF) ++cut;
  const std::string prefix = dir() + "/c";
  write(prefix + ".en", data, cut);
  write(prefix + ".fr", data + std::min(cut + 1, size), size - std::min(cut + 1, size));
  nmt::data::ReadOptions options;
  options.strict = flags & 1;
  options.reverse = flags & 2;
  options.max_chars = (flags & 4) ? 16 : 1000;
  try {
    auto r = nmt::data::read_parallel(prefix, "en", "fr", options);
    if (r.corpus.source.size() != r.corpus.target.size()) __builtin_trap();
  } catch (const nmt::Error&) {
  }
  try {
    auto r = nmt::data::read_tsv(prefix + ".en", options);
    if (r.report.kept + r.report.skipped != r.report.lines) __builtin_trap();
  } catch (const nmt::Error&) {
  }
  return 0;
}
