#pragma once
// Attention heatmaps: source subwords along the top, target subwords down the side, one cell
// per (target, source) weight. As SVG for files and reports, as coloured text for terminals.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nmt::viz {

struct AttentionMap {
  std::vector<std::string> source, target;   // subword pieces (each side ending in </s>)
  std::vector<std::vector<float>> weights;   // one row per target piece, one column per source piece
};

// Reads one line of `nmt translate --attention` output ({"source", "target", "attention"}).
// Throws RuntimeError naming `where` when the shapes disagree.
AttentionMap attention_from_json(const nlohmann::json& j, const std::string& where);

// A standalone SVG: the matrix, both token axes, a colour scale from 0 to 1 and a title.
std::string attention_svg(const AttentionMap& map, const std::string& title);

// Rows of coloured cells (xterm 256 colours) with the weight in tenths in each cell, the
// target piece at the left of each row and a numbered key of the source pieces above.
// Without colour, cells show the tenths digit only.
std::string attention_text(const AttentionMap& map, bool color);

}  // namespace nmt::viz
