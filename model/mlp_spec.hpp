// The MLP's shape and its variables, named and ordered as they are created (the placement order).
#pragma once

#include "compute/activation.hpp"

#include <cstddef>
#include <string>
#include <vector>

namespace actorps {

/// One trainable variable: a rows x cols row-major float matrix (a bias is 1 x units).
struct variable_spec {
  std::string name; ///< "layer0/weights", "layer0/bias", ..., "logits/weights", "logits/bias"
  int rows = 0;
  int cols = 0;
  size_t size() const { return static_cast<size_t>(rows) * static_cast<size_t>(cols); }
  size_t bytes() const { return size() * sizeof(float); }
};

/// A fully connected network: input -> hidden layers (activation) -> class logits.
struct mlp_spec {
  int input_size = 784;
  std::vector<int> hidden = {160, 160, 160, 160, 160};
  activation hidden_activation = activation::elu;
  int classes = 10;

  /// Returns the number of dense layers (hidden layers plus the logits layer).
  int layer_count() const { return static_cast<int>(hidden.size()) + 1; }

  /// Returns the input width of dense layer l.
  int layer_inputs(int l) const { return l == 0 ? input_size : hidden[l - 1]; }

  /// Returns the output width of dense layer l.
  int layer_outputs(int l) const {
    return l < static_cast<int>(hidden.size()) ? hidden[l] : classes;
  }

  /// Returns the variables in creation order: weights (in x out) then bias (1 x out), layer by
  /// layer; the logits layer is named "logits".
  std::vector<variable_spec> variables() const;

  /// Returns the multiply-adds of one example's forward pass.
  size_t forward_macs() const;

  /// Returns an error text for an unusable spec (non-positive sizes), empty if it is valid.
  std::string validate() const;
};

} // namespace actorps
