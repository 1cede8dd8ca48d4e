// Safetensors files (lib/nmt/util/safetensors.h): what is written is read back byte for byte,
// laid out as other readers expect it, and no file, however malformed, is more than a one-line
// RuntimeError naming the file and the tensor.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "nmt/util/error.h"
#include "nmt/util/safetensors.h"
#include "test_support.h"

namespace nmt::safetensors {
// Helpers in a namespace of this file's own: the tests are compiled in unity batches.
namespace safetensors_test {
namespace {

using nmt::test::expect_error;
using nmt::test::TempDir;

std::string le64(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

// A file written by hand: the header exactly as given, then the data.
std::string file_of(const std::string& header, const std::string& data = "") { return le64(header.size()) + header + data; }

std::string bytes_of(const void* p, size_t n) { return std::string(static_cast<const char*>(p), n); }

// Opening `bytes` is a RuntimeError naming the file and containing every fragment.
void expect_refused(const std::string& bytes, std::initializer_list<std::string> fragments) {
  expect_error<RuntimeError>([&] { File::from_bytes(bytes, "bad.safetensors"); }, fragments);
  expect_error<RuntimeError>([&] { File::from_bytes(bytes, "bad.safetensors"); }, {"bad.safetensors: "});
}

// One F32 tensor 'w' of shape [2] at data_offsets [begin, end], with `data_bytes` bytes of data.
std::string one_f32(const std::string& shape, const std::string& offsets, size_t data_bytes = 8) {
  return file_of(R"({"w":{"dtype":"F32","shape":)" + shape + R"(,"data_offsets":)" + offsets + "}}",
                 std::string(data_bytes, '\0'));
}

TEST(Safetensors, EveryDTypeRoundTripsWithItsShapeBytesAndMetadata) {
  const float f32[] = {1.5f, -2.0f, 3.25f, 0.0f, 1e-30f, 6.0f};
  const uint16_t f16[] = {0x3c00, 0xc000, 0x3800};
  const uint16_t bf16[] = {0x3f80, 0xc000};
  const double f64[] = {1e300, -0.5};
  const int8_t i8[] = {-128, 0, 127, 5};
  const uint8_t u8[] = {0, 255, 7};
  const int32_t i32[] = {-1, 2147483647};
  const int64_t i64[] = {std::numeric_limits<int64_t>::min(), 42};
  const std::vector<TensorToWrite> in = {
      {"enc.w", DType::kF32, {2, 3}, f32}, {"f16", DType::kF16, {3}, f16},    {"bf16", DType::kBF16, {1, 2}, bf16},
      {"f64", DType::kF64, {2}, f64},      {"i8", DType::kI8, {2, 2}, i8},    {"u8", DType::kU8, {3}, u8},
      {"i32", DType::kI32, {2}, i32},      {"i64", DType::kI64, {2, 1}, i64}};
  const std::map<std::string, std::string> metadata = {{"format", "nmt"}, {"step", "1200"}};
  TempDir dir;
  const std::string path = dir.file("model.safetensors");
  write_file(path, in, metadata);
  const File file = File::open(path);
  EXPECT_EQ(file.path(), path);
  EXPECT_EQ(file.metadata(), metadata);
  ASSERT_EQ(file.tensors().size(), in.size());
  for (const TensorToWrite& t : in) {
    const TensorInfo* info = file.find(t.name);
    ASSERT_NE(info, nullptr) << t.name;
    EXPECT_EQ(info->dtype, t.dtype) << t.name;
    EXPECT_EQ(info->shape, t.shape) << t.name;
    EXPECT_EQ(info->bytes, static_cast<size_t>(info->numel()) * dtype_size(t.dtype)) << t.name;
    EXPECT_EQ(bytes_of(file.data(*info), info->bytes), bytes_of(t.data, info->bytes)) << t.name;
  }
  EXPECT_EQ(file.find("absent"), nullptr);
  EXPECT_EQ(std::vector<float>(file.f32("enc.w", {2, 3}), file.f32("enc.w", {2, 3}) + 6),
            std::vector<float>(f32, f32 + 6));
  EXPECT_EQ(file.i8("i8", {2, 2})[0], -128);
}

TEST(Safetensors, DTypesHaveTheFormatsNamesAndSizes) {
  const std::map<DType, std::pair<std::string, size_t>> expected = {
      {DType::kF32, {"F32", 4}}, {DType::kF16, {"F16", 2}}, {DType::kBF16, {"BF16", 2}}, {DType::kF64, {"F64", 8}},
      {DType::kI8, {"I8", 1}},   {DType::kU8, {"U8", 1}},   {DType::kI32, {"I32", 4}},   {DType::kI64, {"I64", 8}}};
  for (const auto& [dtype, name_size] : expected) {
    EXPECT_EQ(dtype_name(dtype), name_size.first);
    EXPECT_EQ(dtype_size(dtype), name_size.second);
  }
}

TEST(Safetensors, ScalarsEmptyTensorsAndEmptyFilesAreValid) {
  const float scalar = 7.0f;
  const File file = File::from_bytes(serialize({{"s", DType::kF32, {}, &scalar}, {"e", DType::kF32, {0, 3}, nullptr}}), "f");
  EXPECT_EQ(file.find("s")->numel(), 1);
  EXPECT_EQ(*file.f32("s", {}), 7.0f);
  EXPECT_EQ(file.find("e")->bytes, 0u);
  EXPECT_EQ(file.to_f32("e", {0, 3}), std::vector<float>());
  expect_error<RuntimeError>([&] { file.f32("s", {1}); }, {"f: tensor 's' has shape [], expected [1]"});

  const File none = File::from_bytes(serialize({}), "none");
  EXPECT_TRUE(none.tensors().empty());
  EXPECT_TRUE(none.metadata().empty());
  EXPECT_TRUE(File::from_bytes(file_of("{}"), "bare").tensors().empty());
  EXPECT_EQ(File::from_bytes(serialize({}, {{"k", "v"}}), "meta").metadata().at("k"), "v");
}

// What Hugging Face's reader requires and what mapping needs: the header padded with spaces to a
// multiple of 8, the tensors back to back (no gap, nothing after the last), each at a multiple of
// its element size.
TEST(Safetensors, SerializePadsTheHeaderAndAlignsEveryTensorWithoutGaps) {
  const int8_t i8[3] = {1, 2, 3};
  const float f32[3] = {1, 2, 3};
  const uint16_t f16[1] = {0x3c00};
  const double f64[1] = {2.0};
  const std::string bytes = serialize(
      {{"a", DType::kI8, {3}, i8}, {"b", DType::kF32, {3}, f32}, {"c", DType::kF16, {1}, f16}, {"d", DType::kF64, {1}, f64}});
  uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  const std::string header = bytes.substr(8, n);
  EXPECT_EQ(header.find_last_not_of(' ') + 1, header.find_last_of('}') + 1) << "padded with spaces only";
  const auto json = nlohmann::json::parse(header);
  EXPECT_EQ(json.at("b").at("dtype"), "F32");
  EXPECT_EQ(json.at("b").at("shape"), nlohmann::json::array({3}));
  const File file = File::from_bytes(bytes, "f");
  size_t end = 0;
  std::vector<std::string> order;
  for (const TensorInfo& t : file.tensors()) {
    EXPECT_EQ(t.offset, end) << t.name << " starts where the previous one ends";
    EXPECT_EQ(t.offset % dtype_size(t.dtype), 0u) << t.name;
    end = t.offset + t.bytes;
    order.push_back(t.name);
  }
  EXPECT_EQ(end, bytes.size() - 8 - n);
  EXPECT_EQ(order, (std::vector<std::string>{"d", "b", "c", "a"})) << "largest elements first";
}

TEST(Safetensors, ReadsAFileAsOtherWritersWriteIt) {
  // Hugging Face's layout: "__metadata__" among the tensors, the header padded to 8.
  std::string header = R"({"__metadata__":{"format":"pt"},"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  header.append((8 - header.size() % 8) % 8, ' ');
  const float w[2] = {0.25f, -4.0f};
  const File file = File::from_bytes(file_of(header, bytes_of(w, 8)), "hf");
  EXPECT_EQ(file.metadata().at("format"), "pt");
  EXPECT_EQ(file.f32("w", {2})[1], -4.0f);
}

TEST(Safetensors, AnUnpaddedHeaderIsCopiedSoFloatsAreStillAligned) {
  const float w[2] = {0.25f, -4.0f};
  const std::string header = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";  // 8 + 55: not aligned
  ASSERT_NE((8 + header.size()) % 4, 0u);
  TempDir dir;
  nmt::test::write_bytes(dir.file("w.safetensors"), file_of(header, bytes_of(w, 8)));
  const File file = File::open(dir.file("w.safetensors"));
  const float* p = file.f32("w", {2});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignof(double), 0u);
  EXPECT_EQ(p[0], 0.25f);
  EXPECT_EQ(p[1], -4.0f);
}

TEST(Safetensors, AMappedFileIsReadInPlaceAndSurvivesAMove) {
  std::vector<float> w(1000);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<float>(i);
  TempDir dir;
  write_file(dir.file("w.safetensors"), {{"w", DType::kF32, {10, 100}, w.data()}});
  File file = File::open(dir.file("w.safetensors"));
  const float* p = file.f32("w", {10, 100});
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % alignof(double), 0u);
  File moved = std::move(file);
  EXPECT_EQ(moved.f32("w", {10, 100}), p) << "a move keeps the mapping";
  EXPECT_EQ(std::vector<float>(p, p + 1000), w);
  File assigned = File::from_bytes(serialize({}), "empty");
  assigned = std::move(moved);
  EXPECT_EQ(assigned.to_f32("w", {10, 100}), w);
}

TEST(Safetensors, CheckedAccessorsNameTheTensorShapeAndDType) {
  const float f[2] = {1, 2};
  const int8_t q[2] = {1, 2};
  const File file = File::from_bytes(serialize({{"w", DType::kF32, {1, 2}, f}, {"q", DType::kI8, {2}, q}}), "m.st");
  expect_error<RuntimeError>([&] { file.f32("x", {2}); }, {"m.st: no tensor 'x'"});
  expect_error<RuntimeError>([&] { file.f32("w", {2, 1}); }, {"m.st: tensor 'w' has shape [1, 2], expected [2, 1]"});
  expect_error<RuntimeError>([&] { file.f32("q", {2}); }, {"m.st: tensor 'q' is I8, expected F32"});
  expect_error<RuntimeError>([&] { file.i8("w", {1, 2}); }, {"m.st: tensor 'w' is F32, expected I8"});
  expect_error<RuntimeError>([&] { file.i8("q", {3}); }, {"m.st: tensor 'q' has shape [2], expected [3]"});
  expect_error<RuntimeError>([&] { file.to_f32("q", {2}); }, {"m.st: tensor 'q' is I8, expected a float dtype"});
  expect_error<RuntimeError>([&] { file.to_f32("y", {2}); }, {"m.st: no tensor 'y'"});
}

TEST(Safetensors, NaNOrInfiniteWeightsAreRefused) {
  for (const float bad : {std::nanf(""), INFINITY, -INFINITY}) {
    const float f[3] = {1, bad, 2};
    const File file = File::from_bytes(serialize({{"w", DType::kF32, {3}, f}}), "m.st");
    expect_error<RuntimeError>([&] { file.f32("w", {3}); }, {"m.st: tensor 'w' holds NaN or infinite values"});
    expect_error<RuntimeError>([&] { file.to_f32("w", {3}); }, {"m.st: tensor 'w' holds NaN or infinite values"});
  }
  const uint16_t half_inf[1] = {0x7c00}, bf16_nan[1] = {0x7fc0};
  const double too_large[1] = {1e300};
  const File file = File::from_bytes(serialize({{"h", DType::kF16, {1}, half_inf}, {"b", DType::kBF16, {1}, bf16_nan},
                                                {"d", DType::kF64, {1}, too_large}}),
                                     "m.st");
  for (const char* name : {"h", "b", "d"})
    expect_error<RuntimeError>([&] { file.to_f32(name, {1}); }, {"m.st: tensor '" + std::string(name) + "' holds NaN"});
}

TEST(Safetensors, ToF32ConvertsEveryFloatDType) {
  // 1, -2, 0.5, 65504 (the largest half), 2^-24 (the smallest subnormal), -0.
  const uint16_t f16[] = {0x3c00, 0xc000, 0x3800, 0x7bff, 0x0001, 0x8000};
  const uint16_t bf16[] = {0x3f80, 0xc000, 0x3f00, 0x4780};
  const double f64[] = {1.0, -2.5, 1e-3};
  const float f32[] = {3.0f};
  const File file = File::from_bytes(serialize({{"h", DType::kF16, {6}, f16}, {"b", DType::kBF16, {2, 2}, bf16},
                                                {"d", DType::kF64, {3}, f64}, {"f", DType::kF32, {1}, f32}}),
                                     "m.st");
  EXPECT_EQ(file.to_f32("h", {6}), (std::vector<float>{1.0f, -2.0f, 0.5f, 65504.0f, std::ldexp(1.0f, -24), -0.0f}));
  EXPECT_TRUE(std::signbit(file.to_f32("h", {6})[5]));
  EXPECT_EQ(file.to_f32("b", {2, 2}), (std::vector<float>{1.0f, -2.0f, 0.5f, 65536.0f}));
  EXPECT_EQ(file.to_f32("d", {3}), (std::vector<float>{1.0f, -2.5f, static_cast<float>(1e-3)}));
  EXPECT_EQ(file.to_f32("f", {1}), std::vector<float>{3.0f});
}

// Another writer may put a float tensor at an offset that is not a multiple of 4: it is read by
// copying (to_f32), and refused where a pointer into the file would be misaligned (f32).
TEST(Safetensors, AMisalignedFloatTensorIsCopiedNotPointedInto) {
  const float w = 1.5f;
  const std::string data = std::string("\x01\x02", 2) + bytes_of(&w, 4);
  const std::string header = R"({"q":{"dtype":"I8","shape":[2],"data_offsets":[0,2]},)"
                             R"("w":{"dtype":"F32","shape":[1],"data_offsets":[2,6]}})";
  const File file = File::from_bytes(file_of(header, data), "odd.st");
  EXPECT_EQ(file.to_f32("w", {1}), std::vector<float>{1.5f});
  expect_error<RuntimeError>([&] { file.f32("w", {1}); }, {"odd.st: tensor 'w' starts at byte 2", "not a multiple of 4"});
}

TEST(Safetensors, TensorsAreListedInFileOrder) {
  const std::string header = R"({"z":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("a":{"dtype":"U8","shape":[2],"data_offsets":[1,3]},)"
                             R"("m":{"dtype":"U8","shape":[0],"data_offsets":[1,1]}})";
  const File file = File::from_bytes(file_of(header, "xyz"), "f");
  std::vector<std::string> names;
  for (const TensorInfo& t : file.tensors()) names.push_back(t.name);
  EXPECT_EQ(names, (std::vector<std::string>{"z", "m", "a"}));
  EXPECT_EQ(file.find("a")->offset, 1u);
}

TEST(Safetensors, ATruncatedOrOversizedHeaderIsRefused) {
  expect_refused("", {"bad.safetensors: truncated (0 bytes): not a safetensors file"});
  expect_refused(std::string("\x05\0\0\0\0", 5), {"truncated (5 bytes)"});
  expect_refused(le64(100) + "{}", {"truncated: a 100-byte header in a 10-byte file"});
  expect_refused(le64(200'000'000) + "{}", {"a header of 200000000 bytes, more than the 100000000"});
  expect_refused(le64(std::numeric_limits<uint64_t>::max()) + "{}", {"more than the 100000000"});
}

TEST(Safetensors, AHeaderThatIsNotAJsonObjectIsRefused) {
  expect_refused(file_of("{\"w\":"), {"not a safetensors file (its header is not JSON"});
  expect_refused(file_of(std::string("{\"w\xff\":1}")), {"its header is not JSON"});  // not UTF-8
  expect_refused(file_of("[1, 2]"), {"its header is an array, not a JSON object"});
  expect_refused(file_of("7"), {"its header is 7, not a JSON object"});
  expect_refused(file_of(""), {"its header is not JSON"});
  // Found by fuzz_safetensors: nlohmann's parser throws another exception for this.
  expect_refused(file_of(R"({"w":{"dtype":"F32","shape":[1e400],"data_offsets":[0,4]}})", "abcd"),
                 {"its header holds a number out of range"});
}

TEST(Safetensors, AnEntryWithoutDTypeShapeOrOffsetsIsRefused) {
  expect_refused(file_of(R"({"w":3})"), {"tensor 'w' is 3, expected an object with dtype, shape and data_offsets"});
  expect_refused(file_of(R"({"w":{"shape":[1],"data_offsets":[0,4]}})", "abcd"), {"tensor 'w' has no 'dtype'"});
  expect_refused(file_of(R"({"w":{"dtype":"F32","data_offsets":[0,4]}})", "abcd"), {"tensor 'w' has no 'shape'"});
  expect_refused(file_of(R"({"w":{"dtype":"F32","shape":[1]}})", "abcd"), {"tensor 'w' has no 'data_offsets'"});
}

TEST(Safetensors, AnUnknownDTypeIsRefused) {
  expect_refused(file_of(R"({"w":{"dtype":"BOOL","shape":[1],"data_offsets":[0,1]}})", "a"),
                 {"tensor 'w' has dtype 'BOOL', which nmt does not read"});
  expect_refused(file_of(R"({"w":{"dtype":4,"shape":[1],"data_offsets":[0,1]}})", "a"),
                 {"tensor 'w' has a dtype that is 4, expected a string"});
}

TEST(Safetensors, ANegativeOrNonIntegerShapeIsRefused) {
  expect_refused(one_f32("[-2]", "[0,8]"), {"tensor 'w' has a shape entry -2, expected a size >= 0"});
  expect_refused(one_f32("[2.0]", "[0,8]"), {"tensor 'w' has a shape entry that is 2.0, expected an integer"});
  expect_refused(one_f32("[\"2\"]", "[0,8]"), {"tensor 'w' has a shape entry that is a string"});
  expect_refused(one_f32("2", "[0,8]"), {"tensor 'w' has a shape that is 2, expected an array"});
  expect_refused(one_f32("[18446744073709551615]", "[0,8]"), {"tensor 'w' has a shape entry 18446744073709551615, too large"});
}

TEST(Safetensors, AnElementCountThatOverflowsIsRefused) {
  expect_refused(one_f32("[4294967296,4294967296]", "[0,8]"), {"tensor 'w' has shape [4294967296, 4294967296], too many"});
  expect_refused(one_f32("[4611686018427387904]", "[0,8]"), {"tensor 'w'", "too many elements"});  // * 4 bytes
  // A zero dimension makes it empty, whatever the others are.
  EXPECT_EQ(File::from_bytes(one_f32("[9223372036854775807,0]", "[0,0]"), "f").find("w")->bytes, 0u);
}

TEST(Safetensors, DataOffsetsOutsideTheDataOrOfTheWrongSizeAreRefused) {
  expect_refused(one_f32("[2]", "[8,0]"), {"tensor 'w' has data_offsets [8, 0] reversed"});
  expect_refused(one_f32("[2]", "[0,8]", 4), {"tensor 'w' has data_offsets [0, 8] past the end of the 4-byte data (truncated?)"});
  expect_refused(one_f32("[2]", "[0,18446744073709551615]"), {"tensor 'w'", "past the end"});
  expect_refused(one_f32("[3]", "[0,8]"), {"tensor 'w' has data_offsets [0, 8], 8 bytes, but shape [3] of F32 takes 12"});
  expect_refused(one_f32("[2]", "[0]"), {"tensor 'w' has data_offsets that are not [begin, end]"});
  expect_refused(one_f32("[2]", "[0,8,16]"), {"tensor 'w' has data_offsets that are not [begin, end]"});
  expect_refused(one_f32("[2]", "{\"a\":1}"), {"tensor 'w' has data_offsets that are not [begin, end]"});
  expect_refused(one_f32("[2]", "[-8,0]"), {"tensor 'w' has a data_offsets entry -8, expected a size >= 0"});
  expect_refused(one_f32("[2]", "[0,8.0]"), {"tensor 'w' has a data_offsets entry that is 8.0, expected an integer"});
}

TEST(Safetensors, OverlappingTensorsAreRefused) {
  const std::string header = R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})";
  expect_refused(file_of(header, std::string(12, '\0')), {"tensor 'b' overlaps tensor 'a' (bytes [4, 12) and [0, 8)"});
  // One tensor inside another, after a third.
  const std::string inside = R"({"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},)"
                             R"("b":{"dtype":"U8","shape":[2],"data_offsets":[2,4]},)"
                             R"("c":{"dtype":"U8","shape":[1],"data_offsets":[5,6]}})";
  expect_refused(file_of(inside, std::string(8, '\0')), {"tensor 'b' overlaps tensor 'a'"});
  // The same bytes twice under two names.
  const std::string twice = R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                            R"("b":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  expect_refused(file_of(twice, "xy"), {"tensor 'b' overlaps tensor 'a'"});
}

