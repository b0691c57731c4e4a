// TensorFlow cluster layouts as actorps options (see tf_cluster.hpp).
#include "config/tf_cluster.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "config/cluster_options.hpp"

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

// "--cluster.ps=[...]" -> "cluster.ps" (empty: not an option).
std::string option_of(const std::string& arg) {
  if (arg.rfind("--", 0) != 0)
    return {};
  auto eq = arg.find('=');
  return arg.substr(2, eq == std::string::npos ? std::string::npos : eq - 2);
}

} // namespace

caf::error check_not_given(const std::vector<std::string>& args, const std::vector<std::string>& options,
                           const std::string& source) {
  for (auto& option : options)
    for (auto& arg : args)
      if (!option_of(arg).empty() && option_of(arg) == option_of(option))
        return caf::make_error(errc::invalid_config, cat(source, " and --", option_of(arg), " both set ",
                                                         option_of(arg), ": use one"));
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
