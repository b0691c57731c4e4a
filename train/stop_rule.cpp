// Stop decisions.
#include "train/stop_rule.hpp"

#include "common/log.hpp"

#include <algorithm>

namespace actorps {

bool stop_rule::observe_evaluation(double validation_loss, double validation_accuracy, double t,
                                   std::optional<double> train_loss) {
  best_accuracy_ = std::max(best_accuracy_, validation_accuracy);
  if (limits_.target_accuracy > 0.0 && !target_time_ && validation_accuracy >= limits_.target_accuracy)
    target_time_ = t;
  std::optional<double> watched = limits_.metric == stop_metric::validation_loss
                                    ? std::optional<double>{validation_loss}
                                    : train_loss;
  if (watched && *watched < best_metric_) {
    best_metric_ = *watched;
    since_best_ = 0;
  } else {
    ++since_best_;
  }
  if (validation_loss < best_loss_) {
    best_loss_ = validation_loss;
    return true;
  }
  return false;
}

std::optional<std::string> stop_rule::should_stop(int64_t steps, double epochs, double seconds) const {
  if (limits_.target_accuracy > 0.0 && target_time_)
    return cat("target validation accuracy ", limits_.target_accuracy, " reached");
  if (limits_.patience > 0 && since_best_ >= limits_.patience)
    return cat("early stopping: no lower ", limits_.metric == stop_metric::validation_loss ? "validation" : "training",
               " loss in ", limits_.patience, " evaluations");
  if (limits_.max_steps > 0 && steps >= limits_.max_steps)
    return cat("max steps ", limits_.max_steps, " reached");
  if (limits_.max_epochs > 0 && epochs >= limits_.max_epochs)
    return cat("max epochs ", limits_.max_epochs, " reached");
  if (limits_.max_seconds > 0.0 && seconds >= limits_.max_seconds)
    return cat("max seconds ", limits_.max_seconds, " reached");
  return std::nullopt;
}

} // namespace actorps
