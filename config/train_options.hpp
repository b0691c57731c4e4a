// The training, model, data and compute options shared by actorps-train and the cluster nodes,
// declared once for CAF's config parser and validated once. Reference: docs/config.md.
#pragma once

#include "compute/optimizer_rules.hpp"
#include "config/strict_config.hpp"
#include "gpu/device_select.hpp"
#include "data/data_source.hpp"
#include "model/init.hpp"
#include "model/model_spec.hpp"

#include <caf/expected.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

/// What early stopping watches (train.early-stopping-metric): the validation loss of each
/// evaluation, or the mean training loss since the previous one.
enum class stop_metric { validation_loss, train_loss };

constexpr stop_metric all_stop_metrics[] = {stop_metric::validation_loss, stop_metric::train_loss};

const char* to_string(stop_metric m);

/// Raw option values as CAF fills them (strings for enumerations). Options a preset decides
/// (model.preset) start at a sentinel -- an empty string, 0 or -1 -- meaning "the preset's".
struct option_values {
  // [train]
  std::string name = "train";
  std::string scope;
  std::string run_dir = "runs";
  std::string save_model = "both";
  int64_t seed = 42;
  int batch_size = 0;
  int max_epochs = 30;
  int64_t max_steps = 0;
  double max_seconds = 0.0;
  double target_accuracy = 0.0;
  int patience = 5;
  std::string early_stopping_metric = "validation-loss";
  int progress_every = 200;
  int eval_every = 0;
  int eval_every_epochs = 1;
  bool tensorboard = true;
  std::string optimizer;
  double learning_rate = 0.0;
  double momentum = -1.0;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double epsilon = 0.0;
  double rho = 0.9;
  double initial_accumulator = 0.1;
  double weight_decay = 0.0;
  std::string lr_schedule = "constant";
  double lr_decay_rate = 1.0;
  int64_t lr_decay_steps = 10000;
  bool lr_staircase = false;
  std::vector<int64_t> lr_boundaries;
  std::vector<double> lr_values;
  double lr_alpha = 0.0;
  // [model]
  std::string preset = "reference";
  std::vector<std::string> layers;
  std::vector<int> hidden;
  std::string activation;
  std::string init;
  double init_stddev = 0.0;
  double bias_init = 0.0;
  std::string init_from;
  int classes = 0;
  // [data]
  std::string data_dir = "/usr/share/datasets/fashion-mnist";
  std::string data_format = "auto";
  int validation_size = 0;
  std::string normalize = "none";
  std::string augment;      ///< "": the preset's
  int crop_padding = 4;
  int crop_size = -1;       ///< -1: the preset's
  double brightness = -1.0; ///< -1: the preset's
  std::string contrast;     ///< "": the preset's
  std::string standardize;  ///< "": the preset's
  std::string layout = "auto";
  std::string color = "auto";
  std::string resize;
  std::vector<std::string> class_names;
  std::vector<std::string> devices;
  int data_threads = 1;
  int prefetch_batches = 4;
  int max_tokens = text_options{}.max_tokens;
  bool bigrams = text_options{}.bigrams;
  // [compute]
  std::string device = "auto";
  int gpu_index = 0;
  std::string gpu_memory = "grow";
  bool pinned_copies = true;
  bool soft_placement = true;
  int threads = 1;
};

/// Which models a run keeps under <run-dir>/<name>/model/ when it finishes (train.save-model).
enum class model_saving { both, final_only, best_only, none };

constexpr model_saving all_model_savings[] = {model_saving::both, model_saving::final_only, model_saving::best_only,
                                              model_saving::none};

/// Returns "both", "final", "best" or "none".
const char* to_string(model_saving m);

/// Validated, typed training settings.
struct train_settings {
  std::string name;
  std::string scope; ///< the variables' scope on the shards ("": none)
  std::string run_dir;
  model_saving save_model = model_saving::both;
  uint64_t seed = 42;
  int batch_size = 0;
  int max_epochs = 30;     ///< 0: no epoch limit
  int64_t max_steps = 0;   ///< 0: no step limit
  double max_seconds = 0.0; ///< 0: no wall-time limit (seconds of training)
  double target_accuracy = 0.0; ///< 0: none; else stop once validation accuracy reaches it
  int patience = 5;        ///< evaluations without a better early_stopping metric before stopping; 0: off
  stop_metric early_stopping = stop_metric::validation_loss;
  int progress_every = 200;
  bool tensorboard = true; ///< event files under <run-dir>/<name>/tensorboard/<node>/
  int eval_every = 0;      ///< extra evaluations every N steps; 0: none
  int eval_every_epochs = 1; ///< evaluations every K epochs; 0: none
  optimizer_params optimizer;
  std::string preset;      ///< the model.preset the defaults came from
  model_spec model;        ///< input 28x28x1 until the data sets it (with_input)
  init_options init;
  data_settings data;
  device_options device;
};

/// Returns model with the input shape of the data (a dense model reads it flattened).
model_spec with_input(model_spec model, const image_shape& input);

/// The model on the data (with_input), checked for what a cluster node trains: the data's kind
/// (check_model_reads; an embedding model's cluster options: config/table_rules). Errors name
/// the key.
caf::expected<model_spec> cluster_model(const model_spec& model, const data_splits& data);

/// Declares every option of `values` on cfg (groups train, model, data, compute).
void declare_train_options(strict_config& cfg, option_values& values);

/// Checks ranges and enumerations; errors name the key, e.g. "train.batch-size must be > 0".
caf::expected<train_settings> validate(const option_values& values);

} // namespace actorps
