// TF_CONFIG, the environment variable in which Kubeflow's TFJob operator, SageMaker and Vertex AI
// hand each TensorFlow process its cluster (TFConfigClusterResolver's layout):
//   {"cluster": {"chief": ["host:port"], "ps": [...], "worker": [...]},
//    "task": {"type": "worker", "index": 0}}
// becomes the actorps options node.role, node.index, cluster.ps, cluster.workers and
// cluster.chief ("master" is TF's older name of the chief; without a chief task worker 0 is the
// chief, as with TF1's flags). actorps-node reads it when no node.role is given. Plain logic.
#pragma once

#include <caf/expected.hpp>

#include <string>
#include <vector>

namespace actorps {

/// Returns the options TF_CONFIG's `json` stands for, or invalid_config naming the field: text
/// that is not JSON, a missing or malformed cluster or task, a job actorps has not (evaluator),
/// an entry that is not host:port, more than one chief, no worker, a task type not in the
/// cluster, or an index outside its job.
caf::expected<std::vector<std::string>> tf_config_options(const std::string& json);

/// A node's arguments (without the program name, TF1 flags translated) with TF_CONFIG's options
/// added when `tf_config` (the variable's value; null or empty: unset) is set and the arguments
/// give no --node.role. Fails as tf_config_options does, or when an argument sets an option
/// TF_CONFIG sets too (naming both).
caf::expected<std::vector<std::string>> with_tf_config(std::vector<std::string> args, const char* tf_config);

} // namespace actorps
