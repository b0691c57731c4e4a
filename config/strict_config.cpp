// Strict validation of CAF config files and command lines.
#include "config/strict_config.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <caf/config_option.hpp>
#include <caf/config_value.hpp>
#include <caf/deep_to_string.hpp>

#include <cstdio>
#include <sstream>
#include <sys/stat.h>

namespace actorps {

namespace {

caf::error check_level(const caf::config_option_set& opts, const caf::settings& level,
                       const std::string& prefix, const std::string& source) {
  for (auto& kvp : level) {
    const std::string& key = kvp.first;
    const caf::config_value& value = kvp.second;
    std::string qualified = prefix.empty() ? key : prefix + "." + key;
    if (auto* sub = caf::get_if<caf::settings>(&value)) {
      if (auto err = check_level(opts, *sub, qualified, source))
        return err;
      continue;
    }
    auto category = prefix.empty() ? std::string{"global"} : prefix;
    const caf::config_option* opt = opts.qualified_name_lookup(category, key);
    if (opt == nullptr)
      return caf::make_error(errc::invalid_config,
                             cat(source, ": unknown key '", qualified, "' (see --long-help for the options)"));
    if (auto err = opt->check(value))
      return caf::make_error(errc::invalid_config,
                             cat(source, ": key '", qualified, "' expects a value of type ",
                                 std::string{opt->type_name().data(), opt->type_name().size()},
                                 ", got ", caf::to_string(value),
                                 " (reals need a decimal point, strings double quotes)"));
  }
  return caf::none;
}

} // namespace

caf::error strict_config::check_settings(const caf::settings& parsed, const std::string& source) const {
  return check_level(custom_options_, parsed, "", source);
}

caf::error strict_config::check_text(const std::string& text, const std::string& source) const {
  std::istringstream in{text};
  auto parsed = parse_config(in);
  if (!parsed)
    return caf::make_error(errc::invalid_config, cat(source, ": ", caf::to_string(parsed.error())));
  return check_settings(*parsed, source);
}

strict_config::outcome strict_config::parse_strict(int argc, char** argv) {
  auto fail = [](const std::string& text) {
    std::fprintf(stderr, "error: %s\n", text.c_str());
    return outcome::failed;
  };
  if (auto err = parse(argc, argv))
    return fail(cat("invalid command line or config file: ", caf::to_string(err)));
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
  if (auto err = check_settings(*parsed, config_file_path))
    return fail(describe(err));
  return outcome::run;
}

} // namespace actorps
