// Byte counters for metrics rows.
#include "control/traffic_meter.hpp"

namespace actorps {

void traffic_meter::describe(json_object& row, int64_t worker_steps) const {
  row.add("tensor_bytes_sent", static_cast<int64_t>(sent_))
    .add("tensor_bytes_received", static_cast<int64_t>(received_))
    .add("sent_bytes_per_step", per_step_sent(worker_steps))
    .add("received_bytes_per_step", per_step_received(worker_steps));
}

} // namespace actorps
