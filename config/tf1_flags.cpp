// TF1's node flags as actorps options (see tf1_flags.hpp).
#include "config/tf1_flags.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "config/cluster_options.hpp"
#include "config/strict_config.hpp"
#include "config/tf_cluster.hpp"

#include <map>
#include <optional>

namespace actorps {

namespace {

struct tf1_flag {
  const char* name;   ///< without the leading dashes
  const char* option; ///< the actorps option it stands for
};

constexpr tf1_flag tf1_flags[] = {{"job_name", "node.role"},
                                  {"task_index", "node.index"},
                                  {"ps_hosts", "cluster.ps"},
                                  {"worker_hosts", "cluster.workers"},
                                  {"chief_hosts", "cluster.chief"}};

caf::error bad(const std::string& text) {
  return caf::make_error(errc::invalid_config, text);
}

const tf1_flag* find_flag(const std::string& name) {
  for (auto& f : tf1_flags)
    if (name == f.name)
      return &f;
  return nullptr;
}

caf::expected<std::vector<std::string>> host_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  for (size_t begin = 0;;) {
    size_t comma = text.find(',', begin);
    out.push_back(text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin));
    if (comma == std::string::npos)
      break;
    begin = comma + 1;
  }
  if (auto err = check_hosts(out, cat("--", flag)))
    return err;
  return out;
}

} // namespace

caf::expected<std::vector<std::string>> translate_tf1_flags(const std::vector<std::string>& args) {
  std::map<std::string, std::string> given;
  std::vector<std::string> rest;
  for (size_t i = 0; i < args.size(); ++i) {
    const tf1_flag* flag = find_flag(option_name(args[i]));
    if (flag == nullptr) {
      rest.push_back(args[i]);
      continue;
    }
    auto eq = args[i].find('=');
    std::string value;
    if (eq != std::string::npos)
      value = args[i].substr(eq + 1);
    else if (i + 1 < args.size())
      value = args[++i];
    else
      return bad(cat("--", flag->name, " needs a value"));
    if (!given.emplace(flag->name, value).second)
      return bad(cat("--", flag->name, " is given twice"));
  }
  if (given.empty())
    return args;
  for (auto& arg : rest)
    for (auto& [name, value] : given)
      if (option_name(arg) == find_flag(name)->option)
        return bad(cat("--", name, " and --", find_flag(name)->option, " are both given (the first is the TF1 "
                                                                        "spelling of the second): use one"));
  auto get = [&](const char* name) -> std::optional<std::string> {
    auto i = given.find(name);
    return i == given.end() ? std::nullopt : std::optional<std::string>{i->second};
  };
  tf_cluster c;
  c.job = get("job_name");
  if (c.job && *c.job != "ps" && *c.job != "worker" && *c.job != "chief")
    return bad(cat("--job_name must be ps, worker or chief, got \"", *c.job, "\""));
  if (auto text = get("task_index")) {
    c.index = whole_number(*text);
    if (!c.index)
      return bad(cat("--task_index must be a number >= 0, got \"", *text, "\""));
  }
  for (auto [name, list] : {std::pair{"ps_hosts", &c.ps}, std::pair{"worker_hosts", &c.workers}})
    if (auto text = get(name)) {
      auto hosts = host_list(name, *text);
      if (!hosts)
        return std::move(hosts.error());
      *list = std::move(*hosts);
    }
  if (auto text = get("chief_hosts")) {
    auto hosts = host_list("chief_hosts", *text);
    if (!hosts)
      return std::move(hosts.error());
    if (hosts->size() != 1)
      return bad(cat("--chief_hosts must name one host:port (the chief is one task), got ", hosts->size()));
    c.chief = hosts->front();
  } else if (c.workers && c.job && *c.job == "chief") {
    return bad("--job_name=chief needs --chief_hosts (without it worker 0 is the chief, as in TF1)");
  }
  std::vector<std::string> out = rest;
  for (auto& option : tf_cluster_options(c))
    out.push_back(std::move(option));
  return out;
}

} // namespace actorps
