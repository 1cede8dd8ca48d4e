#pragma once
// SentencePiece's model file (a serialized sentencepiece.ModelProto) read and rewritten at the
// protobuf wire level, without protobuf or SentencePiece: `nmt import` gives an imported model's
// SentencePiece models nmt's special-id layout (nmt/text/special_ids.h) and the ids of the
// imported vocabulary. Only the pieces (field 1) are interpreted; the trainer, normalizer and
// denormalizer specs travel as their bytes, so normalization and segmentation stay the original's.
#include <cstdint>
#include <string>
#include <vector>

namespace nmt::text {

// ModelProto.SentencePiece.Type.
enum class PieceType : int { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

struct SpmPiece {
  std::string piece;
  float score = 0;
  PieceType type = PieceType::kNormal;
};

struct SpmProto {
  std::vector<SpmPiece> pieces;
  // Every other top-level field, as its tag and bytes (trainer_spec 2, normalizer_spec 3,
  // self_test_data 4, denormalizer_spec 5), in file order.
  struct Field {
    uint32_t number = 0;
    std::string bytes;
  };
  std::vector<Field> other;
};

// Parses `bytes`; RuntimeError "NAME: not a SentencePiece model (...)" on malformed input.
SpmProto parse_spm_proto(const std::string& bytes, const std::string& name);

// A model over `vocabulary` (its pieces in id order) that segments text as `original` does:
// each piece keeps the original's score and type where the original has it; pieces it lacks
// become UNUSED (never produced by the encoder, still decodable). Ids 0-3 must be "<pad>",
// "<unk>", "<s>", "</s>" (typed control, unknown, control, control). The trainer spec's special
// ids and pieces are set to that layout; its self-test data is dropped (its ids would be stale).
std::string spm_proto_for_vocabulary(const SpmProto& original, const std::vector<std::string>& vocabulary);

}  // namespace nmt::text
