// What one training process (actorps-train, a worker, the chief) needs in memory, estimated from
// the model and the batch before anything starts: `--node.check-only` took a batch of 10^9 and
// failed only at run time. A configuration that cannot fit is refused naming the figure.
#pragma once

#include "config/train_options.hpp"

#include <caf/error.hpp>

#include <cstdint>
#include <optional>

namespace actorps {

struct memory_need {
  uint64_t parameters = 0;        ///< floats of every variable
  uint64_t rows = 0;              ///< the most examples the network is built for (training or evaluation batch)
  uint64_t activation_floats = 0; ///< per example (input and every layer's output)

  /// Bytes at least: every variable four times (values, gradients, two optimizer slots) and every
  /// row's activations three times (outputs, their gradients, a layer's scratch), as floats.
  uint64_t bytes() const { return 4 * (4 * parameters + 3 * rows * activation_floats); }
};

/// The need of s's model (its input 28x28x1 until the data says otherwise) at s's batch.
memory_need estimate_memory(const train_settings& s);

/// invalid_config naming the need, its parts and `available` when the need exceeds it; none
/// otherwise (and when available is unknown).
caf::error check_memory(const memory_need& need, std::optional<uint64_t> available);

} // namespace actorps
