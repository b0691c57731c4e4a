// What Prometheus sees of a node: each TensorBoard tag's metric name in base units (seconds, bytes,
// "_per_second") and every metric's HELP text, after Prometheus' naming conventions
// (promtool check metrics passes on every node: integration.prometheus).
#pragma once

#include <optional>
#include <string>

namespace actorps {

/// A TensorBoard scalar as a Prometheus gauge: its name and the factor to its base unit.
struct exported_scalar {
  std::string name;
  double scale = 1.0;
};

/// The gauge a TensorBoard tag becomes: "actorps_" and the tag with every character outside
/// [a-zA-Z0-9_] as '_', a "_ms" ending as "_seconds" (scale 0.001), a "/sec" or "_per_sec" ending
/// as "_per_second" ("step/push_ms" -> actorps_step_push_seconds). nullopt for the tags that a
/// labelled metric or a counter already carries ("stragglers/worker_J", "stalls").
std::optional<exported_scalar> prometheus_scalar(const std::string& tag);

/// The HELP text of a metric: its entry in the catalog, or (a tag no entry names) the tag it
/// comes from.
std::string metric_help(const std::string& name);

} // namespace actorps
