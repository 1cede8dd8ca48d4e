// libFuzzer target: safetensors files (nmt::safetensors::File). Anything may be refused, with
// nmt::RuntimeError only; nothing may crash, read out of bounds or hit undefined behaviour. What
// opens is read through every accessor, and written again by serialize() must open to the same
// tensors and metadata.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "nmt/util/error.h"
#include "nmt/util/safetensors.h"

namespace {

namespace st = nmt::safetensors;

void read_everything(const st::File& file) {
  volatile unsigned char sink = 0;
  for (const st::TensorInfo& t : file.tensors()) {
    const auto* p = static_cast<const unsigned char*>(file.data(t));
    for (size_t i = 0; i < t.bytes; ++i) sink = sink ^ p[i];  // ASan sees a read past the data
    for (int accessor = 0; accessor < 3; ++accessor) {
      try {
        if (accessor == 0) (void)file.f32(t.name, t.shape);
        if (accessor == 1) (void)file.i8(t.name, t.shape);
        if (accessor == 2) (void)file.to_f32(t.name, t.shape);
      } catch (const nmt::RuntimeError&) {
      }
    }
  }
}

// serialize() of what was read opens to the same names, dtypes, shapes, bytes and metadata.
void check_round_trip(const st::File& file) {
  std::vector<st::TensorToWrite> tensors;
  for (const st::TensorInfo& t : file.tensors()) tensors.push_back({t.name, t.dtype, t.shape, file.data(t)});
  const st::File again = st::File::from_bytes(st::serialize(tensors, file.metadata()), "again");
  if (again.metadata() != file.metadata() || again.tensors().size() != file.tensors().size()) std::abort();
  for (const st::TensorInfo& t : file.tensors()) {
    const st::TensorInfo* u = again.find(t.name);
    if (!u || u->dtype != t.dtype || u->shape != t.shape || u->bytes != t.bytes ||
        std::memcmp(again.data(*u), file.data(t), t.bytes) != 0)
      std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string bytes(reinterpret_cast<const char*>(data), size);
  try {
    const st::File file = st::File::from_bytes(std::move(bytes), "fuzz.safetensors");
    read_everything(file);
    check_round_trip(file);
  } catch (const nmt::RuntimeError&) {
  }
  return 0;
}
