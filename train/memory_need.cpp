// See memory_need.hpp.
#include "train/memory_need.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "model/network.hpp"

#include <algorithm>

namespace actorps {

memory_need estimate_memory(const train_settings& s) {
  memory_need out;
  for (auto& v : s.model.variables())
    out.parameters += v.size();
  out.rows = static_cast<uint64_t>(std::max(s.batch_size, evaluation_batch(s.model)));
  out.activation_floats = activation_floats_per_example(s.model);
  return out;
}

caf::error check_memory(const memory_need& need, std::optional<uint64_t> available) {
  if (!available || need.bytes() <= *available)
    return caf::none;
  auto mib = [](uint64_t bytes) { return bytes >> 20; };
  return caf::make_error(errc::invalid_config,
                         cat("this configuration needs at least ", mib(need.bytes()), " MiB in each training process (",
                             need.parameters, " parameters: ", mib(16 * need.parameters), " MiB; batch ", need.rows,
                             " x ", need.activation_floats, " activations: ", mib(12 * need.rows * need.activation_floats),
                             " MiB), more than the ", mib(*available), " MiB this machine has available "
                             "(lower train.batch-size or the model's size)"));
}

} // namespace actorps
