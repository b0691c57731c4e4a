// A model as a list of layers over an input image shape: dense, 2-D convolution, max pooling,
// dropout, batch normalisation, global average pooling and residual blocks, ending in the logits
// layer (dense, no activation) that softmax cross-entropy reads. Variables are named and ordered
// as they are created (the placement order).
#pragma once

#include "compute/activation.hpp"
#include "compute/backend.hpp"
#include "compute/window_geometry.hpp"
#include "model/variable_spec.hpp"

#include <caf/expected.hpp>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

enum class layer_kind { dense, conv, maxpool, dropout, batchnorm, avgpool, residual, depthwise, separable, lrn, embedding };

/// How an embedding layer combines the rows of an example's ids (TF1's combiner).
enum class combiner { mean, sum };

enum class padding_mode { same, valid };

const char* to_string(layer_kind k);
const char* to_string(padding_mode p);

/// One layer. Text form (parse_layer / text()):
///   dense UNITS [ACTIVATION]
///   conv KxKxCHANNELS [stride S] [same|valid] [ACTIVATION]     (default stride 1, same)
///   maxpool K [stride S] [same|valid]                          (default stride K, valid)
///   dropout RATE                                               (0 <= RATE < 1, training only)
///   depthwise KxK [stride S] [same|valid] [ACTIVATION]         (a filter per channel, and a bias)
///   separable KxKxCHANNELS [stride S] [same|valid] [ACTIVATION] (depthwise, then a 1x1 convolution)
///   batchnorm [decay D] [ACTIVATION]  (per channel, epsilon 0.001; the moving statistics keep D of
///                                   themselves per step, 0 < D < 1, TF1's default 0.99; "decay=D" too)
///   avgpool global                 (the mean of each channel: 1 x 1 x channels)
///   lrn [radius R] [bias B] [alpha A] [beta BETA]   (tf.nn.lrn; defaults 5, 1, 1, 0.5)
///   embedding B D [mean|sum]      (an embedding bag: a table of 2^B rows of D values, B in [1, 30]; an
///       example's token ids (data.format = text) pick rows, id mod 2^B, combined by their mean
///       (default) or sum: 1 x 1 x D; only as the first layer; its gradients touch only those rows)
///   residual [LAYER, LAYER, ...] [ACTIVATION]
///       a block: ACTIVATION(layers(x) + shortcut(x)); the shortcut is x itself when the layers keep
///       its shape, else a 1x1 convolution with the stride that gives their output's shape
/// "flatten" is accepted and implied: a dense layer reads its input flattened (NHWC order).
struct layer_spec {
  layer_kind kind = layer_kind::dense;
  int units = 0;  ///< dense: outputs; conv, separable: output channels
  int kernel = 0; ///< conv, depthwise, separable: kernel side; maxpool: window side
  int stride = 1;
  padding_mode padding = padding_mode::same;
  std::optional<activation> act;
  float rate = 0.0f; ///< dropout
  std::vector<layer_spec> body; ///< residual: the block's layers
  lrn_params lrn;               ///< lrn
  float decay = 0.99f;          ///< batchnorm: the moving statistics' decay (TF1's default)
  int bucket_bits = 0;          ///< embedding: the table has 2^bucket_bits rows (units: its width)
  combiner combine = combiner::mean; ///< embedding

  /// Returns the canonical text, e.g. "conv 3x3x32 relu".
  std::string text() const;

  friend bool operator==(const layer_spec& a, const layer_spec& b);
};

/// An example's shape: height x width x channels (NHWC, channels fastest); a dense layer's
/// output is 1 x 1 x units.
struct image_shape {
  int height = 28;
  int width = 28;
  int channels = 1;
  size_t size() const {
    return static_cast<size_t>(height) * static_cast<size_t>(width) * static_cast<size_t>(channels);
  }
  std::string text() const; ///< "28x28x1"
  friend bool operator==(const image_shape& a, const image_shape& b) {
    return a.height == b.height && a.width == b.width && a.channels == b.channels;
  }
};

struct model_spec {
  image_shape input;
  std::vector<layer_spec> layers; ///< the last one is the logits layer

  /// The number of classes: the logits layer's units.
  int classes() const;

  /// Returns each layer's output shape. REQUIRES: validate() is empty.
  std::vector<image_shape> output_shapes() const;

  /// The window of conv or maxpool layer l over its input. REQUIRES: validate() is empty.
  window_geometry geometry(size_t l) const;

  /// Returns the variables in creation order: weights then bias per trainable layer, named
  /// conv<i> / dense<i> by kind and count, the last layer "logits".
  std::vector<variable_spec> variables() const;

  /// Returns, per layer, the index of its first variable (-1 for layers without variables).
  std::vector<int> first_variable() const;

  /// Returns, per layer, how many variables it has (dense and conv 2, batchnorm 4, a block its
  /// layers' and its shortcut projection's).
  std::vector<int> variable_counts() const;

  /// Returns the multiply-adds of one example's forward pass.
  size_t forward_macs() const;

  /// Returns an error text naming the layer (position and text) whose sizes do not fit, empty if
  /// the model is usable.
  std::string validate() const;

  /// Returns whether every layer is dense (what model parallelism splits).
  bool dense_only() const;

  /// The layer list as texts.
  std::vector<std::string> layer_texts() const;

  /// The whole model as one line, e.g. "28x28x1: conv 3x3x32 relu, maxpool 2, dense 10" (what a
  /// checkpoint records; parse_model_text reads it back).
  std::string text() const;
};

/// Batch normalisation's epsilon (TF1's tf.layers.batch_normalization default; its decay is the
/// layer's, carried by the moving statistics' variable_spec to the optimizer and the shards).
constexpr float batchnorm_epsilon = 0.001f;

/// The geometry of conv / maxpool layer l over its input `in`.
window_geometry geometry_of(const layer_spec& l, const image_shape& in);

/// The output shape of layer l on input `in`. REQUIRES: l fits in (validate()).
image_shape output_shape(const layer_spec& l, const image_shape& in);

/// A residual block's 1x1 projection from `in` to the block's output `out` (nullopt: the shortcut
/// is the identity, in == out).
std::optional<window_geometry> shortcut_geometry(const image_shape& in, const image_shape& out);

/// Parses "HxWxC" (each > 0); nullopt otherwise.
std::optional<image_shape> parse_image_shape(const std::string& text);

/// Parses model_spec::text() back and validates the model; errors name `what` (a file) and say
/// what is wrong.
caf::expected<model_spec> parse_model_text(const std::string& text, const std::string& what);

/// The dense shorthand: hidden layers of the given widths and activation, then classes logits.
model_spec dense_model(image_shape input, const std::vector<int>& hidden, activation act, int classes);

/// Parses one layer; errors say what is wrong with the text (without a position).
caf::expected<layer_spec> parse_layer(const std::string& text);

/// Parses a layer list; errors name the key, the position and the text, e.g.
/// model.layers[2] "conv 3x3": expected KxKxCHANNELS. "flatten" entries are dropped.
caf::expected<std::vector<layer_spec>> parse_layers(const std::vector<std::string>& texts,
                                                    const std::string& key = "model.layers");

} // namespace actorps
