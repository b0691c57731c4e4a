// Declaration and validation of the training options.
#include "config/train_options.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

namespace actorps {

void declare_train_options(strict_config& cfg, option_values& v) {
  cfg.group("train")
    .add(v.name, "name", "run name: results go to <run-dir>/<name>/")
    .add(v.run_dir, "run-dir", "directory holding one folder per run")
    .add(v.seed, "seed", "seed of initialisation and data shuffling")
    .add(v.batch_size, "batch-size", "examples per step (per worker)")
    .add(v.max_epochs, "max-epochs", "stop after this many epochs (0: no limit)")
    .add(v.max_steps, "max-steps", "stop after this many steps (0: no limit)")
    .add(v.max_seconds, "max-seconds", "stop after this many seconds of training (0.0: no limit)")
    .add(v.target_accuracy, "target-accuracy", "stop at this validation accuracy (0.0: none)")
    .add(v.patience, "patience", "early stopping: evaluations without a lower validation loss (0: off)")
    .add(v.progress_every, "progress-every", "print a progress line every N steps")
    .add(v.eval_every, "eval-every", "also evaluate every N steps (0: once per epoch)")
    .add(v.optimizer, "optimizer", "sgd, momentum or adam")
    .add(v.learning_rate, "learning-rate", "optimizer learning rate")
    .add(v.momentum, "momentum", "momentum coefficient (optimizer = momentum)")
    .add(v.beta1, "beta1", "Adam beta1")
    .add(v.beta2, "beta2", "Adam beta2")
    .add(v.epsilon, "epsilon", "Adam epsilon")
    .add(v.lr_decay_rate, "lr-decay-rate", "learning rate factor per lr-decay-steps updates (1.0: constant)")
    .add(v.lr_decay_steps, "lr-decay-steps", "updates over which the learning rate decays by lr-decay-rate");
  cfg.group("model")
    .add(v.hidden, "hidden", "hidden layer widths, e.g. [160, 160]")
    .add(v.activation, "activation", "hidden activation: relu, elu or sigmoid")
    .add(v.init, "init", "weight init: truncated-normal or he")
    .add(v.classes, "classes", "number of output classes");
  cfg.group("data")
    .add(v.data_dir, "dir", "directory of MNIST-format IDX files")
    .add(v.validation_size, "validation-size", "training examples held out for validation (0: 1/12)");
  cfg.group("compute")
    .add(v.device, "device", "auto, cpu or gpu")
    .add(v.gpu_index, "gpu-index", "CUDA device ordinal")
    .add(v.gpu_memory_fraction, "gpu-memory-fraction", "cap on GPU memory used, in (0, 1]")
    .add(v.threads, "threads", "OpenBLAS threads of the CPU backend");
}

namespace {

caf::error bad(const std::string& key, const std::string& rule) {
  return caf::make_error(errc::invalid_config, key + " " + rule);
}

} // namespace

caf::expected<train_settings> validate(const option_values& v) {
  train_settings s;
  if (v.name.empty() || v.name.find('/') != std::string::npos)
    return bad("train.name", cat("must be a non-empty name without '/', got \"", v.name, "\""));
  if (v.run_dir.empty())
    return bad("train.run-dir", "must not be empty");
  if (v.batch_size <= 0)
    return bad("train.batch-size", cat("must be > 0, got ", v.batch_size));
  if (v.max_epochs < 0)
    return bad("train.max-epochs", cat("must be >= 0, got ", v.max_epochs));
  if (v.max_steps < 0)
    return bad("train.max-steps", cat("must be >= 0, got ", v.max_steps));
  if (v.max_seconds < 0.0)
    return bad("train.max-seconds", cat("must be >= 0, got ", v.max_seconds));
  if (v.max_epochs == 0 && v.max_steps == 0 && v.max_seconds == 0.0 && v.target_accuracy == 0.0
      && v.patience == 0)
    return bad("train.max-epochs", "is 0 and nothing else (max-steps, target-accuracy, patience) would stop training");
  if (v.target_accuracy < 0.0 || v.target_accuracy > 1.0)
    return bad("train.target-accuracy", cat("must be in [0, 1], got ", v.target_accuracy));
  if (v.patience < 0)
    return bad("train.patience", cat("must be >= 0, got ", v.patience));
  if (v.progress_every <= 0)
    return bad("train.progress-every", cat("must be > 0, got ", v.progress_every));
  if (v.eval_every < 0)
    return bad("train.eval-every", cat("must be >= 0, got ", v.eval_every));
  auto opt = parse_optimizer(v.optimizer);
  if (!opt)
    return bad("train.optimizer", cat("must be sgd, momentum or adam, got \"", v.optimizer, "\""));
  if (!(v.learning_rate > 0.0))
    return bad("train.learning-rate", cat("must be > 0, got ", v.learning_rate));
  if (v.momentum < 0.0 || v.momentum >= 1.0)
    return bad("train.momentum", cat("must be in [0, 1), got ", v.momentum));
  if (v.beta1 < 0.0 || v.beta1 >= 1.0 || v.beta2 < 0.0 || v.beta2 >= 1.0)
    return bad("train.beta1/beta2", "must be in [0, 1)");
  if (!(v.epsilon > 0.0))
    return bad("train.epsilon", cat("must be > 0, got ", v.epsilon));
  if (!(v.lr_decay_rate > 0.0 && v.lr_decay_rate <= 1.0))
    return bad("train.lr-decay-rate", cat("must be in (0, 1], got ", v.lr_decay_rate));
  if (v.lr_decay_steps <= 0)
    return bad("train.lr-decay-steps", cat("must be > 0, got ", v.lr_decay_steps));
  auto act = parse_activation(v.activation);
  if (!act)
    return bad("model.activation", cat("must be relu, elu or sigmoid, got \"", v.activation, "\""));
  auto init = parse_init_scheme(v.init);
  if (!init)
    return bad("model.init", cat("must be truncated-normal or he, got \"", v.init, "\""));
  auto mode = parse_device_mode(v.device);
  if (!mode)
    return bad("compute.device", cat("must be auto, cpu or gpu, got \"", v.device, "\""));
  if (v.gpu_index < 0)
    return bad("compute.gpu-index", cat("must be >= 0, got ", v.gpu_index));
  if (!(v.gpu_memory_fraction > 0.0 && v.gpu_memory_fraction <= 1.0))
    return bad("compute.gpu-memory-fraction", cat("must be in (0, 1], got ", v.gpu_memory_fraction));
  if (v.threads < 1)
    return bad("compute.threads", cat("must be >= 1, got ", v.threads));
  if (v.validation_size < 0)
    return bad("data.validation-size", cat("must be >= 0, got ", v.validation_size));
  s.name = v.name;
  s.run_dir = v.run_dir;
  s.seed = static_cast<uint64_t>(v.seed);
  s.batch_size = v.batch_size;
  s.max_epochs = v.max_epochs;
  s.max_steps = v.max_steps;
  s.max_seconds = v.max_seconds;
  s.target_accuracy = v.target_accuracy;
  s.patience = v.patience;
  s.progress_every = v.progress_every;
  s.eval_every = v.eval_every;
  s.optimizer.kind = *opt;
  s.optimizer.learning_rate = static_cast<float>(v.learning_rate);
  s.optimizer.momentum = static_cast<float>(v.momentum);
  s.optimizer.beta1 = static_cast<float>(v.beta1);
  s.optimizer.beta2 = static_cast<float>(v.beta2);
  s.optimizer.epsilon = static_cast<float>(v.epsilon);
  s.optimizer.decay_rate = static_cast<float>(v.lr_decay_rate);
  s.optimizer.decay_steps = static_cast<long>(v.lr_decay_steps);
  s.model.hidden = v.hidden;
  s.model.hidden_activation = *act;
  s.model.classes = v.classes;
  if (auto why = s.model.validate(); !why.empty())
    return bad("model.hidden/classes:", why);
  s.init = *init;
  s.data_dir = v.data_dir;
  s.validation_size = v.validation_size;
  s.device.mode = *mode;
  s.device.gpu_index = v.gpu_index;
  s.device.gpu_memory_fraction = v.gpu_memory_fraction;
  s.device.cpu_threads = v.threads;
  return s;
}

} // namespace actorps
