// The user's experience end to end: pictures, the report (rendered in a real headless
// browser), eval results kept for the report, progress on terminals only, and the
// interactive translator driven through a pseudo-terminal.
#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "nmt/version.h"
#include "test_support.h"

using nmt::test::fixture;
using nmt::test::nmt_binary;
using nmt::test::parse_xml;
using nmt::test::run_command;
using nmt::test::slurp;

namespace {

// One tiny model trained once for the whole suite.
class Ux : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new nmt::test::TempDir("nmt-ux");
    model_ = dir_->file("model");
    auto r = nmt::test::run_once_per_ctest(
        [](const std::string& out) {
          return nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
                 fixture("tiny") + " --out " + out + " --max-steps 200 --valid-every 50 --log-every 25 --lr 5e-3 --seed 3 --threads 1";
        },
        model_);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  static void TearDownTestSuite() {
    delete dir_;
    dir_ = nullptr;
  }
  static nmt::test::TempDir* dir_;
  static std::string model_;
};
nmt::test::TempDir* Ux::dir_ = nullptr;
std::string Ux::model_;

// Runs `command` with its stdin and stdout on a pseudo-terminal (util-linux `script`), feeding
// it `input`; returns everything the terminal showed.
nmt::test::CommandResult run_on_terminal(const std::string& command, const std::string& input, const std::string& tmp) {
  nmt::test::write_bytes(tmp + "/typed", input);
  nmt::test::write_bytes(tmp + "/cmd.sh", command + "\n");
  // The sleep keeps script's stdin open until the program has read what was typed.
  return run_command("(cat " + tmp + "/typed; sleep 3) | script -qefc 'bash " + tmp + "/cmd.sh' /dev/null");
}

// Decodes an 8-bit RGB/RGBA PNG (what Chromium writes) and counts pixels unlike the first one
// and distinct colours. Returns false when the file is not such a PNG.
bool png_content(const std::string& bytes, size_t& differing, size_t& colours, size_t& total) {
  if (bytes.size() < 8 || bytes.compare(0, 8, "\x89PNG\r\n\x1a\n") != 0) return false;
  auto be32 = [&](size_t p) {
    return (uint32_t(uint8_t(bytes[p])) << 24) | (uint32_t(uint8_t(bytes[p + 1])) << 16) |
           (uint32_t(uint8_t(bytes[p + 2])) << 8) | uint32_t(uint8_t(bytes[p + 3]));
  };
  uint32_t width = 0, height = 0;
  int channels = 0;
  std::string idat;
  for (size_t p = 8; p + 8 <= bytes.size();) {
    const uint32_t len = be32(p);
    const std::string type = bytes.substr(p + 4, 4);
    if (p + 12 + len > bytes.size()) return false;
    if (type == "IHDR") {
      width = be32(p + 8);
      height = be32(p + 12);
      const int depth = uint8_t(bytes[p + 16]), color = uint8_t(bytes[p + 17]), interlace = uint8_t(bytes[p + 20]);
      if (depth != 8 || interlace != 0 || (color != 2 && color != 6)) return false;
      channels = color == 2 ? 3 : 4;
    } else if (type == "IDAT") {
      idat += bytes.substr(p + 8, len);
    }
    p += 12 + len;
  }
  if (!width || !height) return false;
  const size_t stride = size_t(width) * channels;
  std::string raw((stride + 1) * height, '\0');
  uLongf raw_len = raw.size();
  if (uncompress(reinterpret_cast<Bytef*>(raw.data()), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK ||
      raw_len != raw.size())
    return false;
  std::vector<uint8_t> img(stride * height), prev(stride, 0);
  for (uint32_t y = 0; y < height; ++y) {
    const uint8_t filter = uint8_t(raw[y * (stride + 1)]);
    const uint8_t* in = reinterpret_cast<const uint8_t*>(raw.data()) + y * (stride + 1) + 1;
    uint8_t* out = img.data() + y * stride;
    for (size_t x = 0; x < stride; ++x) {
      const int a = x >= size_t(channels) ? out[x - channels] : 0, b = prev[x], c = x >= size_t(channels) ? prev[x - channels] : 0;
      int v = in[x];
      if (filter == 1) v += a;
      else if (filter == 2) v += b;
      else if (filter == 3) v += (a + b) / 2;
      else if (filter == 4) {
        const int pa = std::abs(b - c), pb = std::abs(a - c), pc = std::abs(a + b - 2 * c);
        v += (pa <= pb && pa <= pc) ? a : (pb <= pc ? b : c);
      } else if (filter != 0) return false;
      out[x] = uint8_t(v);
    }
    std::copy(out, out + stride, prev.begin());
  }
  std::set<uint32_t> seen;
  differing = 0;
  total = size_t(width) * height;
  for (size_t i = 0; i < total; ++i) {
    const uint8_t* px = img.data() + i * channels;
    const uint32_t rgb = (uint32_t(px[0]) << 16) | (uint32_t(px[1]) << 8) | px[2];
    if (seen.size() < 100000) seen.insert(rgb);
    if (px[0] != img[0] || px[1] != img[1] || px[2] != img[2]) ++differing;
  }
  colours = seen.size();
  return true;
}

size_t count_cells(const nmt::test::XmlElement& root) {
  size_t n = 0;
  for (const auto* r : root.find_all("rect")) n += r->attr("class") == "cell";
  return n;
}

}  // namespace

