// Named models with their own training defaults (model.preset): the exercise-10 notebook's MLP,
// the seed documents' sigmoid net and softmax regression, a small CNN, TensorFlow's CIFAR-10
// tutorial network, He et al.'s ResNet-20 and a small Xception. Options a user sets
// explicitly override a preset's defaults.
#pragma once

#include "compute/optimizer_rules.hpp"
#include "model/init.hpp"

#include <string>
#include <vector>

namespace actorps {

/// The input distortions a preset trains with (data.augment, data.crop-size, data.brightness,
/// data.contrast, data.standardize when not set).
struct preset_inputs {
  const char* augment = "none";
  int crop_size = 0;
  float brightness = 0;
  float contrast_lower = 1, contrast_upper = 1;
  bool standardize = false;
};

struct model_preset {
  const char* name;
  std::vector<std::string> layers; ///< the layer list, logits last
  activation hidden_activation;    ///< for model.hidden without model.activation
  init_options init;
  optimizer_kind optimizer;
  float learning_rate;
  float momentum;
  int batch_size;
  const char* description;
  preset_inputs inputs = {};
};

/// Every preset: reference, seed-sigmoid, softmax, cnn, cifar10-tutorial, resnet20, xception-mini, text-hash.
const std::vector<model_preset>& model_presets();

/// Returns the preset of that name, or nullptr.
const model_preset* find_preset(const std::string& name);

/// Returns "reference, seed-sigmoid, softmax, cnn, cifar10-tutorial, resnet20, xception-mini, text-hash" (for messages).
std::string preset_names();

} // namespace actorps
