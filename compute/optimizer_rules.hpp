// Optimizer update rules as pure functions of (variable, gradient, slots, hyperparameters).
// Host versions live here (shards apply them); backends apply the same formulas to their memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace actorps {

/// The supported optimizers; the formulas follow TensorFlow 1.x's optimizers.
enum class optimizer_kind {
  sgd,      ///< w -= lr * g
  momentum, ///< a = mu * a + g; w -= lr * a               (slot 0: accumulator a)
  adam,     ///< m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
            ///< w -= lr * sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps)   (slots: m, v)
};

/// Hyperparameters of an optimizer; fields an optimizer does not use are ignored.
struct optimizer_params {
  optimizer_kind kind = optimizer_kind::momentum;
  float learning_rate = 0.01f;
  float momentum = 0.95f;
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;
  float decay_rate = 1.0f;  ///< learning rate at update t: lr * decay_rate^(t / decay_steps); 1: constant
  long decay_steps = 10000;
};

/// Returns "sgd", "momentum" or "adam".
const char* to_string(optimizer_kind k);

/// Parses "sgd", "momentum" or "adam"; nullopt for anything else.
std::optional<optimizer_kind> parse_optimizer(const std::string& name);

/// Returns how many slot arrays (each the variable's size) the optimizer keeps per variable.
int slot_count(optimizer_kind k);

/// Returns the learning rate of update number t >= 1 (TensorFlow's exponential_decay, not staircase).
float learning_rate_at(const optimizer_params& p, long t);

/// Returns Adam's bias-corrected step size lr_t * sqrt(1 - b2^t) / (1 - b1^t) for update number t >= 1.
float adam_step_size(const optimizer_params& p, long t);

/// Applies update number t (1-based, per variable) to n weights in host memory.
/// REQUIRES: slot0 (and slot1 for adam) point to n floats when slot_count(p.kind) needs them.
void apply_update_host(const optimizer_params& p, long t, size_t n, float* w, const float* g,
                       float* slot0, float* slot1);

} // namespace actorps
