// One variable of a model (trainable, or a batch-norm layer's moving statistic): its TF-style name and its shape as a row-major matrix.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace actorps {

/// A rows x cols row-major float matrix: dense weights are inputs x units, conv kernels
/// (k_h * k_w * in_channels) x out_channels (TF's [k_h, k_w, in, out] flattened), biases 1 x units.
struct variable_spec {
  std::string name{}; ///< "conv0/weights", "dense0/bias", ..., "logits/weights", "logits/bias"
  int rows = 0;
  int cols = 0;
  std::vector<int> shape{}; ///< TensorFlow's shape: [k_h, k_w, in, out] kernels, [in, out] dense weights, [n] vectors
  float moving_decay = 0.0f; ///< a batchnorm's moving mean or variance: its layer's decay; 0 otherwise
  bool table = false;        ///< an embedding's table: a batch reads (and its gradient holds) a few rows
  size_t size() const { return static_cast<size_t>(rows) * static_cast<size_t>(cols); }
  size_t bytes() const { return size() * sizeof(float); }
};

} // namespace actorps
