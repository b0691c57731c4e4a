// Inside model/: the layer kinds defined outside layers.cpp (channel_layers.cpp) and what their
// backward passes share. Not a public header: the rest of the code builds layers with make_layer.
#pragma once

#include "model/layers.hpp"

#include <memory>
#include <optional>

namespace actorps {

/// dout = dout * act'(out), in place (nothing without an activation).
void activation_backward(backend& be, const std::optional<activation>& act, matrix out, float* dout);

std::unique_ptr<layer> make_depthwise_layer(const window_geometry& g, std::optional<activation> act);
std::unique_ptr<layer> make_separable_layer(const window_geometry& g, int channels, std::optional<activation> act);
std::unique_ptr<layer> make_lrn_layer(const image_shape& in, const lrn_params& p);
std::unique_ptr<layer> make_embedding_layer(const image_shape& in, const layer_spec& ls);

} // namespace actorps
