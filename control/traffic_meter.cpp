// Byte counters for metrics rows.
#include "control/traffic_meter.hpp"

namespace actorps {

void traffic_meter::describe(json_object& row, int64_t worker_steps) const {
  auto per_step = [&](uint64_t bytes) {
    return worker_steps > 0 ? static_cast<double>(bytes) / static_cast<double>(worker_steps) : 0.0;
  };
  row.add("tensor_bytes_sent", static_cast<int64_t>(sent_))
    .add("tensor_bytes_received", static_cast<int64_t>(received_))
    .add("sent_bytes_per_step", per_step(sent_))
    .add("received_bytes_per_step", per_step(received_));
}

} // namespace actorps
