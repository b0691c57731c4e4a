// The presets' definitions.
#include "model/presets.hpp"

namespace actorps {

const std::vector<model_preset>& model_presets() {
  static const std::vector<model_preset> all = {
    {"reference",
     {"dense 160 elu", "dense 160 elu", "dense 160 elu", "dense 160 elu", "dense 160 elu", "dense 10"},
     activation::elu, {init_scheme::notebook, 0.0, 0.0, ""}, optimizer_kind::momentum, 0.01f, 0.95f, 50,
     "the exercise-10 notebook: 5 x 160 ELU, momentum SGD lr 0.01 / 0.95, batch 50"},
    {"seed-sigmoid", {"dense 100 sigmoid", "dense 10"}, activation::sigmoid,
     {init_scheme::random_normal, 0.0, 0.0, ""}, optimizer_kind::sgd, 0.001f, 0.0f, 100,
     "the seeds' 784-100-10 sigmoid net: random_normal init, plain SGD lr 0.001, batch 100"},
    {"softmax", {"dense 10"}, activation::elu, {init_scheme::random_normal, 0.0, 0.0, ""},
     optimizer_kind::sgd, 0.001f, 0.0f, 100,
     "the seeds' softmax regression: random_normal init, plain SGD lr 0.001, batch 100"},
    {"cnn",
     {"conv 3x3x32 relu", "maxpool 2", "conv 3x3x64 relu", "maxpool 2", "dense 128 relu", "dense 10"},
     activation::relu, {init_scheme::glorot_uniform, 0.0, 0.0, ""}, optimizer_kind::momentum, 0.01f,
     0.9f, 50, "conv 3x3x32 - pool - conv 3x3x64 - pool - dense 128, momentum SGD lr 0.01 / 0.9, batch 50"},
  };
  return all;
}

const model_preset* find_preset(const std::string& name) {
  for (auto& p : model_presets())
    if (name == p.name)
      return &p;
  return nullptr;
}

std::string preset_names() {
  std::string out;
  for (auto& p : model_presets())
    out += (out.empty() ? "" : ", ") + std::string{p.name};
  return out;
}

} // namespace actorps
