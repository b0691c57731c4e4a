// TF_CONFIG as actorps options (see tf_config.hpp).
#include "config/tf_config.hpp"

#include "common/errc.hpp"
#include "common/json_reader.hpp"
#include "common/log.hpp"
#include "config/strict_config.hpp"
#include "config/tf_cluster.hpp"

#include <cmath>
#include <map>

namespace actorps {

namespace {

caf::error bad(const std::string& text) {
  return caf::make_error(errc::invalid_config, cat("TF_CONFIG ", text));
}

// cluster.<job>: a list of host:port strings.
caf::expected<std::vector<std::string>> job_hosts(const json_value& list, const std::string& job) {
  std::vector<std::string> out;
  const std::string what = cat("cluster.", job);
  if (!list.is(json_value::kind::array))
    return bad(cat(what, " must be a list of \"host:port\" strings"));
  for (auto& entry : list.items) {
    if (!entry.is(json_value::kind::string))
      return bad(cat(what, " must be a list of \"host:port\" strings"));
    out.push_back(entry.text);
  }
  if (auto err = check_hosts(out, cat("TF_CONFIG ", what)))
    return err;
  return out;
}

std::string without_prefix(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0 ? text.substr(prefix.size()) : text;
}

} // namespace

caf::expected<std::vector<std::string>> tf_config_options(const std::string& json) {
  auto parsed = parse_json(json, "TF_CONFIG");
  if (!parsed)
    return caf::make_error(errc::invalid_config, // (not JSON: a bad configuration; the reader says "TF_CONFIG: byte N: ...")
                           cat("TF_CONFIG is not JSON (", without_prefix(context_of(parsed.error()), "TF_CONFIG: "),
                               "); it holds an object such as {\"cluster\": {\"worker\": [\"host:port\"]}, "
                               "\"task\": {\"type\": \"worker\", \"index\": 0}}"));
  if (!parsed->is(json_value::kind::object))
    return caf::make_error(errc::invalid_config, "TF_CONFIG must be a JSON object with \"cluster\" and \"task\"");
  const json_value* cluster = parsed->find("cluster");
  if (cluster == nullptr || !cluster->is(json_value::kind::object))
    return bad("has no \"cluster\" object");
  const json_value* task = parsed->find("task");
  if (task == nullptr || !task->is(json_value::kind::object))
    return bad("has no \"task\" object");
  tf_cluster c;
  std::vector<std::string> chiefs;          // chief and master (TF's older name) together
  std::map<std::string, size_t> tasks_of;   // per job
  for (auto& [job, list] : cluster->members) {
    if (job != "chief" && job != "master" && job != "ps" && job != "worker")
      return bad(cat("cluster.", job, ": actorps has no such job (chief, master, ps, worker)"));
    auto hosts = job_hosts(list, job);
    if (!hosts)
      return std::move(hosts.error());
    tasks_of[job] = hosts->size();
    if (job == "ps")
      c.ps = std::move(*hosts);
    else if (job == "worker")
      c.workers = std::move(*hosts);
    else
      chiefs.insert(chiefs.end(), hosts->begin(), hosts->end());
  }
  if (chiefs.size() > 1)
    return bad(cat("cluster.chief must list one task, got ", chiefs.size()));
  if (!chiefs.empty())
    c.chief = chiefs.front();
  if (!c.workers || c.workers->empty())
    return bad("cluster.worker must list at least one task");
  const json_value* type = task->find("type");
  const std::string job = type && type->is(json_value::kind::string) ? type->text : "";
  if (job != "chief" && job != "master" && job != "ps" && job != "worker")
    return bad(cat("task.type must be chief, master, ps or worker, got \"", type ? (type->is(json_value::kind::string) ? type->text : "(not a string)") : "nothing", "\""));
  c.job = job == "master" ? "chief" : job;
  const json_value* index = task->find("index");
  if (index == nullptr || !index->is(json_value::kind::number) || index->number < 0
      || index->number != std::floor(index->number) || index->number > 1e9)
    return bad(cat("task.index must be a whole number >= 0, got ",
                   index == nullptr ? std::string{"nothing"}
                                    : index->is(json_value::kind::number) ? cat(index->number) : std::string{"not a number"}));
  c.index = static_cast<long>(index->number);
  const size_t tasks = *c.job == "chief" ? chiefs.size() : tasks_of[job];
  if (static_cast<size_t>(*c.index) >= tasks)
    return bad(cat("task.index ", *c.index, " is outside cluster.", job, ", which lists ", tasks, " task",
                   tasks == 1 ? "" : "s"));
  return tf_cluster_options(c);
}

caf::expected<std::vector<std::string>> with_tf_config(std::vector<std::string> args, const char* tf_config) {
  if (tf_config == nullptr || *tf_config == '\0')
    return args;
  for (auto& arg : args)
    if (option_name(arg) == "node.role")
      return args; // (a role given: the command line decides)
  auto options = tf_config_options(tf_config);
  if (!options)
    return std::move(options.error());
  if (auto err = check_not_given(args, *options, "TF_CONFIG"))
    return err;
  args.insert(args.end(), options->begin(), options->end());
  return args;
}

} // namespace actorps
