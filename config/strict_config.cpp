// Strict validation of CAF config files and command lines.
#include "config/strict_config.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/config_option.hpp>
#include <caf/config_value.hpp>
#include <caf/deep_to_string.hpp>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>
#include <sys/stat.h>

namespace actorps {

namespace {

// What a value of a CAF option type looks like, for messages ("an integer", "a real number").
std::string expected_value(caf::string_view type) {
  const std::string t{type.data(), type.size()};
  if (t.rfind("int", 0) == 0 || t.rfind("uint", 0) == 0)
    return "an integer";
  if (t.rfind("real", 0) == 0)
    return "a real number";
  if (t == "string")
    return "a string (in a file: in double quotes)";
  if (t == "boolean")
    return "true or false";
  if (t == "timespan")
    return "a duration, e.g. 30s or 100ms";
  if (t.rfind("list", 0) == 0)
    return cat("a list (", t, "), e.g. [64, 32]");
  return cat("a value of type ", t);
}

bool is_real(const caf::config_option& opt) {
  return opt.type_name().compare(0, 4, "real") == 0;
}

// Levenshtein distance between a and b.
size_t distance(const std::string& a, const std::string& b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = up;
    }
  }
  return row[b.size()];
}

// The declared option whose qualified name (e.g. "train.learning-rate") is nearest to `name`,
// if it is near enough to be a misspelling; empty otherwise.
std::string nearest(const caf::config_option_set& opts, const std::string& name) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 4) + 1;
  for (auto& opt : opts) {
    auto category = std::string{opt.category().data(), opt.category().size()};
    auto qualified = (category == "global" ? std::string{} : category + ".")
                     + std::string{opt.long_name().data(), opt.long_name().size()};
    if (auto d = distance(name, qualified); d < best_distance) {
      best_distance = d;
      best = qualified;
    }
  }
  return best;
}

// The option `qualified` ("train.batch-size", or "config-file" for the global category).
const caf::config_option* lookup(const caf::config_option_set& opts, const std::string& qualified) {
  auto dot = qualified.rfind('.');
  if (dot == std::string::npos)
    return opts.qualified_name_lookup("global", qualified);
  return opts.qualified_name_lookup(qualified.substr(0, dot), qualified.substr(dot + 1));
}

// The qualified names the command line sets.
std::vector<std::string> given_options(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (auto& arg : args)
    if (auto name = option_name(arg); !name.empty())
      out.push_back(std::move(name));
  return out;
}

} // namespace

std::string option_name(const std::string& arg) {
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
    return {};
  auto eq = arg.find('=');
  return arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
}

caf::error strict_config::check_level(const caf::settings& level, const std::string& prefix,
                                      const std::string& source, bool apply,
                                      const std::vector<std::string>& given) const {
  for (auto& kvp : level) {
    const std::string& key = kvp.first;
    const caf::config_value& value = kvp.second;
    std::string qualified = prefix.empty() ? key : prefix + "." + key;
    if (auto* sub = caf::get_if<caf::settings>(&value)) {
      if (auto err = check_level(*sub, qualified, source, apply, given))
        return err;
      continue;
    }
    auto category = prefix.empty() ? std::string{"global"} : prefix;
    const caf::config_option* opt = custom_options_.qualified_name_lookup(category, key);
    if (opt == nullptr)
      return caf::make_error(errc::invalid_config,
                             cat(source, ": unknown key '", qualified, "' (see --long-help for the options)"));
    if (auto* integer = caf::get_if<caf::config_value::integer>(&value); integer && is_real(*opt)) {
      // (one rule with the command line: an integer is a fine real; CAF skips it in a file)
      caf::config_value real{static_cast<caf::config_value::real>(*integer)};
      if (apply && !opt->check(real) && std::find(given.begin(), given.end(), qualified) == given.end())
        opt->store(real);
      continue;
    }
    if (opt->check(value))
      return caf::make_error(errc::invalid_config, cat(source, ": key '", qualified, "' expects ",
                                                       expected_value(opt->type_name()), ", got ",
                                                       caf::to_string(value)));
  }
  return caf::none;
}

caf::error strict_config::check_settings(const caf::settings& parsed, const std::string& source) const {
  return check_level(parsed, "", source, false, {});
}

caf::error strict_config::check_text(const std::string& text, const std::string& source) const {
  std::istringstream in{text};
  auto parsed = parse_config(in);
  if (!parsed)
    return caf::make_error(errc::invalid_config, cat(source, ": ", caf::to_string(parsed.error())));
  return check_settings(*parsed, source);
}

