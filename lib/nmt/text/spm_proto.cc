#include "nmt/text/spm_proto.h"

#include <cstring>
#include <stdexcept>
#include <unordered_map>

#include <fmt/format.h>

#include "nmt/text/special_ids.h"
#include "nmt/util/error.h"

namespace nmt::text {
namespace {

enum WireType : uint32_t { kVarint = 0, kFixed64 = 1, kLengthDelimited = 2, kFixed32 = 5 };

class Reader {
 public:
  Reader(const std::string& bytes, const std::string& name) : p_(bytes.data()), end_(p_ + bytes.size()), name_(name) {}
  bool done() const { return p_ == end_; }
  uint64_t varint() {
    uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      const auto byte = static_cast<uint8_t>(*p_++);
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if (byte < 0x80) return value;
    }
    fail("a varint longer than 10 bytes");
  }
  std::string bytes(size_t n) {
    need(n);
    std::string out(p_, n);
    p_ += n;
    return out;
  }
  // The value of a field of `wire` type, as its raw bytes (varints re-read by the caller).
  std::string field_bytes(uint32_t wire) {
    switch (wire) {
      case kVarint: {
        const char* start = p_;
        varint();
        return std::string(start, p_);
      }
      case kFixed64: return bytes(8);
      case kLengthDelimited: return bytes(static_cast<size_t>(varint()));
      case kFixed32: return bytes(4);
      default: fail(fmt::format("wire type {}", wire));
    }
  }
  [[noreturn]] void fail(const std::string& what) const {
    throw RuntimeError(fmt::format("{}: not a SentencePiece model ({})", name_, what));
  }

 private:
  void need(size_t n) const {
    if (static_cast<size_t>(end_ - p_) < n) fail("truncated");
  }
  const char* p_;
  const char* end_;
  const std::string& name_;
};

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out.push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out.push_back(static_cast<char>(v));
}

void put_tag(std::string& out, uint32_t number, uint32_t wire) { put_varint(out, (uint64_t{number} << 3) | wire); }

void put_bytes(std::string& out, uint32_t number, const std::string& bytes) {
  put_tag(out, number, kLengthDelimited);
  put_varint(out, bytes.size());
  out += bytes;
}

// Protobuf's int32 encoding: negative values as 10-byte varints.
void put_int32(std::string& out, uint32_t number, int32_t v) {
  put_tag(out, number, kVarint);
  put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(v)));
}

SpmPiece parse_piece(const std::string& bytes, const std::string& name) {
  SpmPiece piece;
  Reader r(bytes, name);
  while (!r.done()) {
    const uint64_t tag = r.varint();
    const auto number = static_cast<uint32_t>(tag >> 3), wire = static_cast<uint32_t>(tag & 7);
    if (number == 1 && wire == kLengthDelimited) {
      piece.piece = r.bytes(static_cast<size_t>(r.varint()));
    } else if (number == 2 && wire == kFixed32) {
      const std::string b = r.bytes(4);
      std::memcpy(&piece.score, b.data(), 4);  // little-endian, as protobuf writes it
    } else if (number == 3 && wire == kVarint) {
      const uint64_t type = r.varint();
      if (type < 1 || type > 6) r.fail(fmt::format("piece type {}", type));
      piece.type = static_cast<PieceType>(type);
    } else {
      r.field_bytes(wire);  // a field this reader does not need
    }
  }
  return piece;
}

std::string piece_bytes(const SpmPiece& p) {
  std::string out;
  put_bytes(out, 1, p.piece);
  put_tag(out, 2, kFixed32);
  char score[4];
  std::memcpy(score, &p.score, 4);
  out.append(score, 4);
  put_tag(out, 3, kVarint);
  put_varint(out, static_cast<uint64_t>(p.type));
  return out;
}

}  // namespace

SpmProto parse_spm_proto(const std::string& bytes, const std::string& name) {
  SpmProto proto;
  Reader r(bytes, name);
  while (!r.done()) {
    const uint64_t tag = r.varint();
    const auto number = static_cast<uint32_t>(tag >> 3), wire = static_cast<uint32_t>(tag & 7);
    if (number == 0) r.fail("field number 0");
    std::string value = r.field_bytes(wire);
    if (number == 1) {
      if (wire != kLengthDelimited) r.fail("pieces of the wrong wire type");
      proto.pieces.push_back(parse_piece(value, name));
    } else if (wire == kLengthDelimited) {
      proto.other.push_back({number, std::move(value)});
    }
  }
  if (proto.pieces.empty()) r.fail("no pieces");
  bool has_trainer = false;
  for (const auto& f : proto.other) has_trainer |= f.number == 2;
  if (!has_trainer) r.fail("no trainer spec");
  return proto;
}

std::string spm_proto_for_vocabulary(const SpmProto& original, const std::vector<std::string>& vocabulary) {
  static const char* const kSpecial[] = {"<pad>", "<unk>", "<s>", "</s>"};
  if (vocabulary.size() < 4) throw RuntimeError("a vocabulary of fewer than 4 pieces");
  for (int i = 0; i < 4; ++i)
    if (vocabulary[static_cast<size_t>(i)] != kSpecial[i])
      throw RuntimeError(fmt::format("vocabulary id {} is \"{}\", expected \"{}\"", i, vocabulary[static_cast<size_t>(i)],
                                     kSpecial[i]));
  std::unordered_map<std::string, const SpmPiece*> known;
  for (const auto& p : original.pieces) known.emplace(p.piece, &p);
  std::string out;
  for (size_t id = 0; id < vocabulary.size(); ++id) {
    SpmPiece p{vocabulary[id], 0.0f, PieceType::kUnused};
    if (static_cast<int>(id) == kUnkId) {
      p.type = PieceType::kUnknown;
    } else if (id < 4) {
      p.type = PieceType::kControl;
    } else if (auto it = known.find(p.piece); it != known.end()) {
      p.score = it->second->score;
      // The original's own control and unknown pieces are not text: they stay unproduced.
      const PieceType t = it->second->type;
      p.type = t == PieceType::kControl || t == PieceType::kUnknown ? PieceType::kControl : t;
    }
    put_bytes(out, 1, piece_bytes(p));
  }
  for (const auto& f : original.other) {
    if (f.number == 4) continue;  // self-test data
    std::string bytes = f.bytes;
    if (f.number == 2) {  // trainer spec: the last value of a field wins
      put_int32(bytes, 40, kUnkId);
      put_int32(bytes, 41, kBosId);
      put_int32(bytes, 42, kEosId);
      put_int32(bytes, 43, kPadId);
      put_bytes(bytes, 45, "<unk>");
      put_bytes(bytes, 46, "<s>");
      put_bytes(bytes, 47, "</s>");
      put_bytes(bytes, 48, "<pad>");
      put_tag(bytes, 4, kVarint);  // vocab_size
      put_varint(bytes, vocabulary.size());
    }
    put_bytes(out, f.number, bytes);
  }
  return out;
}

}  // namespace nmt::text