TEST_F(Ux, PlotDrawsTheRunsCurves) {
  nmt::test::TempDir t;
  auto r = run_command(nmt_binary() + " plot " + model_ + " -o " + t.file("c.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto root = parse_xml(slurp(t.file("c.svg")));
  auto lines = root->find_all("polyline");
  ASSERT_EQ(lines.size(), 3u);  // training loss, validation loss, validation BLEU
  // 200 steps logged every 25: 8 training points; validations at 50..200: 4 points.
  const std::string train = lines[0]->attr("points"), valid = lines[1]->attr("points");
  EXPECT_EQ(std::count(train.begin(), train.end(), ','), 8);
  EXPECT_EQ(std::count(valid.begin(), valid.end(), ','), 4);
  auto r2 = run_command(nmt_binary() + " plot " + model_ + " " + model_ + " --x time -o " + t.file("t.svg"));
  ASSERT_EQ(r2.exit_code, 0) << r2.err;
  EXPECT_EQ(parse_xml(slurp(t.file("t.svg")))->find_all("polyline").size(), 6u);
  EXPECT_NE(slurp(t.file("t.svg")).find("wall time (min)"), std::string::npos);
  auto bad = run_command(nmt_binary() + " plot " + t.file("nope") + " -o " + t.file("x.svg"));
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("nope"), std::string::npos) << bad.err;
}

TEST_F(Ux, AttentionSvgMatchesTheAttentionNumbers) {
  nmt::test::TempDir t;
  auto r = run_command(nmt_binary() + " translate -m " + model_ + " --input " + fixture("tiny.en") + " --attention " +
                       t.file("att.jsonl") + " --attention-svg " + t.file("a.svg"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(t.file("att.jsonl"));
  std::string line;
  size_t n = 0;
  while (std::getline(in, line)) {
    ++n;
    auto j = nlohmann::json::parse(line);
    const std::string svg = slurp(t.file("a-" + std::to_string(n) + ".svg"));
    ASSERT_FALSE(svg.empty()) << "a-" << n << ".svg";
    auto root = parse_xml(svg);
    EXPECT_EQ(count_cells(*root), j["source"].size() * j["target"].size());
  }
  EXPECT_EQ(n, 8u);
  // One line on stdin: the file itself.
  auto one = run_command("echo 'A man is riding a bike.' | " + nmt_binary() + " translate -m " + model_ + " --attention-svg " +
                         t.file("one.svg"));
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_GT(count_cells(*parse_xml(slurp(t.file("one.svg")))), 0u);
  auto text = run_command(nmt_binary() + " attention -m " + model_ + " 'A man is riding a bike.' --text");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_NE(text.out.find("source: 0="), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find('\x1b'), std::string::npos);  // not a terminal: no colour codes
  auto beam = run_command(nmt_binary() + " translate -m " + model_ + " --beam 2 --attention-svg " + t.file("b.svg") + " < " +
                          fixture("tiny.en"));
  // Beam search records attention too: the best hypothesis's, one picture per line.
  ASSERT_EQ(beam.exit_code, 0) << beam.err;
  EXPECT_GT(count_cells(*parse_xml(slurp(t.file("b-1.svg")))), 0u);
}

TEST_F(Ux, EvalKeepsResultsAndReportShowsThemInABrowser) {
  nmt::test::TempDir t;
  const std::string eval = nmt_binary() + " eval -m " + model_ + " --src " + fixture("tiny.en") + " --ref " + fixture("tiny.fr");
  ASSERT_EQ(run_command(eval + " --no-record").exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(model_ + "/evals.jsonl"));
  auto e = run_command(eval + " --json");
  ASSERT_EQ(e.exit_code, 0) << e.err;
  const double bleu = nlohmann::json::parse(e.out)["bleu"]["score"].get<double>();
  auto record = nlohmann::json::parse(slurp(model_ + "/evals.jsonl"));
  EXPECT_EQ(record["test_set"], "tiny");
  EXPECT_DOUBLE_EQ(record["bleu"]["score"].get<double>(), bleu);

  auto r = run_command(nmt_binary() + " report " + model_ + " -o " + t.file("report.html") + " --examples 4 --heatmaps 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string html = slurp(t.file("report.html"));
  auto root = parse_xml(html);
  EXPECT_EQ(root->find_all("svg").size(), 1u + 2u);  // curves + two heatmaps
  std::map<std::string, const nmt::test::XmlElement*> tables;
  for (const auto* tb : root->find_all("table")) tables[tb->attr("id")] = tb;
  ASSERT_TRUE(tables.count("evals") && tables.count("examples") && tables.count("summary"));
  EXPECT_EQ(tables["examples"]->find_all("tr").size(), 1u + 4u);
  bool found_bleu = false;
  for (const auto* td : tables["evals"]->find_all("td")) found_bleu |= td->text == fmt::format("{:.2f}", bleu);
  EXPECT_TRUE(found_bleu) << html;
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);  // self-contained

  const std::string chromium = std::filesystem::exists("/usr/bin/chromium") ? "/usr/bin/chromium" : "";
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it): browser check skipped";
  auto shot = run_command("cd " + t.path() + " && timeout 120 " + chromium +
                          " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
                          " --hide-scrollbars --window-size=1280,1600 --screenshot=" + t.file("shot.png") + " file://" +
                          t.file("report.html"));
  ASSERT_EQ(shot.exit_code, 0) << shot.err;
  size_t differing = 0, colours = 0, total = 0;
  ASSERT_TRUE(png_content(slurp(t.file("shot.png")), differing, colours, total)) << "not a PNG screenshot";
  EXPECT_GT(differing, total / 50) << "the page rendered (almost) blank";
  EXPECT_GT(colours, 20u) << "too few colours for text, tables, curves and heatmaps";
}

TEST_F(Ux, EvalThatCannotRecordPrintsItsScoresAndFailsWithoutHalfARecord) {
  // evals.jsonl on a full disk (/dev/full): the scores still reach stdout, the failure is an
  // error naming the file (exit 1), not a warning and exit 0.
  nmt::test::TempDir t;
  const std::string model = t.file("model");
  std::filesystem::copy(model_, model, std::filesystem::copy_options::recursive);
  std::filesystem::remove(model + "/evals.jsonl");
  std::filesystem::create_symlink("/dev/full", model + "/evals.jsonl");
  auto e = run_command(nmt_binary() + " eval -m " + model + " --src " + fixture("tiny.en") + " --ref " + fixture("tiny.fr"));
  EXPECT_EQ(e.exit_code, 1) << e.err;
  EXPECT_NE(e.out.find("BLEU|"), std::string::npos) << e.out;
  EXPECT_NE(e.err.find("evals.jsonl: cannot append: No space left on device"), std::string::npos) << e.err;
}

TEST_F(Ux, AModelOfANewerFormatIsRefusedInOneLine) {
  nmt::test::TempDir t;
  const std::string model = t.file("model");
  std::filesystem::copy(model_, model, std::filesystem::copy_options::recursive);
  auto config = nlohmann::json::parse(slurp(model + "/config.json"));
  EXPECT_EQ(config["format"], 2);
  EXPECT_EQ(config["nmt_version"], nmt::kVersion);  // from CMakeLists.txt's project(VERSION)
  config["format"] = 3;
  config["nmt_version"] = "9.0.0";
  nmt::test::write_bytes(model + "/config.json", config.dump());
  auto r = run_command("echo hello | " + nmt_binary() + " translate -m " + model);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find(model + "/config.json: model format 3 is newer than this nmt"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("written by nmt 9.0.0"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
}

// A model directory of format 1 (model.pt alone, as nmt before 0.x wrote them) still translates,
// and `nmt upgrade` gives it the model.safetensors the engine reads, in place, saying so in one
// line; the translations stay the same.
TEST_F(Ux, AModelDirectoryOfFormat1TranslatesAndUpgradesInPlace) {
  nmt::test::TempDir t;
  const std::string model = t.file("model");
  std::filesystem::copy(model_, model, std::filesystem::copy_options::recursive);
  ASSERT_TRUE(std::filesystem::exists(model + "/model.safetensors"));
  ASSERT_TRUE(std::filesystem::exists(model + "/model.pt"));
  const std::string translate = nmt_binary() + " translate --threads 1 -i " + fixture("tiny.en") + " -m ";
  const auto expected = run_command(translate + model_);
  ASSERT_EQ(expected.exit_code, 0) << expected.err;
  std::filesystem::remove(model + "/model.safetensors");
  auto config = nlohmann::json::parse(slurp(model + "/config.json"));
  config["format"] = 1;
  nmt::test::write_bytes(model + "/config.json", config.dump());
  const auto old = run_command(translate + model);
  ASSERT_EQ(old.exit_code, 0) << old.err;
  EXPECT_EQ(old.out, expected.out);

  const auto up = run_command(nmt_binary() + " upgrade " + model);
  ASSERT_EQ(up.exit_code, 0) << up.err;
  EXPECT_EQ(up.err, model + ": model format 2: wrote model.safetensors (the earlier files kept)\n");
  EXPECT_TRUE(std::filesystem::exists(model + "/model.safetensors"));
  EXPECT_TRUE(std::filesystem::exists(model + "/model.pt"));
  EXPECT_EQ(nlohmann::json::parse(slurp(model + "/config.json"))["format"], 2);
  const auto after = run_command(translate + model + " --engine native");
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, expected.out);
  const auto again = run_command(nmt_binary() + " upgrade " + model);
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(again.err, model + ": already model format 2, nothing to do\n");
  const auto missing = run_command(nmt_binary() + " upgrade " + t.file("nowhere"));
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_EQ(std::count(missing.err.begin(), missing.err.end(), '\n'), 1) << missing.err;
}

TEST_F(Ux, InteractiveTranslatorOnAPseudoTerminal) {
  nmt::test::TempDir t;
  auto r = run_on_terminal(nmt_binary() + " translate -m " + model_ + " --threads 1",
                           "A man is riding a bike.\n:attn\n:nonsense\n:quit\n", t.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string& screen = r.out;
  EXPECT_NE(screen.find("Type a sentence"), std::string::npos) << screen;
  EXPECT_NE(screen.find("> "), std::string::npos) << screen;
  EXPECT_NE(screen.find(" ms)"), std::string::npos) << screen;        // the time each line took
  EXPECT_NE(screen.find("source: 0="), std::string::npos) << screen;  // :attn
  EXPECT_NE(screen.find("\x1b[48;5;"), std::string::npos) << screen;  // coloured cells
  EXPECT_NE(screen.find("unknown command :nonsense"), std::string::npos) << screen;
  // Ctrl-D (end of input) leaves too.
  auto eof = run_on_terminal(nmt_binary() + " translate -m " + model_ + " --threads 1", "A man.\n\x04", t.path());
  EXPECT_EQ(eof.exit_code, 0) << eof.out;
  // Not a terminal: a clean filter, no prompt and no timing.
  auto pipe = run_command("printf 'A man.\\n:attn\\n' | " + nmt_binary() + " translate -m " + model_);
  ASSERT_EQ(pipe.exit_code, 0) << pipe.err;
  EXPECT_EQ(std::count(pipe.out.begin(), pipe.out.end(), '\n'), 2);
  EXPECT_EQ(pipe.err.find("> "), std::string::npos);
  EXPECT_EQ(pipe.out.find("source:"), std::string::npos);
}

TEST_F(Ux, TrainingProgressIsLiveOnATerminalAndPlainOtherwise) {
  nmt::test::TempDir t;
  const std::string train = nmt_binary() + " train --preset transformer-tiny --train " + fixture("tiny") + " --valid " +
                            fixture("tiny") + " --max-steps 30 --valid-every 15 --log-every 10 --threads 1 --out ";
  auto tty = run_on_terminal(train + t.file("tty"), "", t.path());
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("\r\x1b[Kepoch "), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("epoch ETA"), std::string::npos) << tty.out;
  EXPECT_NE(tty.out.find("validation | step 15"), std::string::npos) << tty.out;  // permanent lines stay
  auto plain = run_command(train + t.file("plain"));
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.err.find('\r'), std::string::npos);
  EXPECT_NE(plain.err.find("step 10 | epoch"), std::string::npos) << plain.err;
  auto quiet = run_on_terminal(train + t.file("quiet") + " --quiet", "", t.path());
  ASSERT_EQ(quiet.exit_code, 0);
  EXPECT_EQ(quiet.out.find("epoch"), std::string::npos) << quiet.out;
  // Every run appends machine-readable metrics.
  std::ifstream m(t.file("plain") + "/metrics.jsonl");
  std::string line;
  size_t train_lines = 0, valid_lines = 0;
  while (std::getline(m, line)) {
    auto j = nlohmann::json::parse(line);
    if (j["event"] == "train") {
      ++train_lines;
      for (const char* k : {"step", "epoch", "train_loss", "lr", "tokens_per_s", "wall_time"}) EXPECT_TRUE(j.contains(k)) << k;
    } else if (j["event"] == "valid") {
      ++valid_lines;
      for (const char* k : {"step", "val_loss", "val_bleu", "wall_time"}) EXPECT_TRUE(j.contains(k)) << k;
    }
  }
  EXPECT_EQ(train_lines, 3u);
  EXPECT_EQ(valid_lines, 2u);
}

TEST_F(Ux, EvalShowsProgressOnlyOnATerminal) {
  nmt::test::TempDir t;
  const std::string eval = nmt_binary() + " eval -m " + model_ + " --src " + fixture("tiny.en") + " --ref " + fixture("tiny.fr") +
                           " --no-record";
  auto tty = run_on_terminal(eval, "", t.path());
  ASSERT_EQ(tty.exit_code, 0) << tty.out;
  EXPECT_NE(tty.out.find("translating: 8/8 sentences"), std::string::npos) << tty.out;
  auto plain = run_command(eval);
  EXPECT_EQ(plain.err.find("translating:"), std::string::npos) << plain.err;
}
