// The presets' definitions.
#include "model/presets.hpp"

namespace actorps {

namespace {

// The presets' batch normalisation: decay 0.9 (PyTorch's momentum 0.1) rather than TF1's 0.99, so
// the moving statistics that evaluation uses follow the weights within ~10 steps, where 0.99's
// average the last ~100 (docs/config.md, the layers table).
const std::string bn = "batchnorm decay 0.9";

// He et al.'s CIFAR ResNet-(6n+2): 3 stages of n basic blocks (16, 32, 64 channels; the first
// block of the second and third stage halves the size), global average pooling, 10 logits.
std::vector<std::string> resnet(int n) {
  std::vector<std::string> out = {"conv 3x3x16", bn + " relu"};
  for (int stage = 0; stage < 3; ++stage) {
    const int c = 16 << stage;
    for (int b = 0; b < n; ++b) {
      const std::string stride = stage > 0 && b == 0 ? " stride 2" : "";
      out.push_back("residual [conv 3x3x" + std::to_string(c) + stride + ", " + bn + " relu, conv 3x3x" +
                    std::to_string(c) + ", " + bn + "] relu");
    }
  }
  out.push_back("avgpool global");
  out.push_back("dense 10");
  return out;
}

// Xception (Chollet, 2017) sized for 28x28 and 32x32 inputs: the entry flow halves the size three
// times (a strided stem, then two blocks that end in 3x3 max pooling, stride 2), the middle flow
// repeats blocks of three separable convolutions at 4x4, the exit flow pools once more and widens.
std::vector<std::string> xception_mini() {
  auto block = [](int c, int convs, bool pool, int last = 0) {
    std::string body;
    for (int k = 0; k < convs; ++k) {
      const int width = k + 1 == convs && last > 0 ? last : c;
      body += (k > 0 ? ", " : "") + std::string{"separable 3x3x"} + std::to_string(width) +
              ", " + bn + (k + 1 < convs ? " relu" : "");
    }
    return "residual [" + body + (pool ? ", maxpool 3 stride 2 same" : "") + "] relu";
  };
  return {"conv 3x3x32 stride 2", bn + " relu", "conv 3x3x64", bn + " relu", // entry flow
          block(128, 2, true), block(256, 2, true),
          block(256, 3, false), block(256, 3, false), // middle flow
          block(256, 2, true, 384), "separable 3x3x512", bn + " relu", // exit flow
          "avgpool global", "dense 10"};
}

} // namespace

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
    {"cifar10-tutorial",
     {"conv 5x5x64 relu", "maxpool 3 stride 2 same", "lrn radius 4 alpha 0.000111111 beta 0.75", "conv 5x5x64 relu",
      "lrn radius 4 alpha 0.000111111 beta 0.75", "maxpool 3 stride 2 same", "dense 384 relu", "dense 192 relu", "dense 10"},
     activation::relu, {init_scheme::truncated_normal, 0.05, 0.1, ""}, optimizer_kind::sgd, 0.1f, 0.0f, 128,
     "TensorFlow's CIFAR-10 tutorial network (conv 5x5x64, pool 3x3 stride 2, LRN, conv 5x5x64, LRN, pool, dense 384, "
     "dense 192): truncated-normal init, SGD lr 0.1, batch 128; its input pipeline: random 24x24 crops, flips, "
     "brightness (63 / 255), contrast [0.2, 1.8], per-image standardisation (central crops at evaluation)",
     {"flip", 24, 63.0f / 255.0f, 0.2f, 1.8f, true}},
    {"resnet20", resnet(3), activation::relu, {init_scheme::he, 0.0, 0.0, ""}, optimizer_kind::momentum, 0.05f, 0.9f, 50,
     "He et al.'s CIFAR ResNet-20: conv 3x3x16, 3 stages x 3 basic blocks (16/32/64 channels, batch norm, 1x1 "
     "projections where a stage halves the size), global average pooling; momentum SGD lr 0.05 / 0.9, batch 50"},
    {"xception-mini", xception_mini(), activation::relu, {init_scheme::he, 0.0, 0.0, ""}, optimizer_kind::momentum, 0.05f,
     0.9f, 50,
     "Xception's entry, middle and exit flows for 28x28 and 32x32 inputs: separable convolutions with batch norm in "
     "residual blocks (1x1 projections where a block pools), global average pooling; momentum SGD lr 0.05 / 0.9, batch 50"},
    {"text-hash", {"embedding 22 32 mean", "dense 64 relu", "dense 2"}, activation::relu,
     {init_scheme::he, 0.0, 0.0, ""}, optimizer_kind::adagrad, 0.5f, 0.0f, 50,
     "for data.format = text: hashed words and bigrams into an embedding bag of 2^22 x 32 (mean), dense 64 relu, "
     "2 classes (model.classes for more); Adagrad lr 0.5, batch 50 (only the rows a batch touches move)"},
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
