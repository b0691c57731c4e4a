// A node's metrics as Prometheus reads them: gauges and counters, each name with the node's
// labels (run, role, index) and optionally one more label pair (worker="2"), rendered in the
// text exposition format 0.0.4. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace actorps {

class metric_registry {
public:
  enum class type { gauge, counter };

  /// Labels every sample carries, e.g. {{"run", "r1"}, {"role", "worker"}, {"index", "0"}}.
  explicit metric_registry(std::map<std::string, std::string> labels = {});

  /// Sets a gauge; `extra` (optional "key", "value") adds a label.
  void set(const std::string& name, double value, std::pair<std::string, std::string> extra = {});

  /// Adds to a counter (created at 0).
  void add(const std::string& name, double delta, std::pair<std::string, std::string> extra = {});

  /// The value of a gauge or counter (0 when absent).
  double value(const std::string& name, std::pair<std::string, std::string> extra = {}) const;

  /// "# HELP" (metric_help) and "# TYPE" lines and the samples per name, sorted by name.
  std::string exposition() const;

  /// The same for several registries of one process (a chief-worker's, a local cluster's): each
  /// name's TYPE once, then every registry's samples with its own labels.
  static std::string exposition_of(const std::vector<const metric_registry*>& all);

private:
  struct family {
    type kind = type::gauge;
    std::map<std::string, double> samples; // by the extra label's rendering ("" or worker="2")
  };
  void update(const std::string& name, type kind, double v, bool add, const std::pair<std::string, std::string>& extra);
  std::string base_labels_;
  mutable std::mutex mtx_;
  std::map<std::string, family> families_;
};

} // namespace actorps
