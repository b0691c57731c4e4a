// TensorFlow cluster layouts as actorps options (see tf_cluster.hpp).
#include "config/tf_cluster.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "config/cluster_options.hpp"
#include "config/strict_config.hpp"

namespace actorps {

namespace {

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

std::optional<long> whole_number(const std::string& text) {
  if (text.empty() || text.size() > 9 || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  return std::stol(text);
}

caf::error check_not_given(const std::vector<std::string>& args, const std::vector<std::string>& options,
                           const std::string& source) {
  for (auto& option : options)
    for (auto& arg : args)
      if (auto name = option_name(arg); !name.empty() && name == option_name(option))
        return caf::make_error(errc::invalid_config, cat(source, " and --", name, " both set ", name, ": use one"));
  return caf::none;
}

caf::error check_hosts(const std::vector<std::string>& hosts, const std::string& what) {
  for (size_t i = 0; i < hosts.size(); ++i)
    if (!parse_endpoint(hosts[i]))
      return caf::make_error(errc::invalid_config, cat(what, " entry ", i, " \"", hosts[i], "\" is not host:port"));
  return caf::none;
}

std::vector<std::string> tf_cluster_options(const tf_cluster& c) {
  std::vector<std::string> out;
  if (c.index)
    out.push_back(cat("--node.index=", *c.index));
  if (c.ps)
    out.push_back(cat("--cluster.ps=", quoted_list(*c.ps)));
  if (c.workers)
    out.push_back(cat("--cluster.workers=", quoted_list(*c.workers)));
  std::string role = c.job.value_or("");
  if (c.chief) {
    out.push_back(cat("--cluster.chief=", quoted(*c.chief)));
  } else if (c.workers && !c.workers->empty()) { // TF1's between-graph layout: worker 0 is the chief
    out.push_back(cat("--cluster.chief=", quoted(c.workers->front())));
    if (role == "worker" && c.index.value_or(0) == 0)
      role = "chief-worker";
  }
  if (!role.empty())
    out.push_back(cat("--node.role=", quoted(role)));
  return out;
}

} // namespace actorps
