// Activation functions of hidden layers and their host reference formulas (shared by all backends' tests).
#pragma once

#include <cmath>
#include <optional>
#include <string>

namespace actorps {

/// Elementwise activation. ELU uses alpha = 1.
enum class activation { relu, elu, sigmoid };

/// Returns "relu", "elu" or "sigmoid".
const char* to_string(activation f);

/// Parses "relu", "elu" or "sigmoid"; nullopt for anything else.
std::optional<activation> parse_activation(const std::string& name);

/// Returns f(x).
inline float activate_ref(activation f, float x) {
  switch (f) {
    case activation::relu: return x > 0.0f ? x : 0.0f;
    case activation::elu: return x > 0.0f ? x : std::expm1(x);
    case activation::sigmoid: return 1.0f / (1.0f + std::exp(-x));
  }
  return x;
}

/// Returns f'(x) expressed through the output y = f(x), so backward needs only the activations.
inline float derivative_from_output_ref(activation f, float y) {
  switch (f) {
    case activation::relu: return y > 0.0f ? 1.0f : 0.0f;
    case activation::elu: return y > 0.0f ? 1.0f : y + 1.0f;
    case activation::sigmoid: return y * (1.0f - y);
  }
  return 1.0f;
}

} // namespace actorps
