// Command lines of the model tools (actorps-export, -eval, -predict): positional arguments and
// --key=value options, strictly checked: an option the tool does not take is an error naming it.
#pragma once

#include <caf/expected.hpp>

#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// One option a tool takes.
struct tool_option {
  tool_option(std::string k, std::string h, std::string f, bool is_flag = false, std::string when_flag = "true")
    : key(std::move(k)), help(std::move(h)), fallback(std::move(f)), flag(is_flag), flag_value(std::move(when_flag)) {}
  std::string key;         ///< without the dashes, e.g. "data.dir"
  std::string help;
  std::string fallback;    ///< the value when absent
  bool flag = false;       ///< "--key" alone means "--key=<flag_value>"
  std::string flag_value = "true";
};

struct tool_args {
  std::vector<std::string> positional;
  std::map<std::string, std::string> values; ///< every declared option, given or its fallback
  std::set<std::string> given;               ///< the options the command line set
  bool help = false;

  const std::string& get(const std::string& key) const { return values.at(key); }
  bool was_given(const std::string& key) const { return given.count(key) > 0; }
};

/// Parses argv[1..]: "--key=value", "--key value" (a non-flag option), "--flag", "--" (the rest
/// is positional), "-h"/"--help". Errors (invalid_config) name the argument.
caf::expected<tool_args> parse_tool_args(int argc, char** argv, const std::vector<tool_option>& options);

/// The usage lines of the MODEL argument every model tool takes (load_saved_model's path kinds).
inline constexpr const char* model_argument_help =
  "  MODEL: a checkpoint directory, a run directory (runs/NAME: its best model), a model\n"
  "         directory (runs/NAME/model) or an .npz written by actorps-export";

/// Returns "usage: USAGE\n\noptions:\n  --key  help (default: x)\n..." for --help.
std::string tool_usage(const std::string& usage, const std::vector<tool_option>& options);

/// The common start of a tool: parses argv; for --help prints the usage and returns 0; for a bad
/// command line, or fewer than min_positional / more than max_positional arguments, prints the
/// error and the usage and returns 2. Otherwise fills args and returns nullopt.
std::optional<int> begin_tool(int argc, char** argv, const std::vector<tool_option>& options, const std::string& usage,
                              size_t min_positional, size_t max_positional, tool_args& args);

/// Prints "error: <err described>" to stderr and returns code.
int tool_failure(const caf::error& err, int code);

/// Parses option key as a whole number in [min, max]; errors name the key.
caf::expected<int> int_option(const tool_args& args, const std::string& key, int min, int max);

} // namespace actorps
