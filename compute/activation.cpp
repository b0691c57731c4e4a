// Names of the activation functions.
#include "compute/activation.hpp"

#include "common/enum_names.hpp"

namespace actorps {

const char* to_string(activation f) {
  switch (f) {
    case activation::relu: return "relu";
    case activation::elu: return "elu";
    case activation::sigmoid: return "sigmoid";
    case activation::tanh: return "tanh";
    case activation::leaky_relu: return "leaky-relu";
  }
  return "unknown";
}

std::optional<activation> parse_activation(const std::string& name) {
  return parse_by_name(name, all_activations);
}

} // namespace actorps
