// nmt_split_sentences LANG: each stdin line's sentences (text/sentence_split.h) on one stdout
// line, separated by tabs. What scripts/bench/sentence-split.sh compares with other splitters.
#include <cstdio>
#include <iostream>
#include <string>

#include "nmt/text/sentence_split.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: nmt_split_sentences LANG < paragraphs > sentences\n");
    return 2;
  }
  const nmt::text::SentenceSplitter splitter(argv[1]);
  std::string line, out;
  while (std::getline(std::cin, line)) {
    out.clear();
    for (const auto& s : splitter.split(line)) (out.empty() ? out : out += '\t') += line.substr(s.begin, s.end - s.begin);
    std::cout << out << '\n';
  }
  std::cout.flush();
  return std::cout ? 0 : 1;
}