TEST(Safetensors, ANameGivenTwiceIsRefused) {
  const std::string header = R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  expect_refused(file_of(header, "ab"), {"bad.safetensors: the header names 'w' twice"});
  // Keys of nested objects may repeat across objects.
  const std::string nested = R"({"a":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                             R"("b":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})";
  EXPECT_EQ(File::from_bytes(file_of(nested, "ab"), "f").tensors().size(), 2u);
}

TEST(Safetensors, MetadataThatIsNotStringsIsRefused) {
  expect_refused(file_of(R"({"__metadata__":{"step":1200}})"), {"__metadata__ 'step' is 1200, expected a string"});
  expect_refused(file_of(R"({"__metadata__":{"a":{"b":"c"}}})"), {"__metadata__ 'a' is an object, expected a string"});
  expect_refused(file_of(R"({"__metadata__":["a"]})"), {"__metadata__ is an array, expected an object of strings"});
}

TEST(Safetensors, AMessageStaysOneLineWhateverTheName) {
  // expect_refused checks that the message is one line.
  expect_refused(file_of(R"({"a\nb\u0000":3})"), {"tensor 'a\\x0ab\\x00' is 3"});
  expect_refused(file_of("{\"" + std::string(5000, 'n') + "\":3}"), {"tensor 'nnn", "...' is 3"});
}

