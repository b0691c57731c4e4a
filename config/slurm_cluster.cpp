// Slurm's environment as actorps options (see slurm_cluster.hpp).
#include "config/slurm_cluster.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "config/tf_cluster.hpp"

#include <map>
#include <optional>

namespace actorps {

namespace {

caf::error bad(const std::string& text) {
  return caf::make_error(errc::invalid_config, text);
}

// Splits at the commas outside brackets.
std::vector<std::string> top_level_items(const std::string& text) {
  std::vector<std::string> out{""};
  int depth = 0;
  for (char c : text) {
    if (c == ',' && depth == 0) {
      out.emplace_back();
      continue;
    }
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    out.back() += c;
  }
  return out;
}

} // namespace

caf::expected<std::vector<std::string>> expand_hostlist(const std::string& text, size_t max_nodes) {
  auto flaw = [&](const std::string& why) { return bad(cat("SLURM_JOB_NODELIST \"", text, "\": ", why)); };
  auto too_many = [&] { return flaw(cat("names more than ", max_nodes, " nodes, more than the job's tasks")); };
  std::vector<std::string> out;
  for (auto& item : top_level_items(text)) {
    auto open = item.find('[');
    if (open == std::string::npos) {
      if (item.empty() || item.find(']') != std::string::npos)
        return flaw("an empty or malformed name");
      if (out.size() >= max_nodes)
        return too_many();
      out.push_back(item);
      continue;
    }
    auto close = item.find(']', open);
    if (close == std::string::npos)
      return flaw("a '[' without its ']'");
    const std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    for (auto& range : top_level_items(item.substr(open + 1, close - open - 1))) {
      auto dash = range.find('-');
      const std::string first = range.substr(0, dash);
      const std::string last = dash == std::string::npos ? first : range.substr(dash + 1);
      auto from = whole_number(first), to = whole_number(last);
      if (!from || !to)
        return flaw(cat("\"", range, "\" is not a number or a range like 01-03"));
      if (*to < *from)
        return flaw(cat("the range ", range, " runs backwards"));
      if (static_cast<unsigned long>(*to - *from) >= max_nodes - std::min(out.size(), max_nodes))
        return too_many();
      for (long n = *from; n <= *to; ++n) { // (zero-padded to the first bound's width, as Slurm writes it)
        std::string digits = std::to_string(n);
        if (digits.size() < first.size())
          digits.insert(0, first.size() - digits.size(), '0');
        out.push_back(prefix + digits + suffix);
      }
    }
  }
  return out;
}

caf::expected<std::vector<uint32_t>> expand_tasks_per_node(const std::string& text, size_t max_nodes) {
  std::vector<uint32_t> out;
  for (auto& item : top_level_items(text)) {
    auto paren = item.find('(');
    auto count = whole_number(item.substr(0, paren));
    long repeat = 1;
    if (paren != std::string::npos) {
      auto times = item.size() > paren + 3 && item.compare(paren, 2, "(x") == 0 && item.back() == ')'
                     ? whole_number(item.substr(paren + 2, item.size() - paren - 3))
                     : std::nullopt;
      if (!times)
        count.reset();
      else
        repeat = *times;
    }
    if (!count || *count == 0)
      return bad(cat("SLURM_TASKS_PER_NODE \"", text, "\" is not Slurm's count list, e.g. 2(x3),1"));
    if (static_cast<unsigned long>(repeat) > max_nodes - std::min(out.size(), max_nodes))
      return bad(cat("SLURM_TASKS_PER_NODE \"", text, "\" counts more than ", max_nodes, " nodes, more than the job's tasks"));
    out.insert(out.end(), static_cast<size_t>(repeat), static_cast<uint32_t>(*count));
  }
  return out;
}

caf::expected<std::vector<std::string>> translate_slurm(std::vector<std::string> args,
                                                        const std::function<const char*(const char*)>& getenv) {
  bool on = false, chief = false;
  long ps = 1, port_base = 8888;
  std::vector<std::string> rest;
  std::string flag_seen;
  for (auto& arg : args) {
    if (arg == "--slurm") {
      on = true;
    } else if (arg == "--slurm-chief") {
      chief = true;
      flag_seen = "--slurm-chief";
    } else if (arg.rfind("--slurm-ps=", 0) == 0 || arg.rfind("--slurm-port-base=", 0) == 0) {
      auto eq = arg.find('=');
      flag_seen = arg.substr(0, eq);
      auto value = whole_number(arg.substr(eq + 1));
      if (!value)
        return bad(cat(flag_seen, " must be a whole number, got \"", arg.substr(eq + 1), "\""));
      (flag_seen == "--slurm-ps" ? ps : port_base) = *value;
    } else {
      rest.push_back(arg);
    }
  }
  if (!on && !flag_seen.empty())
    return bad(cat(flag_seen, " needs --slurm"));
  if (!on)
    return args;
  auto variable = [&](const char* name) -> caf::expected<std::string> {
    const char* value = getenv(name);
    if (value == nullptr || *value == '\0')
      return bad(cat("--slurm: ", name, " is not set (run the node under srun or sbatch)"));
    return std::string{value};
  };
  std::map<std::string, std::string> var;
  for (const char* name : {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_JOB_NODELIST", "SLURM_TASKS_PER_NODE"}) {
    auto value = variable(name);
    if (!value)
      return std::move(value.error());
    var[name] = std::move(*value);
  }
  const std::string& procid_text = var["SLURM_PROCID"];
  const std::string& ntasks_text = var["SLURM_NTASKS"];
  const std::string& per_node_text = var["SLURM_TASKS_PER_NODE"];
  auto procid = whole_number(procid_text), ntasks = whole_number(ntasks_text);
  if (!procid || !ntasks || *ntasks == 0 || *procid >= *ntasks)
    return bad(cat("--slurm: SLURM_PROCID \"", procid_text, "\" and SLURM_NTASKS \"", ntasks_text,
                   "\" are not a task of the job"));
  auto nodes = expand_hostlist(var["SLURM_JOB_NODELIST"], static_cast<size_t>(*ntasks));
  if (!nodes)
    return std::move(nodes.error());
  auto per_node = expand_tasks_per_node(per_node_text, static_cast<size_t>(*ntasks));
  if (!per_node)
    return std::move(per_node.error());
  if (per_node->size() != nodes->size())
    return bad(cat("--slurm: SLURM_TASKS_PER_NODE \"", per_node_text, "\" counts ", per_node->size(),
                   " nodes, SLURM_JOB_NODELIST names ", nodes->size()));
  std::vector<std::string> hosts; // task i's host:port, in Slurm's block order
  for (size_t n = 0; n < nodes->size(); ++n)
    for (uint32_t k = 0; k < (*per_node)[n]; ++k)
      hosts.push_back(cat((*nodes)[n], ":", port_base + k));
  if (static_cast<long>(hosts.size()) != *ntasks)
    return bad(cat("--slurm: SLURM_TASKS_PER_NODE \"", per_node_text, "\" counts ", hosts.size(),
                   " tasks, SLURM_NTASKS is ", *ntasks));
  const long first_ps = chief ? 1 : 0, first_worker = first_ps + ps;
  if (ps < 1 || first_worker >= *ntasks)
    return bad(cat("--slurm-ps=", ps, " leaves no worker among the job's ", *ntasks, " tasks"));
  tf_cluster c;
  if (chief)
    c.chief = hosts.front();
  c.ps.emplace(hosts.begin() + first_ps, hosts.begin() + first_worker);
  c.workers.emplace(hosts.begin() + first_worker, hosts.end());
  c.job = *procid < first_ps ? "chief" : *procid < first_worker ? "ps" : "worker";
  c.index = *procid < first_ps ? 0 : *procid < first_worker ? *procid - first_ps : *procid - first_worker;
  auto options = tf_cluster_options(c);
  if (auto err = check_not_given(rest, options, "--slurm"))
    return err;
  rest.insert(rest.end(), options.begin(), options.end());
  return rest;
}

} // namespace actorps
