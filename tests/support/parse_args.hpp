// Runs a strict_config's parse_strict on a command line given as strings (the program name is
// added), as a node's main() would.
#pragma once

#include "config/strict_config.hpp"

#include <string>
#include <vector>

namespace actorps::test {

inline strict_config::outcome parse_args(strict_config& cfg, std::vector<std::string> args) {
  args.insert(args.begin(), "actorps-test");
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  return cfg.parse_strict(static_cast<int>(argv.size()), argv.data());
}

} // namespace actorps::test
