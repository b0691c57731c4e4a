// Loss and accuracy sums in backend memory.
#include "model/loss_meter.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <cmath>

namespace actorps {

caf::error check_divergence(const batch_metrics& m, const std::string& where) {
  if (m.rows == 0 || (std::isfinite(m.loss) && m.loss <= max_sane_loss))
    return caf::none;
  return caf::make_error(errc::non_finite, cat("training diverged at ", where, " (loss ", m.loss,
                                               "); lower train.learning-rate"));
}

namespace {
enum scalar_slot { loss_slot = 0, correct_slot = 1, loss_sum_slot = 2, correct_sum_slot = 3 };
} // namespace

caf::error loss_meter::allocate(backend& be) {
  return allocate_into(be, 4, scalars_);
}

void loss_meter::train(backend& be, matrix logits, const float* labels, matrix grad) {
  float* scalars = scalars_.data();
  be.softmax_xent(logits, labels, grad, scalars + loss_slot);
  be.axpy(1, static_cast<float>(logits.rows), scalars + loss_slot, scalars + loss_sum_slot);
  rows_loss_ += logits.rows;
}

void loss_meter::score(backend& be, matrix logits, const float* labels, matrix grad) {
  train(be, logits, labels, grad);
  float* scalars = scalars_.data();
  be.count_correct(logits, labels, scalars + correct_slot);
  be.axpy(1, 1.0f, scalars + correct_slot, scalars + correct_sum_slot);
  rows_scored_ += logits.rows;
}

caf::expected<batch_metrics> loss_meter::take(backend& be) {
  float host[4];
  if (auto err = be.download(scalars_.data(), 4, host))
    return err;
  batch_metrics out;
  out.rows = rows_loss_;
  out.loss = rows_loss_ > 0 ? host[loss_sum_slot] / static_cast<double>(rows_loss_) : 0.0;
  out.accuracy = rows_scored_ > 0 ? host[correct_sum_slot] / static_cast<double>(rows_scored_) : 0.0;
  const float zeros[4] = {0.0f, 0.0f, 0.0f, 0.0f}; // upload, not scale: clears NaN too
  be.upload(zeros, 4, scalars_.data());
  rows_loss_ = 0;
  rows_scored_ = 0;
  return out;
}

} // namespace actorps
