// Names of the activation functions.
#include "compute/activation.hpp"

namespace actorps {

const char* to_string(activation f) {
  switch (f) {
    case activation::relu: return "relu";
    case activation::elu: return "elu";
    case activation::sigmoid: return "sigmoid";
  }
  return "unknown";
}

std::optional<activation> parse_activation(const std::string& name) {
  for (auto f : {activation::relu, activation::elu, activation::sigmoid})
    if (name == to_string(f))
      return f;
  return std::nullopt;
}

} // namespace actorps