// Whatever the bytes, opening is a File or a RuntimeError: every prefix of a valid file and
// every byte of it changed.
TEST(Safetensors, NoCorruptionOfAValidFileIsMoreThanARuntimeError) {
  const float f[3] = {1, 2, 3};
  const int64_t i[2] = {4, 5};
  const std::string good = serialize({{"w", DType::kF32, {3}, f}, {"i", DType::kI64, {2, 1}, i}}, {{"k", "v"}});
  auto try_open = [](const std::string& bytes) {
    try {
      const File file = File::from_bytes(bytes, "f");
      for (const TensorInfo& t : file.tensors()) (void)bytes_of(file.data(t), t.bytes);
    } catch (const RuntimeError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("f: ", 0), 0u) << e.what();
    }
  };
  for (size_t n = 0; n < good.size(); ++n) try_open(good.substr(0, n));
  for (size_t k = 0; k < good.size(); ++k)
    for (const char c : {'\0', '9', '-', '"', '}', '\xff'}) {
      std::string bad = good;
      bad[k] = c;
      try_open(bad);
    }
}

TEST(Safetensors, OpenRefusesWhatIsNotARegularFileAndNamesThePath) {
  TempDir dir;
  expect_error<RuntimeError>([&] { File::open(dir.file("absent.st")); }, {dir.file("absent.st") + ": no such file"});
  expect_error<RuntimeError>([&] { File::open(dir.path()); }, {dir.path() + ": is a directory"});
  const std::string fifo = dir.file("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  expect_error<RuntimeError>([&] { File::open(fifo); }, {fifo + ": not a regular file"});  // without blocking
  nmt::test::write_bytes(dir.file("short.st"), "abc");
  expect_error<RuntimeError>([&] { File::open(dir.file("short.st")); }, {dir.file("short.st") + ": truncated (3 bytes)"});
  nmt::test::write_bytes(dir.file("empty.st"), "");
  expect_error<RuntimeError>([&] { File::open(dir.file("empty.st")); }, {dir.file("empty.st") + ": truncated (0 bytes)"});
  nmt::test::write_bytes(dir.file("bad.st"), one_f32("[3]", "[0,8]"));
  expect_error<RuntimeError>([&] { File::open(dir.file("bad.st")); }, {dir.file("bad.st") + ": tensor 'w' has data_offsets"});
}

TEST(Safetensors, WriteFileReplacesTheOldFileAndNamesThePathOnError) {
  TempDir dir;
  const std::string path = dir.file("w.safetensors");
  nmt::test::write_bytes(path, "old");
  const uint8_t b[1] = {9};
  write_file(path, {{"b", DType::kU8, {1}, b}});
  EXPECT_EQ(nmt::test::slurp(path), serialize({{"b", DType::kU8, {1}, b}}));
  EXPECT_EQ(std::filesystem::directory_iterator(dir.path())->path().string(), path) << "no temporary file left";
  expect_error<RuntimeError>([&] { write_file(dir.file("no/such/dir/w.st"), {}); }, {dir.file("no/such/dir/w.st")});
}

TEST(Safetensors, SerializeRefusesWhatNoFileCanHold) {
  const float f[1] = {1};
  EXPECT_THROW(serialize({{"w", DType::kF32, {1}, f}, {"w", DType::kF32, {1}, f}}), std::invalid_argument);
  EXPECT_THROW(serialize({{"__metadata__", DType::kF32, {1}, f}}), std::invalid_argument);
  EXPECT_THROW(serialize({{"w", DType::kF32, {-1}, f}}), std::invalid_argument);
  EXPECT_THROW(serialize({{"w", DType::kF32, {1}, nullptr}}), std::invalid_argument);
  EXPECT_THROW(serialize({{"w\xff", DType::kF32, {1}, f}}), std::invalid_argument);
}

}  // namespace
}  // namespace safetensors_test
}  // namespace nmt::safetensors
