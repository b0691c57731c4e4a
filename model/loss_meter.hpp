// Running loss and accuracy of a model's batches, kept in backend memory so that a training step
// needs no device-to-host copy; read back with take(). Shared by mlp and mlp_slice.
#pragma once

#include "compute/backend.hpp"

#include <caf/expected.hpp>

namespace actorps {

/// Mean loss and accuracy over the rows accumulated since the last take_metrics().
struct batch_metrics {
  double loss = 0.0;     ///< mean softmax cross-entropy over trained and scored rows
  double accuracy = 0.0; ///< fraction of scored rows classified correctly (0 if none scored)
  long rows = 0;         ///< rows that contributed to loss
};

class loss_meter {
public:
  /// Allocates the four scalars (zero) on be.
  caf::error allocate(backend& be);

  /// Softmax cross-entropy of rows logits: grad = d(mean loss)/d(logits); adds the loss.
  void train(backend& be, matrix logits, const float* labels, matrix grad);

  /// Like train, and also counts correct predictions (evaluation); grad is scratch.
  void score(backend& be, matrix logits, const float* labels, matrix grad);

  /// Returns the metrics accumulated since the last call and resets them (waits for be).
  caf::expected<batch_metrics> take(backend& be);

private:
  buffer scalars_; // [loss, correct, loss_sum, correct_sum]
  long rows_loss_ = 0;
  long rows_scored_ = 0;
};

} // namespace actorps
