// Variable naming and ordering of the MLP.
#include "model/mlp_spec.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

model_spec mlp_spec::to_model() const {
  return dense_model({input_size, 1, 1}, hidden, hidden_activation, classes);
}

std::vector<variable_spec> mlp_spec::variables() const {
  return to_model().variables();
}

caf::expected<mlp_spec> dense_stack(const model_spec& model) {
  mlp_spec out;
  out.input_size = static_cast<int>(model.input.size());
  out.hidden.clear();
  for (size_t l = 0; l < model.layers.size(); ++l) {
    const auto& layer = model.layers[l];
    if (layer.kind != layer_kind::dense)
      return caf::make_error(errc::invalid_config,
                             cat("train.mode = model-parallel splits dense layers only; layer ", l,
                                 " (", layer.text(), ") is a ", to_string(layer.kind), " layer"));
    if (l + 1 == model.layers.size()) {
      out.classes = layer.units;
      break;
    }
    if (!layer.act || (l > 0 && layer.act != model.layers[0].act))
      return caf::make_error(errc::invalid_config,
                             cat("train.mode = model-parallel needs one activation on every hidden "
                                 "layer; layer ", l, " (", layer.text(), ") differs from layer 0 (",
                                 model.layers[0].text(), ")"));
    out.hidden.push_back(layer.units);
    out.hidden_activation = *layer.act;
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
