// TensorFlow 1.x's command-line spellings of a cluster node, so the source documents' command
// lines work as written: --job_name, --task_index, --ps_hosts, --worker_hosts, --chief_hosts
// (each as --flag=value or --flag value) become node.role, node.index, cluster.ps,
// cluster.workers and cluster.chief. Without --chief_hosts, as in TF1's between-graph examples,
// worker 0 is the chief: its process runs the chief beside the worker (node.role = chief-worker)
// at worker_hosts[0], where the other workers reach it. Plain logic over the argument list.
#pragma once

#include <caf/expected.hpp>

#include <string>
#include <vector>

namespace actorps {

/// Returns args (without the program name) with every TF1 flag replaced by the actorps option
/// it stands for, in the same place; arguments that are no TF1 flag pass unchanged. Fails with
/// invalid_config naming the flag: an unknown job name, a task index that is not a number, an
/// empty or malformed host list, a flag given twice or beside the option it stands for,
/// --job_name=chief with --worker_hosts but no --chief_hosts, more than one chief host, or a
/// value missing.
caf::expected<std::vector<std::string>> translate_tf1_flags(const std::vector<std::string>& args);

} // namespace actorps
