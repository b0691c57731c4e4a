// Running loss and accuracy of a model's batches, kept in backend memory so that a training step
// needs no device-to-host copy; read back with take(). Shared by mlp and mlp_slice.
#pragma once

#include "compute/backend.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <string>

namespace actorps {

/// Mean loss and accuracy over the rows accumulated since the last take_metrics().
struct batch_metrics {
  double loss = 0.0;     ///< mean softmax cross-entropy over trained and scored rows
  double accuracy = 0.0; ///< fraction of scored rows classified correctly (0 if none scored)
  long rows = 0;         ///< rows that contributed to loss
};

/// The largest mean training loss of a run that has not diverged. Softmax cross-entropy starts
/// at ln(classes) (2.3 for ten) and a model whose predictions mean anything stays within a few
/// units of it; a loss past 1e6 means the logits exploded (at train.learning-rate = 1 the reference
/// MLP sits at 2.4e21 with 10% accuracy, its loss still finite).
constexpr double max_sane_loss = 1e6;

/// Returns non_finite, "training diverged at WHERE (loss L); lower train.learning-rate", when m's
/// loss is not finite or above max_sane_loss; none otherwise (also when no row was trained).
caf::error check_divergence(const batch_metrics& m, const std::string& where);

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
