// A CAF config that refuses what CAF itself silently ignores: unknown keys and wrongly-typed
// values in the config file, and stray positional arguments. Every node and app derives from it.
#pragma once

#include <caf/actor_system_config.hpp>
#include <caf/config_option_adder.hpp>

#include <string>
#include <vector>

namespace actorps {

/// The option a command-line argument sets: "--train.batch-size=3" and "--cluster.elastic" give
/// "train.batch-size" and "cluster.elastic"; empty for anything else ("-h", "stray", "--").
std::string option_name(const std::string& arg);

class strict_config : public caf::actor_system_config {
public:
  /// What parse_strict decided.
  enum class outcome { run, help_printed, failed };

  /// Returns an option adder for category, e.g. group("train").add(x, "batch-size", "...").
  caf::config_option_adder group(const char* category) { return {custom_options_, category}; }

  /// Parses the command line and the config file (--config-file=F; default caf-application.ini
  /// if present) and checks every key of the file against the declared options. On failure
  /// prints one error naming the file, key or argument to stderr and returns failed.
  outcome parse_strict(int argc, char** argv);

  /// Checks an already-parsed settings dictionary (from `source`, for messages) against the
  /// declared options: every key must be declared and its value must have the declared type.
  /// Returns an invalid_config error naming source and key, or none.
  caf::error check_settings(const caf::settings& parsed, const std::string& source) const;

  /// Parses config text (CAF's INI syntax) and checks it like a file; for tests.
  caf::error check_text(const std::string& text, const std::string& source) const;

  /// Checks the command line's options (the words after the program's name) before CAF parses
  /// them: an unknown option is named with the nearest declared one, a value that does not
  /// parse with the expected type and the value given. Returns an invalid_config error or none.
  caf::error check_command_line(const std::vector<std::string>& args) const;

private:
  /// check_settings' walk; `apply`: an integer given for a real option is stored as a real
  /// (CAF ignores it in a file) unless `given` (the command line's options) overrides it.
  caf::error check_level(const caf::settings& level, const std::string& prefix, const std::string& source,
                         bool apply, const std::vector<std::string>& given) const;
};

} // namespace actorps
