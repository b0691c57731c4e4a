// A dense stack's shape (what model parallelism splits), and its conversions to and from the
// layer-list model_spec, whose variable names and order it shares.
#pragma once

#include "compute/activation.hpp"
#include "model/model_spec.hpp"
#include "model/variable_spec.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace actorps {

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

  /// Returns the same network as a layer list (input input_size x 1 x 1).
  model_spec to_model() const;

  /// Returns the variables in creation order: weights (in x out) then bias (1 x out), layer by
  /// layer, named as to_model().variables() names them (dense0, ..., logits).
  std::vector<variable_spec> variables() const;

  /// Returns the multiply-adds of one example's forward pass.
  size_t forward_macs() const;

  /// Returns an error text for an unusable spec (non-positive sizes), empty if it is valid.
  std::string validate() const;
};

/// Returns model as a dense stack for model parallelism; the error names the first layer that is
/// not dense (or the activations that differ).
caf::expected<mlp_spec> dense_stack(const model_spec& model);

} // namespace actorps
