// The metrics' names and HELP texts (docs/config.md, "What a run reports").
#include "observe/metric_catalog.hpp"

#include <cctype>
#include <map>

namespace actorps {

namespace {

bool ends_with(const std::string& s, const std::string& end) {
  return s.size() >= end.size() && s.compare(s.size() - end.size(), end.size(), end) == 0;
}

const std::map<std::string, std::string>& catalog() {
  static const std::map<std::string, std::string> all = {
    {"actorps_global_step", "The global step: the chief's and a trainer's at its last progress line."},
    {"actorps_worker_seen_global_step", "The global step of the values this worker pushed its last step against."},
    {"actorps_worker_steps_total", "Steps this worker computed and pushed."},
    {"actorps_shard_updates_total", "Updates this parameter shard applied."},
    {"actorps_shard_received_bytes_total", "Tensor payload bytes this parameter shard received in pushes."},
    {"actorps_shard_sent_bytes_total", "Tensor payload bytes this parameter shard sent in pulls and push replies."},
    {"actorps_shard_version", "This parameter shard's version: the updates it applied since the run began."},
    {"actorps_straggler_steps", "Sync and ssp: the steps that waited for this worker last, at the last evaluation."},
    {"actorps_stalls_total", "Stall reports: intervals of cluster.stall-warn without a global step."},
    {"actorps_validation_loss", "Mean loss on the validation set at the last evaluation."},
    {"actorps_validation_accuracy", "Accuracy (0 to 1) on the validation set at the last evaluation."},
    {"actorps_test_loss", "Mean loss on the test set at the last evaluation."},
    {"actorps_test_accuracy", "Accuracy (0 to 1) on the test set at the last evaluation."},
    {"actorps_train_loss", "Mean training loss since the previous evaluation (a worker: since its previous report)."},
    {"actorps_loss", "Mean training loss since the previous progress line."},
    {"actorps_examples_per_second", "Training examples per second since the previous progress line or report."},
    {"actorps_global_step_per_second", "Global steps per second since the previous progress line."},
    {"actorps_learning_rate", "The learning rate applied at the last progress line's step."},
    {"actorps_stale_dropped", "Sync: late gradients dropped as stale, at the last evaluation."},
    {"actorps_tensor_bytes_sent_per_step", "Tensor payload bytes sent per worker step, at the last evaluation."},
    {"actorps_tensor_bytes_received_per_step", "Tensor payload bytes received per worker step, at the last evaluation."},
    {"actorps_input_wait_seconds", "Mean time per step the trainer waited for its batch, at the last progress line."},
    {"actorps_step_input_wait_seconds", "Mean time per step this worker waited for its batch (inside the compute time)."},
    {"actorps_step_compute_seconds", "Mean time per step for the batch, forward and backward pass and the pushes sent during backprop."},
    {"actorps_step_push_seconds", "Mean time per step pushing what remained after backprop."},
    {"actorps_step_wait_for_pull_seconds", "Mean time per step waiting for the replies that carry the next values."},
    {"actorps_shard_updates_per_second", "Updates this parameter shard applied per second over the last 2 s."},
    {"actorps_shard_bytes_in_per_second", "Tensor payload bytes received per second over the last 2 s."},
    {"actorps_shard_bytes_out_per_second", "Tensor payload bytes sent per second over the last 2 s."},
  };
  return all;
}

} // namespace

std::optional<exported_scalar> prometheus_scalar(const std::string& tag) {
  if (tag == "stalls" || tag.rfind("stragglers/", 0) == 0)
    return std::nullopt;
  exported_scalar out;
  std::string base = tag;
  std::string unit;
  if (ends_with(base, "_ms")) {
    base.resize(base.size() - 3);
    unit = "_seconds";
    out.scale = 0.001;
  } else if (ends_with(base, "/sec") || ends_with(base, "_per_sec")) {
    base.resize(base.size() - (ends_with(base, "/sec") ? 4 : 8));
    unit = "_per_second";
  }
  out.name = "actorps_";
  for (char c : base)
    out.name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' ? c : '_';
  out.name += unit;
  return out;
}

std::string metric_help(const std::string& name) {
  auto it = catalog().find(name);
  return it != catalog().end() ? it->second : "The TensorBoard scalar of the same name.";
}

} // namespace actorps
