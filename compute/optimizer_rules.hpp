// Optimizer update rules as pure functions of (variable, gradient, slots, hyperparameters).
// Host versions live here (shards apply them); backends apply the same formulas to their memory.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

/// The supported optimizers; the formulas and defaults follow TensorFlow 1.x's optimizers.
/// Every rule first adds weight_decay * w to the gradient (for variables that decay).
enum class optimizer_kind {
  sgd,      ///< w -= lr * g
  momentum, ///< a = mu * a + g; w -= lr * a               (slot 0: accumulator a)
  nesterov, ///< a = mu * a + g; w -= lr * (g + mu * a)    (MomentumOptimizer(use_nesterov=True))
  adam,     ///< m = b1 m + (1-b1) g; v = b2 v + (1-b2) g^2;
            ///< w -= lr * sqrt(1-b2^t)/(1-b1^t) * m / (sqrt(v) + eps)   (slots: m, v)
  adagrad,  ///< acc += g^2; w -= lr * g / sqrt(acc)       (slot 0: acc, starts at initial_accumulator)
  rmsprop,  ///< ms = rho ms + (1-rho) g^2; mom = mu mom + lr g / sqrt(ms + eps); w -= mom
            ///< (slot 0: ms, starts at 1 as in TF1; slot 1: mom)
};

/// Every optimizer, in declaration order.
constexpr optimizer_kind all_optimizers[] = {optimizer_kind::sgd,  optimizer_kind::momentum,
                                             optimizer_kind::nesterov, optimizer_kind::adam,
                                             optimizer_kind::adagrad, optimizer_kind::rmsprop};

/// Learning-rate schedules over the update number t (TF1's tf.train.*_decay functions).
enum class lr_schedule {
  constant,    ///< lr
  exponential, ///< lr * decay_rate^(t / decay_steps), the exponent floored when staircase
  piecewise,   ///< values[i] for boundaries[i-1] < t <= boundaries[i] (piecewise_constant)
  cosine,      ///< lr * ((1 - alpha) * 0.5 * (1 + cos(pi * min(t, decay_steps) / decay_steps)) + alpha)
};

/// Every schedule, in declaration order.
constexpr lr_schedule all_schedules[] = {lr_schedule::constant, lr_schedule::exponential,
                                         lr_schedule::piecewise, lr_schedule::cosine};

/// Hyperparameters of an optimizer; fields an optimizer does not use are ignored.
struct optimizer_params {
  optimizer_kind kind = optimizer_kind::momentum;
  float learning_rate = 0.01f;
  float momentum = 0.95f;        ///< momentum, nesterov; rmsprop's momentum (TF default 0)
  float beta1 = 0.9f;
  float beta2 = 0.999f;
  float epsilon = 1e-8f;         ///< adam; rmsprop (TF default 1e-10)
  float rho = 0.9f;              ///< rmsprop's decay
  float initial_accumulator = 0.1f; ///< adagrad
  float weight_decay = 0.0f;     ///< L2 coefficient added to the gradient of decaying variables
  lr_schedule schedule = lr_schedule::constant;
  float decay_rate = 1.0f;       ///< exponential
  long decay_steps = 10000;      ///< exponential, cosine
  bool staircase = false;        ///< exponential
  std::vector<long> boundaries;  ///< piecewise: increasing update numbers
  std::vector<float> values;     ///< piecewise: boundaries.size() + 1 learning rates
  float cosine_alpha = 0.0f;     ///< cosine: the final fraction of lr
  /// A batch-norm moving statistic (set by for_variable): w = decay w + (1 - decay) g, with g the
  /// batch's statistic; no learning rate, slots or weight decay.
  float moving_decay = 0.0f;     ///< 0: an ordinary variable
};

const char* to_string(optimizer_kind k);
const char* to_string(lr_schedule s);

/// Parse the names to_string() gives ("sgd", "momentum", "nesterov", "adam", "adagrad",
/// "rmsprop"; "constant", "exponential", "piecewise", "cosine"); nullopt for anything else.
std::optional<optimizer_kind> parse_optimizer(const std::string& name);
std::optional<lr_schedule> parse_schedule(const std::string& name);

/// Returns how many slot arrays (each the variable's size) the optimizer keeps per variable.
int slot_count(optimizer_kind k);

/// Returns the value slot `slot` of a fresh variable starts at (0 except adagrad's and rmsprop's
/// accumulators).
float slot_initial_value(const optimizer_params& p, int slot);

/// Returns an error text for inconsistent parameters (e.g. piecewise values that do not match its
/// boundaries), naming the train.* option; empty if they are usable.
std::string check(const optimizer_params& p);

/// Returns the learning rate of update number t >= 1 under p's schedule.
float learning_rate_at(const optimizer_params& p, long t);

/// Returns Adam's bias-corrected step size lr_t * sqrt(1 - b2^t) / (1 - b1^t) for update number t >= 1.
float adam_step_size(const optimizer_params& p, long t);

/// Returns whether weight decay applies to a variable of this name (weights and kernels, not
/// biases or batch normalisation's variables).
bool decays(const std::string& variable_name);

/// Returns whether a variable is a batch-norm layer's moving mean or variance (".../moving_mean",
/// ".../moving_variance"): not trained, moved towards the batch statistics pushed as its gradient.
bool is_moving_statistic(const std::string& variable_name);

/// Returns p for one variable: weight_decay cleared unless decays(name); moving_decay set to the
/// variable's own (its batchnorm layer's decay; 0 for a trained variable).
optimizer_params for_variable(const optimizer_params& p, const std::string& variable_name, float moving_decay);

/// Applies update number t (1-based, per variable) to n weights in host memory.
/// REQUIRES: slot0 (and slot1) point to n floats when slot_count(p.kind) needs them.
void apply_update_host(const optimizer_params& p, long t, size_t n, float* w, const float* g,
                       float* slot0, float* slot1);

/// Applies update number t to `count` rows of `cols` weights each, row j of the gradient (g + j *
/// cols) to the weights at w + at[j] and their slots at slot0 + at[j] (slot1 + at[j]): an
/// embedding table's sparse update, on the shard's part or on one process's table. The same rule
/// as apply_update_host row by row, with the next rows fetched into the cache ahead.
/// REQUIRES: each at[j] + cols within w (and the slots); the rows distinct.
void apply_rows_host(const optimizer_params& p, long t, size_t cols, const size_t* at, size_t count, float* w,
                     const float* g, float* slot0, float* slot1);

} // namespace actorps
