// The mean of the training losses seen since it was last taken: what the train-loss metric
// watches at each evaluation (the trainer's stop rule and the chief's run_control alike).
#pragma once

#include <cstdint>
#include <optional>

namespace actorps {

class loss_mean {
public:
  /// Adds the losses of `rows` examples, summed.
  void add(double loss_sum, int64_t rows) {
    sum_ += loss_sum;
    rows_ += rows;
  }

  /// Returns the mean since the last take (nullopt when no example was added) and starts anew.
  std::optional<double> take() {
    std::optional<double> out;
    if (rows_ > 0)
      out = sum_ / static_cast<double>(rows_);
    sum_ = 0.0;
    rows_ = 0;
    return out;
  }

private:
  double sum_ = 0.0;
  int64_t rows_ = 0;
};

} // namespace actorps
