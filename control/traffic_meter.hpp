// The chief's count of the tensor bytes the workers moved: what their progress reports say was
// pushed to and received from the shards (tensor payloads, see payload_bytes), as totals and per
// worker step, for every metrics row and summary.json. Plain logic, no CAF.
#pragma once

#include "common/json.hpp"

#include <cstdint>

namespace actorps {

class traffic_meter {
public:
  /// Counts one progress report's bytes.
  void add(uint64_t sent, uint64_t received) {
    sent_ += sent;
    received_ += received;
  }

  uint64_t sent() const { return sent_; }
  uint64_t received() const { return received_; }

  /// The averages per worker step (0 before the first step).
  double per_step_sent(int64_t worker_steps) const { return per_step(sent_, worker_steps); }
  double per_step_received(int64_t worker_steps) const { return per_step(received_, worker_steps); }

  /// Adds tensor_bytes_sent / _received (totals) and sent_bytes_per_step /
  /// received_bytes_per_step (averages over `worker_steps`, 0 before the first step) to row.
  void describe(json_object& row, int64_t worker_steps) const;

private:
  static double per_step(uint64_t bytes, int64_t worker_steps) {
    return worker_steps > 0 ? static_cast<double>(bytes) / static_cast<double>(worker_steps) : 0.0;
  }
  uint64_t sent_ = 0;
  uint64_t received_ = 0;
};

} // namespace actorps
