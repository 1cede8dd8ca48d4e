#pragma once
// Small helpers for writing SVG and HTML by hand: the pictures nmt draws are a few hundred
// elements, so a string builder beats a dependency.
#include <string>
#include <string_view>

namespace nmt::viz {

// Escapes &, <, >, " and ' so any text (subwords, sentences) is safe in XML content and
// attribute values. Control characters other than tab/newline are dropped: XML 1.0 forbids them.
std::string xml_escape(std::string_view text);

// A compact number for coordinates and labels: at most `decimals` decimals, no trailing zeros.
std::string compact_number(double value, int decimals = 2);

// A colour on a sequential scale (white → dark blue) for v in [0, 1], as "#rrggbb".
std::string sequential_color(double v);

// The same scale as an xterm-256 colour index (for terminal heatmaps).
int sequential_color_256(double v);

// One of ten well-separated colours for line series (matplotlib's tab10), cycling.
std::string series_color(size_t index);

}  // namespace nmt::viz
