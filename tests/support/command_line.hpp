// A command line given as strings, as a program's main() receives it (argc and argv, the program
// name first), and parse_strict run on one.
#pragma once

#include "config/strict_config.hpp"

#include <string>
#include <utility>
#include <vector>

namespace actorps::test {

/// Owns the words; argv() points into them, so keep the object alive while argv is in use.
class command_line {
public:
  explicit command_line(std::vector<std::string> args) : words_(std::move(args)) {
    words_.insert(words_.begin(), "actorps-test");
    for (auto& w : words_)
      argv_.push_back(w.data());
  }
  command_line(const command_line&) = delete;
  command_line& operator=(const command_line&) = delete;

  int argc() const { return static_cast<int>(argv_.size()); }
  char** argv() { return argv_.data(); }

private:
  std::vector<std::string> words_;
  std::vector<char*> argv_;
};

inline strict_config::outcome parse_args(strict_config& cfg, std::vector<std::string> args) {
  command_line cl{std::move(args)};
  return cfg.parse_strict(cl.argc(), cl.argv());
}

} // namespace actorps::test
