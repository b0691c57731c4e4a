// Variable naming and ordering of the MLP.
#include "model/mlp_spec.hpp"

#include "common/log.hpp"

namespace actorps {

std::vector<variable_spec> mlp_spec::variables() const {
  std::vector<variable_spec> out;
  for (int l = 0; l < layer_count(); ++l) {
    std::string prefix = l + 1 == layer_count() ? std::string{"logits"} : cat("layer", l);
    out.push_back({prefix + "/weights", layer_inputs(l), layer_outputs(l)});
    out.push_back({prefix + "/bias", 1, layer_outputs(l)});
  }
  return out;
}

size_t mlp_spec::forward_macs() const {
  size_t macs = 0;
  for (int l = 0; l < layer_count(); ++l)
    macs += static_cast<size_t>(layer_inputs(l)) * static_cast<size_t>(layer_outputs(l));
  return macs;
}

std::string mlp_spec::validate() const {
  if (input_size <= 0)
    return cat("model input size must be positive, got ", input_size);
  if (classes < 2)
    return cat("model needs at least 2 classes, got ", classes);
  for (size_t i = 0; i < hidden.size(); ++i)
    if (hidden[i] <= 0)
      return cat("hidden layer ", i, " must have positive width, got ", hidden[i]);
  return {};
}

} // namespace actorps
