// Activation functions of hidden layers and their host reference formulas (shared by all backends' tests).
#pragma once

#include <cmath>
#include <optional>
#include <string>

namespace actorps {

/// Elementwise activation. ELU uses alpha = 1; leaky ReLU uses TF's alpha = 0.2.
enum class activation { relu, elu, sigmoid, tanh, leaky_relu };

/// Every activation, in declaration order (for parsing and tests).
constexpr activation all_activations[] = {activation::relu, activation::elu, activation::sigmoid,
                                          activation::tanh, activation::leaky_relu};

/// The slope of leaky ReLU for negative inputs (tf.nn.leaky_relu's default).
constexpr float leaky_relu_alpha = 0.2f;

/// Returns "relu", "elu", "sigmoid", "tanh" or "leaky-relu".
const char* to_string(activation f);

/// Parses the names to_string() gives; nullopt for anything else.
std::optional<activation> parse_activation(const std::string& name);

/// Returns f(x).
inline float activate_ref(activation f, float x) {
  switch (f) {
    case activation::relu: return x > 0.0f ? x : 0.0f;
    case activation::elu: return x > 0.0f ? x : std::expm1(x);
    case activation::sigmoid: return 1.0f / (1.0f + std::exp(-x));
    case activation::tanh: return std::tanh(x);
    case activation::leaky_relu: return x > 0.0f ? x : leaky_relu_alpha * x;
  }
  return x;
}

/// Returns f'(x) expressed through the output y = f(x), so backward needs only the activations.
inline float derivative_from_output_ref(activation f, float y) {
  switch (f) {
    case activation::relu: return y > 0.0f ? 1.0f : 0.0f;
    case activation::elu: return y > 0.0f ? 1.0f : y + 1.0f;
    case activation::sigmoid: return y * (1.0f - y);
    case activation::tanh: return 1.0f - y * y;
    case activation::leaky_relu: return y > 0.0f ? 1.0f : leaky_relu_alpha;
  }
  return 1.0f;
}

} // namespace actorps
