// TF1's node flags as actorps options (see tf1_flags.hpp).
#include "config/tf1_flags.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "config/cluster_options.hpp"

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

// The option name of an argument "--name=value" or "--name" (empty if it is not an option).
std::string option_name(const std::string& arg) {
  if (arg.size() < 3 || arg.compare(0, 2, "--") != 0)
    return {};
  auto eq = arg.find('=');
  return arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
}

caf::expected<std::vector<std::string>> host_list(const std::string& flag, const std::string& text) {
  std::vector<std::string> out;
  size_t begin = 0;
  for (;;) {
    size_t comma = text.find(',', begin);
    std::string entry = text.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (!parse_endpoint(entry))
      return bad(cat("--", flag, " entry ", out.size(), " \"", entry, "\" is not host:port"));
    out.push_back(entry);
    if (comma == std::string::npos)
      return out;
    begin = comma + 1;
  }
}

std::string quoted(const std::string& text) {
  return cat("\"", text, "\"");
}

std::string quoted_list(const std::vector<std::string>& entries) {
  std::string out = "[";
  for (size_t i = 0; i < entries.size(); ++i)
    out += (i == 0 ? "" : ",") + quoted(entries[i]);
  return out + "]";
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
  std::vector<std::string> out = rest;
  auto job = get("job_name");
  if (job && *job != "ps" && *job != "worker" && *job != "chief")
    return bad(cat("--job_name must be ps, worker or chief, got \"", *job, "\""));
  long index = 0;
  if (auto text = get("task_index")) {
    if (text->empty() || text->size() > 9 || text->find_first_not_of("0123456789") != std::string::npos)
      return bad(cat("--task_index must be a number >= 0, got \"", *text, "\""));
    index = std::stol(*text);
    out.push_back(cat("--node.index=", index));
  }
  for (const char* name : {"ps_hosts", "worker_hosts"})
    if (auto text = get(name)) {
      auto hosts = host_list(name, *text);
      if (!hosts)
        return std::move(hosts.error());
      out.push_back(cat("--", find_flag(name)->option, "=", quoted_list(*hosts)));
    }
  auto chief_hosts = get("chief_hosts");
  std::string role = job ? *job : "";
  if (chief_hosts) {
    auto hosts = host_list("chief_hosts", *chief_hosts);
    if (!hosts)
      return std::move(hosts.error());
    if (hosts->size() != 1)
      return bad(cat("--chief_hosts must name one host:port (the chief is one task), got ", hosts->size()));
    out.push_back(cat("--cluster.chief=", quoted(hosts->front())));
  } else if (auto workers = get("worker_hosts")) {
    // TF1's between-graph layout: worker 0 is the chief, reached at its own address.
    if (job && *job == "chief")
      return bad("--job_name=chief needs --chief_hosts (without it worker 0 is the chief, as in TF1)");
    out.push_back(cat("--cluster.chief=", quoted(workers->substr(0, workers->find(',')))));
    if (job && *job == "worker" && index == 0)
      role = "chief-worker";
  }
  if (!role.empty())
    out.push_back(cat("--node.role=", quoted(role)));
  return out;
}

} // namespace actorps
