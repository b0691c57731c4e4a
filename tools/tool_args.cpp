// Command-line scanning for the model tools.
#include "tools/tool_args.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <cstdio>
#include <cstdlib>

namespace actorps {

caf::expected<tool_args> parse_tool_args(int argc, char** argv, const std::vector<tool_option>& options) {
  tool_args out;
  for (auto& o : options)
    out.values[o.key] = o.fallback;
  auto find = [&](const std::string& key) -> const tool_option* {
    for (auto& o : options)
      if (o.key == key)
        return &o;
    return nullptr;
  };
  bool rest_positional = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (rest_positional || arg.size() < 2 || arg.compare(0, 2, "--") != 0 || arg == "--") {
      if (arg == "--" && !rest_positional)
        rest_positional = true;
      else if (arg == "-h")
        out.help = true;
      else
        out.positional.push_back(arg);
      continue;
    }
    if (arg == "--help") {
      out.help = true;
      continue;
    }
    auto eq = arg.find('=');
    std::string key = arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
    const tool_option* o = find(key);
    if (o == nullptr)
      return caf::make_error(errc::invalid_config, cat("unknown option --", key, " (see --help)"));
    out.given.insert(key);
    if (eq != std::string::npos) {
      out.values[key] = arg.substr(eq + 1);
    } else if (o->flag) {
      out.values[key] = o->flag_value;
    } else if (i + 1 < argc) {
      out.values[key] = argv[++i];
    } else {
      return caf::make_error(errc::invalid_config, cat("option --", key, " needs a value"));
    }
  }
  return out;
}

std::string tool_usage(const std::string& usage, const std::vector<tool_option>& options) {
  std::string out = "usage: " + usage + "\n\noptions:\n";
  for (auto& o : options) {
    std::string name = "  --" + o.key + (o.flag ? "[=VALUE]" : "=VALUE");
    name.resize(std::max<size_t>(name.size() + 2, 30), ' ');
    out += name + o.help + (o.fallback.empty() ? "" : " (default: " + o.fallback + ")") + "\n";
  }
  return out;
}

std::optional<int> begin_tool(int argc, char** argv, const std::vector<tool_option>& options, const std::string& usage,
                              size_t min_positional, size_t max_positional, tool_args& args) {
  auto parsed = parse_tool_args(argc, argv, options);
  if (!parsed)
    return tool_failure(parsed.error(), 2);
  if (parsed->help) {
    std::printf("%s", tool_usage(usage, options).c_str());
    return 0;
  }
  auto n = parsed->positional.size();
  if (n < min_positional || n > max_positional) {
    std::fprintf(stderr, "error: got %zu argument(s), expected %s\n%s", n,
                 min_positional == max_positional ? std::to_string(min_positional).c_str()
                                                  : cat(min_positional, " or more").c_str(),
                 tool_usage(usage, options).c_str());
    return 2;
  }
  args = std::move(*parsed);
  return std::nullopt;
}

int tool_failure(const caf::error& err, int code) {
  std::fprintf(stderr, "error: %s\n", describe(err).c_str());
  return code;
}

caf::expected<int> int_option(const tool_args& args, const std::string& key, int min, int max) {
  const std::string& text = args.get(key);
  char* end = nullptr;
  long v = std::strtol(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || v < min || v > max)
    return caf::make_error(errc::invalid_config, cat("--", key, " must be a whole number in [", min, ", ", max,
                                                     "], got \"", text, "\""));
  return static_cast<int>(v);
}

} // namespace actorps
