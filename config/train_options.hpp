// The training, model, data and compute options shared by actorps-train and the cluster nodes,
// declared once for CAF's config parser and validated once. Reference: docs/config.md.
#pragma once

#include "compute/optimizer_rules.hpp"
#include "config/strict_config.hpp"
#include "gpu/device_select.hpp"
#include "model/init.hpp"
#include "model/mlp_spec.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// Raw option values as CAF fills them (strings for enumerations).
struct option_values {
  // [train]
  std::string name = "train";
  std::string run_dir = "runs";
  int64_t seed = 42;
  int batch_size = 50;
  int max_epochs = 30;
  int64_t max_steps = 0;
  double max_seconds = 0.0;
  double target_accuracy = 0.0;
  int patience = 5;
  int progress_every = 200;
  int eval_every = 0;
  std::string optimizer = "momentum";
  double learning_rate = 0.01;
  double momentum = 0.95;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 1e-8;
  double lr_decay_rate = 1.0;
  int64_t lr_decay_steps = 10000;
  // [model]
  std::vector<int> hidden = {160, 160, 160, 160, 160};
  std::string activation = "elu";
  std::string init = "truncated-normal";
  int classes = 10;
  // [data]
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  int validation_size = 0;
  // [compute]
  std::string device = "auto";
  int gpu_index = 0;
  double gpu_memory_fraction = 1.0;
  int threads = 1;
};

/// Validated, typed training settings.
struct train_settings {
  std::string name;
  std::string run_dir;
  uint64_t seed = 42;
  int batch_size = 50;
  int max_epochs = 30;     ///< 0: no epoch limit
  int64_t max_steps = 0;   ///< 0: no step limit
  double max_seconds = 0.0; ///< 0: no wall-time limit (seconds of training)
  double target_accuracy = 0.0; ///< 0: none; else stop once validation accuracy reaches it
  int patience = 5;        ///< evaluations without a better validation loss before stopping; 0: off
  int progress_every = 200;
  int eval_every = 0;      ///< extra evaluations every N steps; 0: once per epoch only
  optimizer_params optimizer;
  mlp_spec model;
  init_scheme init = init_scheme::truncated_normal;
  std::string data_dir;
  int validation_size = 0;
  device_options device;
};

/// Declares every option of `values` on cfg (groups train, model, data, compute).
void declare_train_options(strict_config& cfg, option_values& values);

/// Checks ranges and enumerations; errors name the key, e.g. "train.batch-size must be > 0".
caf::expected<train_settings> validate(const option_values& values);

} // namespace actorps