caf::error strict_config::check_command_line(const std::vector<std::string>& args) const {
  for (auto& arg : args) {
    auto name = option_name(arg);
    if (name.empty())
      continue; // (short options and stray words: CAF's parse and the remainder check)
    auto eq = arg.find('=');
    if (name == "help" || name == "long-help" || name == "dump-config")
      continue;
    const caf::config_option* opt = lookup(custom_options_, name);
    if (opt == nullptr) {
      auto near = nearest(custom_options_, name);
      return caf::make_error(errc::invalid_config,
                             near.empty() ? cat("unknown option '--", name, "' (see --long-help for the options)")
                                          : cat("unknown option '--", name, "'; did you mean '--", near, "'?"));
    }
    if (eq == std::string::npos)
      continue; // (a flag; CAF names a missing value)
    auto value = arg.substr(eq + 1);
    if (!opt->parse(value))
      return caf::make_error(errc::invalid_config, cat("option '--", name, "' expects ",
                                                       expected_value(opt->type_name()), ", got '", value, "'"));
  }
  return caf::none;
}

namespace {

// CAF's parser error of a config file (e.g. parser_error(unexpected_newline, ({"column" = 1,
// "line" = 3}))) as "config file F, line 3, column 1: unexpected_newline"; empty for another
// error (the command line's are refused before CAF parses: check_command_line).
std::string file_parse_error(const caf::error& err, const std::string& path) {
  static const std::regex form{R"(^parser_error\(([a-z_]+), .*"column" = (\d+).*"line" = (\d+))"};
  const auto text = caf::to_string(err);
  std::smatch m;
  if (path.empty() || !std::regex_search(text, m, form))
    return {};
  return cat("config file ", path, ", line ", m[3].str(), ", column ", m[2].str(), ": ", m[1].str());
}

} // namespace

strict_config::outcome strict_config::parse_strict(int argc, char** argv) {
  auto fail = [](const std::string& text) {
    std::fprintf(stderr, "error: %s\n", text.c_str());
    return outcome::failed;
  };
  const std::vector<std::string> args(argv + std::min(argc, 1), argv + argc);
  if (auto err = check_command_line(args))
    return fail(describe(err));
  // CAF 0.17 takes a boolean on the command line only as a flag (--cluster.elastic); "=true" and
  // "=false" (the way to turn off one that is on by default) are kept from its parse and stored
  // after it, over the file's value as every command-line option is.
  std::vector<char*> rest;
  std::vector<std::pair<const caf::config_option*, std::string>> booleans;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    const caf::config_option* opt = i > 0 && !option_name(arg).empty() ? lookup(custom_options_, option_name(arg)) : nullptr;
    if (opt != nullptr && opt->is_flag() && arg.find('=') != std::string::npos)
      booleans.emplace_back(opt, arg.substr(arg.find('=') + 1));
    else
      rest.push_back(argv[i]);
  }
  std::string file = config_file_path; // (the last --config-file=, else CAF's default)
  for (auto& arg : args) // (CAF names a file it cannot open only as system_error(cannot_open_file, ...))
    if (const std::string key = "--config-file="; arg.compare(0, key.size(), key) == 0) {
      file = arg.substr(key.size());
      if (std::ifstream probe{file}; !probe)
        return fail(cat("config file ", file, ": cannot open it (", std::strerror(errno), ")"));
    }
  if (auto err = parse(static_cast<int>(rest.size()), rest.data())) {
    auto named = file_parse_error(err, file);
    return fail(!named.empty() ? named : cat("invalid command line or config file: ", caf::to_string(err)));
  }
  for (auto& [opt, value] : booleans)
    if (auto v = opt->parse(value)) // (checked above: it parses)
      caf::put(content, std::string{opt->full_name().data(), opt->full_name().size()}, std::move(*v));
  if (cli_helptext_printed)
    return outcome::help_printed;
  if (!remainder.empty())
    return fail(cat("unexpected argument '", remainder.front(),
                    "' (options look like --train.batch-size=128; see --long-help)"));
  struct stat st;
  if (config_file_path.empty() || ::stat(config_file_path.c_str(), &st) != 0)
    return outcome::run; // no file: CAF already failed above when one was named explicitly
  auto parsed = parse_config_file(config_file_path.c_str());
  if (!parsed)
    return fail(cat(config_file_path, ": ", caf::to_string(parsed.error())));
  if (auto err = check_level(*parsed, "", config_file_path, true, given_options(args)))
    return fail(describe(err));
  return outcome::run;
}

} // namespace actorps
