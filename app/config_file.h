#pragma once
// The --config TOML reader: CLI11's, with the inputs it cannot handle refused.
#include <istream>
#include <vector>

#include <CLI/CLI.hpp>

namespace nmt::cli {

// CLI11 2.1's TOML reader turns `key = []` into an option with no value, and reading the
// option then takes the last element of an empty vector: a segmentation fault (found by
// fuzz_config). Such a key is a usage error here. The "++" / "--" items only mark sections.
class CheckedTomlConfig : public CLI::ConfigTOML {
 public:
  std::vector<CLI::ConfigItem> from_config(std::istream& input) const override {
    std::vector<CLI::ConfigItem> items = CLI::ConfigTOML::from_config(input);
    for (const auto& item : items)
      if (item.inputs.empty() && item.name != "++" && item.name != "--")
        throw CLI::ConversionError(item.fullname() + ": no value in the --config file");
    return items;
  }
};

}  // namespace nmt::cli
