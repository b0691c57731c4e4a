// Declaration and validation of the training options.
#include "config/train_options.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "model/presets.hpp"

#include <cstdio>

namespace actorps {

const char* to_string(model_saving m) {
  switch (m) {
    case model_saving::both: return "both";
    case model_saving::final_only: return "final";
    case model_saving::best_only: return "best";
    case model_saving::none: return "none";
  }
  return "?";
}

const char* to_string(stop_metric m) {
  switch (m) {
    case stop_metric::validation_loss: return "validation-loss";
    case stop_metric::train_loss: return "train-loss";
  }
  return "?";
}

void declare_train_options(strict_config& cfg, option_values& v) {
  cfg.group("train")
    .add(v.name, "name", "run name: results go to <run-dir>/<name>/")
    .add(v.scope, "scope", "variable scope on the shards: a later session with the same scope continues its variables (with node.keep-alive ps nodes); \"\": none")
    .add(v.run_dir, "run-dir", "directory holding one folder per run")
    .add(v.save_model, "save-model", "models kept in <run-dir>/<name>/model/: both (final/ and best/), final, "
                                     "best or none")
    .add(v.seed, "seed", "seed of initialisation, data shuffling, augmentation and dropout")
    .add(v.batch_size, "batch-size", "examples per step (per worker; 0: the preset's)")
    .add(v.max_epochs, "max-epochs", "stop after this many epochs (0: no limit)")
    .add(v.max_steps, "max-steps", "stop after this many steps (0: no limit)")
    .add(v.max_seconds, "max-seconds", "stop after this many seconds of training (0.0: no limit)")
    .add(v.target_accuracy, "target-accuracy", "stop at this validation accuracy (0.0: none)")
    .add(v.patience, "patience", "early stopping: evaluations without a lower early-stopping-metric (0: off)")
    .add(v.early_stopping_metric, "early-stopping-metric", "validation-loss or train-loss (the mean since the "
                                                           "previous evaluation): what patience watches")
    .add(v.progress_every, "progress-every", "print a progress line every N steps")
    .add(v.tensorboard, "tensorboard", "write TensorBoard event files to <run-dir>/<name>/tensorboard/<node>/")
    .add(v.eval_every, "eval-every", "also evaluate every N steps (0: none)")
    .add(v.eval_every_epochs, "eval-every-epochs", "evaluate every K epochs (0: none)")
    .add(v.optimizer, "optimizer", "sgd, momentum, nesterov, adam, adagrad or rmsprop (empty: the preset's)")
    .add(v.learning_rate, "learning-rate", "optimizer learning rate (0.0: the preset's)")
    .add(v.momentum, "momentum", "momentum, nesterov and rmsprop momentum (-1: the preset's; rmsprop 0)")
    .add(v.beta1, "beta1", "Adam beta1")
    .add(v.beta2, "beta2", "Adam beta2")
    .add(v.epsilon, "epsilon", "Adam / RMSProp epsilon (0.0: TF1's, 1e-8 / 1e-10)")
    .add(v.rho, "rho", "RMSProp decay")
    .add(v.initial_accumulator, "initial-accumulator", "Adagrad's starting accumulator")
    .add(v.weight_decay, "weight-decay", "L2 coefficient added to the gradients of weights (not biases)")
    .add(v.lr_schedule, "lr-schedule", "constant, exponential, piecewise or cosine")
    .add(v.lr_decay_rate, "lr-decay-rate", "exponential: factor per lr-decay-steps updates (set alone: exponential)")
    .add(v.lr_decay_steps, "lr-decay-steps", "exponential: updates per decay; cosine: updates to the end")
    .add(v.lr_staircase, "lr-staircase", "exponential: decay in whole steps of lr-decay-steps")
    .add(v.lr_boundaries, "lr-boundaries", "piecewise: update numbers where the rate changes")
    .add(v.lr_values, "lr-values", "piecewise: the rates, one more than the boundaries")
    .add(v.lr_alpha, "lr-alpha", "cosine: the final rate as a fraction of learning-rate");
  cfg.group("model")
    .add(v.preset, "preset", "reference, seed-sigmoid, softmax, cnn, cifar10-tutorial, resnet20 or xception-mini: a model with its training defaults")
    .add(v.layers, "layers", "layer list, e.g. [\"conv 3x3x32 relu\", \"maxpool 2\", \"dense 10\"]")
    .add(v.hidden, "hidden", "shorthand for dense layers of these widths, e.g. [160, 160]")
    .add(v.activation, "activation", "relu, elu, sigmoid, tanh or leaky-relu for model.hidden / the preset")
    .add(v.init, "init", "notebook, truncated-normal, random-normal, glorot-uniform or he (empty: the preset's)")
    .add(v.init_stddev, "init-stddev", "truncated-normal / random-normal stddev (0.0: the scheme's default)")
    .add(v.bias_init, "bias-init", "the constant every bias starts at")
    .add(v.init_from, "init-from", "start from a saved model's values: an .npz (actorps-export), a checkpoint, "
                                   "or a run's model directory (\"\": the init scheme)")
    .add(v.classes, "classes", "number of output classes (0: the preset's or the layer list's)");
  cfg.group("data")
    .add(v.data_dir, "dir", "directory of MNIST-format IDX files, CIFAR-10 binary files or class folders "
                            "(train/<class>/*.png|jpg), or an .npz file in Keras' layout")
    .add(v.data_format, "format", "auto, idx, cifar10, npz, image-folder or text (class folders of text files: "
                                  "bags of hashed word and bigram ids for an embedding layer)")
    .add(v.max_tokens, "max-tokens", "text: ids kept per example (words and bigrams, in text order)")
    .add(v.bigrams, "bigrams", "text: hash each pair of neighbouring words too")
    .add(v.layout, "layout", "npz: auto, nhwc or nchw (images of N x H x W x C or N x C x H x W)")
    .add(v.color, "color", "image-folder: auto (as the first training image), grey or rgb")
    .add(v.resize, "resize", "image-folder: scale every image to HxW, e.g. \"32x32\" (\"\": all must have one size)")
    .add(v.class_names, "class-names", "the classes' names by label (empty: the data's, or known ones)")
    .add(v.data_threads, "threads", "threads that decode images and prepare batches ahead of training")
    .add(v.prefetch_batches, "prefetch-batches", "batches prepared ahead of the trainer (0: each on the training thread)")
    .add(v.validation_size, "validation-size", "training examples held out for validation (0: 1/12)")
    .add(v.normalize, "normalize", "none or per-channel (the training set's mean and stddev)")
    .add(v.augment, "augment", "none, crop, flip or crop-flip: random crops after zero padding and/or "
                               "horizontal flips of training batches (\"\": the preset's)")
    .add(v.crop_padding, "crop-padding", "augment: zero padding on each side before the crop")
    .add(v.crop_size, "crop-size", "train on random SxS windows, evaluate on the central one (0: whole images; "
                                   "-1: the preset's)")
    .add(v.brightness, "brightness", "max delta of random brightness, in input units (0: none; -1: the preset's)")
    .add(v.contrast, "contrast", "random contrast factor range \"LOWER,UPPER\", or none (\"\": the preset's)")
    .add(v.standardize, "standardize", "per-image (train and evaluate on standardised images) or none "
                                       "(\"\": the preset's)");
  cfg.group("compute")
    .add(v.device, "device", "auto, cpu or gpu")
    .add(v.gpu_index, "gpu-index", "CUDA device ordinal")
    .add(v.devices, "devices", "towers: one per device, e.g. [\"gpu:0\", \"gpu:1\"] or [\"cpu:0\", \"cpu:1\"] (empty: one device, compute.device)")
    .add(v.soft_placement, "soft-placement", "an op without a kernel on the device runs on the CPU (false: an error)")
    .add(v.gpu_memory, "gpu-memory", "grow (each buffer when needed) or fraction:F (F of each GPU reserved at start)")
    .add(v.pinned_copies, "pinned-copies", "a GPU's host copies through pinned staging on a copy stream (false: from pageable memory, waiting)")
    .add(v.threads, "threads", "OpenBLAS threads of the CPU backend");
}

model_spec with_input(model_spec model, const image_shape& input) {
  model.input = input;
  return model;
}

caf::expected<model_spec> cluster_model(const model_spec& model, const data_splits& data) {
  auto spec = with_input(model, data.model_input());
  if (auto err = check_model_reads(data, spec))
    return err;
  return spec;
}

namespace {

caf::error bad(const std::string& key, const std::string& rule) {
  return caf::make_error(errc::invalid_config, key + " " + rule);
}

// The model the options describe: model.layers, or model.hidden, or the preset's layers.
caf::expected<model_spec> build_model(const option_values& v, const model_preset& preset) {
  if (!v.layers.empty() && !v.hidden.empty())
    return bad("model.layers", "and model.hidden both describe the model; set one of them");
  std::optional<activation> act;
  if (!v.activation.empty()) {
    if (!v.layers.empty())
      return bad("model.activation", "applies to model.hidden and presets; with model.layers write "
                                     "the activation into each layer");
    act = parse_activation(v.activation);
    if (!act)
      return bad("model.activation", cat("must be one of ", names_of(all_activations), ", got \"",
                                         v.activation, "\""));
  }
  model_spec model;
  if (!v.hidden.empty()) {
    for (size_t i = 0; i < v.hidden.size(); ++i)
      if (v.hidden[i] <= 0)
        return bad(cat("model.hidden[", i, "]"), cat("must be > 0, got ", v.hidden[i]));
    model = dense_model({}, v.hidden, act.value_or(preset.hidden_activation),
                        v.classes > 0 ? v.classes : 10);
  } else {
    auto layers = parse_layers(v.layers.empty() ? preset.layers : v.layers,
                               v.layers.empty() ? cat("model.preset ", preset.name) : "model.layers");
    if (!layers)
      return std::move(layers.error());
    model.layers = std::move(*layers);
    if (act)
      for (auto& l : model.layers)
        if (l.act)
          l.act = act;
    if (v.classes > 0)
      model.layers.back().units = v.classes;
  }
  if (v.classes < 0)
    return bad("model.classes", cat("must be >= 0, got ", v.classes));
  if (auto why = model.validate(); !why.empty())
    return bad(v.layers.empty() ? "model:" : "model.layers:", why);
  return model;
}

caf::expected<optimizer_params> build_optimizer(const option_values& v, const model_preset& preset) {
  optimizer_params p;
  p.kind = preset.optimizer;
  if (!v.optimizer.empty()) {
    auto kind = parse_optimizer(v.optimizer);
    if (!kind)
      return bad("train.optimizer", cat("must be one of ", names_of(all_optimizers), ", got \"",
                                        v.optimizer, "\""));
    p.kind = *kind;
  }
  if (v.learning_rate < 0.0)
    return bad("train.learning-rate", cat("must be > 0, got ", v.learning_rate));
  p.learning_rate = v.learning_rate > 0.0 ? static_cast<float>(v.learning_rate) : preset.learning_rate;
  if (v.momentum >= 1.0 || (v.momentum < 0.0 && v.momentum != -1.0))
    return bad("train.momentum", cat("must be in [0, 1), got ", v.momentum));
  float preset_momentum = preset.momentum > 0.0f ? preset.momentum : 0.9f;
  p.momentum = v.momentum >= 0.0 ? static_cast<float>(v.momentum)
               : p.kind == optimizer_kind::rmsprop ? 0.0f
                                                   : preset_momentum;
  if (v.beta1 < 0.0 || v.beta1 >= 1.0 || v.beta2 < 0.0 || v.beta2 >= 1.0)
    return bad("train.beta1/beta2", "must be in [0, 1)");
  p.beta1 = static_cast<float>(v.beta1);
  p.beta2 = static_cast<float>(v.beta2);
  if (v.epsilon < 0.0)
    return bad("train.epsilon", cat("must be > 0, got ", v.epsilon));
  p.epsilon = v.epsilon > 0.0 ? static_cast<float>(v.epsilon)
                              : (p.kind == optimizer_kind::rmsprop ? 1e-10f : 1e-8f);
  p.rho = static_cast<float>(v.rho);
  p.initial_accumulator = static_cast<float>(v.initial_accumulator);
  p.weight_decay = static_cast<float>(v.weight_decay);
  auto schedule = parse_schedule(v.lr_schedule);
  if (!schedule)
    return bad("train.lr-schedule", cat("must be one of ", names_of(all_schedules), ", got \"",
                                        v.lr_schedule, "\""));
  p.schedule = *schedule;
  if (!(v.lr_decay_rate > 0.0 && v.lr_decay_rate <= 1.0))
    return bad("train.lr-decay-rate", cat("must be in (0, 1], got ", v.lr_decay_rate));
  p.decay_rate = static_cast<float>(v.lr_decay_rate);
  if (p.schedule == lr_schedule::constant && p.decay_rate != 1.0f)
    p.schedule = lr_schedule::exponential; // lr-decay-rate alone keeps its old meaning
  p.decay_steps = static_cast<long>(v.lr_decay_steps);
  p.staircase = v.lr_staircase;
  p.boundaries.assign(v.lr_boundaries.begin(), v.lr_boundaries.end());
  for (double x : v.lr_values)
    p.values.push_back(static_cast<float>(x));
  p.cosine_alpha = static_cast<float>(v.lr_alpha);
  if (p.schedule != lr_schedule::piecewise && (!p.boundaries.empty() || !p.values.empty()))
    return bad("train.lr-boundaries/lr-values", "apply to train.lr-schedule = piecewise only");
  if (auto why = check(p); !why.empty())
    return caf::make_error(errc::invalid_config, why);
  return p;
}

// TF's distortions: each option set explicitly, else the preset's.
caf::expected<augmentation> build_augmentation(const option_values& v, const preset_inputs& preset) {
  if (v.crop_padding < 0 || v.crop_padding > 64)
    return bad("data.crop-padding", cat("must be in [0, 64], got ", v.crop_padding));
  const std::string name = v.augment.empty() ? preset.augment : v.augment;
  auto aug = parse_augmentation(name, v.crop_padding);
  if (!aug)
    return bad("data.augment", cat("must be none, crop, flip or crop-flip, got \"", v.augment, "\""));
  if (v.crop_size < -1 || v.crop_size > 4096)
    return bad("data.crop-size", cat("must be in [0, 4096] (-1: the preset's), got ", v.crop_size));
  aug->crop_size = v.crop_size >= 0 ? v.crop_size : preset.crop_size;
  if (!(v.brightness == -1.0 || (v.brightness >= 0.0 && v.brightness <= 1e6)))
    return bad("data.brightness", cat("must be >= 0 (-1: the preset's), got ", v.brightness));
  aug->brightness = v.brightness >= 0.0 ? static_cast<float>(v.brightness) : preset.brightness;
  aug->contrast_lower = preset.contrast_lower;
  aug->contrast_upper = preset.contrast_upper;
  if (v.contrast == "none") {
    aug->contrast_lower = aug->contrast_upper = 1.0f;
  } else if (!v.contrast.empty()) {
    double lower = 0, upper = 0;
    char end = 0;
    if (std::sscanf(v.contrast.c_str(), "%lf,%lf%c", &lower, &upper, &end) != 2 || !(lower >= 0.0)
        || !(upper >= lower) || upper > 1e6)
      return bad("data.contrast", cat("must be \"LOWER,UPPER\" with 0 <= LOWER <= UPPER, or none, got \"",
                                      v.contrast, "\""));
    aug->contrast_lower = static_cast<float>(lower);
    aug->contrast_upper = static_cast<float>(upper);
  }
  if (v.standardize.empty())
    aug->standardize = preset.standardize;
  else if (v.standardize == "per-image" || v.standardize == "none")
    aug->standardize = v.standardize == "per-image";
  else
    return bad("data.standardize", cat("must be per-image or none, got \"", v.standardize, "\""));
  return *aug;
}

caf::expected<data_settings> build_data(const option_values& v, const preset_inputs& preset) {
  data_settings d;
  d.dir = v.data_dir;
  auto format = parse_data_format(v.data_format);
  if (!format)
    return bad("data.format", cat("must be auto, idx, cifar10, npz, image-folder or text, got \"", v.data_format, "\""));
  d.format = *format;
  auto layout = parse_pixel_layout(v.layout);
  if (!layout)
    return bad("data.layout", cat("must be auto, nhwc or nchw, got \"", v.layout, "\""));
  d.layout = *layout;
  auto color = parse_color_mode(v.color);
  if (!color)
    return bad("data.color", cat("must be auto, grey or rgb, got \"", v.color, "\""));
  d.images.color = *color;
  bool resize_ok = true;
  d.images.resize = parse_resize(v.resize, &resize_ok);
  if (!resize_ok)
    return bad("data.resize", cat("must be \"\" or HxW with sides in [1, 4096], e.g. \"32x32\", got \"", v.resize, "\""));
  d.class_names = v.class_names;
  if (v.data_threads < 1 || v.data_threads > 64)
    return bad("data.threads", cat("must be in [1, 64], got ", v.data_threads));
  d.threads = v.data_threads;
  if (v.prefetch_batches < 0 || v.prefetch_batches > 1024)
    return bad("data.prefetch-batches", cat("must be in [0, 1024], got ", v.prefetch_batches));
  d.prefetch_batches = v.prefetch_batches;
  if (v.max_tokens < 1 || v.max_tokens > 100000)
    return bad("data.max-tokens", cat("must be in [1, 100000], got ", v.max_tokens));
  d.text.max_tokens = v.max_tokens;
  d.text.bigrams = v.bigrams;
  if (v.validation_size < 0)
    return bad("data.validation-size", cat("must be >= 0, got ", v.validation_size));
  d.validation_size = v.validation_size;
  auto norm = parse_normalization(v.normalize);
  if (!norm)
    return bad("data.normalize", cat("must be none or per-channel, got \"", v.normalize, "\""));
  d.normalize = *norm;
  auto aug = build_augmentation(v, preset);
  if (!aug)
    return std::move(aug.error());
  d.augment = *aug;
  // text examples are token ids: image distortions and scaling would change the ids
  if (d.format == data_format::text && (d.augment.any() || d.normalize != normalization::none))
    return bad("data.format", "= text reads token ids: data.augment, crop-size, brightness, contrast, standardize "
                              "and normalize apply to images only (leave them unset)");
  return d;
}

} // namespace

caf::expected<train_settings> validate(const option_values& v) {
  train_settings s;
  if (v.scope.size() > 128 || v.scope.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-./") != std::string::npos
      || (!v.scope.empty() && (v.scope.front() == '/' || v.scope.back() == '/')))
    return bad("train.scope", cat("must be at most 128 letters, digits and _-./, not starting or ending with '/', got \"",
                                  v.scope, "\""));
  if (v.name.empty() || v.name.find('/') != std::string::npos)
    return bad("train.name", cat("must be a non-empty name without '/', got \"", v.name, "\""));
  if (v.run_dir.empty())
    return bad("train.run-dir", "must not be empty");
  const model_preset* preset = find_preset(v.preset);
  if (preset == nullptr)
    return bad("model.preset", cat("must be one of ", preset_names(), ", got \"", v.preset, "\""));
  if (v.batch_size < 0)
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
  if (v.eval_every_epochs < 0)
    return bad("train.eval-every-epochs", cat("must be >= 0, got ", v.eval_every_epochs));
  if (v.patience > 0 && v.eval_every == 0 && v.eval_every_epochs == 0)
    return bad("train.patience", cat("counts evaluations, but train.eval-every and train.eval-every-epochs are "
                                     "both 0: none would happen"));
  auto metric = parse_by_name(v.early_stopping_metric, all_stop_metrics);
  if (!metric)
    return bad("train.early-stopping-metric", cat("must be validation-loss or train-loss, got \"",
                                                  v.early_stopping_metric, "\""));
  auto opt = build_optimizer(v, *preset);
  if (!opt)
    return std::move(opt.error());
  auto model = build_model(v, *preset);
  if (!model)
    return std::move(model.error());
  init_options init = preset->init;
  if (!v.init.empty()) {
    auto scheme = parse_init_scheme(v.init);
    if (!scheme)
      return bad("model.init", cat("must be one of ", names_of(all_init_schemes), ", got \"", v.init, "\""));
    init.scheme = *scheme;
  }
  if (v.init_stddev < 0.0)
    return bad("model.init-stddev", cat("must be >= 0, got ", v.init_stddev));
  init.stddev = v.init_stddev;
  init.bias = v.bias_init;
  init.from = v.init_from; // read (and checked) by the role that initialises: the trainer or the chief
  auto saving = parse_by_name(v.save_model, all_model_savings);
  if (!saving)
    return bad("train.save-model", cat("must be one of ", names_of(all_model_savings), ", got \"", v.save_model, "\""));
  auto data = build_data(v, preset->inputs);
  if (!data)
    return std::move(data.error());
  auto mode = parse_device_mode(v.device);
  if (!mode)
    return bad("compute.device", cat("must be auto, cpu or gpu, got \"", v.device, "\""));
  if (v.gpu_index < 0)
    return bad("compute.gpu-index", cat("must be >= 0, got ", v.gpu_index));
  auto gpu_memory = parse_gpu_memory(v.gpu_memory);
  if (!gpu_memory)
    return std::move(gpu_memory.error());
  if (v.threads < 1)
    return bad("compute.threads", cat("must be >= 1, got ", v.threads));
  s.name = v.name;
  s.scope = v.scope;
  s.run_dir = v.run_dir;
  s.save_model = *saving;
  s.seed = static_cast<uint64_t>(v.seed);
  s.batch_size = v.batch_size > 0 ? v.batch_size : preset->batch_size;
  s.max_epochs = v.max_epochs;
  s.max_steps = v.max_steps;
  s.max_seconds = v.max_seconds;
  s.target_accuracy = v.target_accuracy;
  s.patience = v.patience;
  s.early_stopping = *metric;
  s.progress_every = v.progress_every;
  s.tensorboard = v.tensorboard;
  s.eval_every = v.eval_every;
  s.eval_every_epochs = v.eval_every_epochs;
  s.optimizer = std::move(*opt);
  s.preset = preset->name;
  s.model = std::move(*model);
  s.init = init;
  s.data = std::move(*data);
  s.device.mode = *mode;
  s.device.gpu_index = v.gpu_index;
  s.device.gpu_memory = *gpu_memory;
  s.device.pinned_copies = v.pinned_copies;
  s.device.soft_placement = v.soft_placement;
  s.device.cpu_threads = v.threads;
  for (auto& text : v.devices) {
    auto d = parse_device_name(text);
    if (!d)
      return std::move(d.error());
    for (auto& other : s.device.devices)
      if (other.kind == d->kind && other.index == d->index)
        return bad("compute.devices", cat("names ", text, " twice"));
    s.device.devices.push_back(*d);
  }
  return s;
}

} // namespace actorps
