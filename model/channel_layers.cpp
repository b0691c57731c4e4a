// The layers of TF's CIFAR tutorial and of Xception that work per channel: depthwise and separable
// convolutions and local response normalisation (tf.nn.lrn). (The others: layers.cpp.)
#include "model/layer_kinds.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

namespace actorps {

namespace {

// y = act(depthwise(x, w) + b): a filter per channel.
class depthwise_layer final : public layer {
public:
  depthwise_layer(window_geometry g, std::optional<activation> act) : g_(g), act_(act) {
  }

  caf::error allocate(backend&, int) override {
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool, uint64_t) override {
    be.depthwise(g_, io.rows, io.in, v.values[0], io.out);
    matrix out = rows(io.out, io.rows);
    be.add_bias(out, v.values[1]);
    if (act_)
      be.activate(*act_, out, out);
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars& v) override {
    activation_backward(be, act_, rows(io.out, io.rows), dout);
    be.sum_rows(rows(dout, io.rows), v.grads[1]);
    be.depthwise_backward_weights(g_, io.rows, io.in, dout, v.grads[0]);
    if (din != nullptr)
      be.depthwise_backward_input(g_, io.rows, dout, v.values[0], din);
  }

private:
  matrix rows(float* base, int examples) const {
    return {base, examples * g_.positions(), g_.channels};
  }

  window_geometry g_;
  std::optional<activation> act_;
};

// y = act(depthwise(x, w_d) W_p + b): a filter per channel into a buffer of the layer's own, then
// a 1x1 convolution (a product over the channels). vars: depthwise_weights, pointwise_weights, bias.
class separable_layer final : public layer {
public:
  separable_layer(window_geometry g, int channels, std::optional<activation> act) : g_(g), out_channels_(channels), act_(act) {
  }

  caf::error allocate(backend& be, int max_batch) override {
    return allocate_into(be, static_cast<size_t>(max_batch) * g_.positions() * g_.channels, mid_);
  }

  void forward(backend& be, const layer_io& io, const layer_vars& v, bool, uint64_t) override {
    be.depthwise(g_, io.rows, io.in, v.values[0], mid_.data());
    matrix out = rows(io.out, io.rows, out_channels_);
    be.gemm(false, false, 1.0f, rows(mid_.data(), io.rows, g_.channels), pointwise(v.values[1]), 0.0f, out);
    be.add_bias(out, v.values[2]);
    if (act_)
      be.activate(*act_, out, out);
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars& v) override {
    matrix delta = rows(dout, io.rows, out_channels_), mid = rows(mid_.data(), io.rows, g_.channels);
    activation_backward(be, act_, rows(io.out, io.rows, out_channels_), dout);
    be.sum_rows(delta, v.grads[2]);
    be.gemm(true, false, 1.0f, mid, delta, 0.0f, {v.grads[1], g_.channels, out_channels_});
    be.gemm(false, true, 1.0f, delta, pointwise(v.values[1]), 0.0f, mid); // (the depthwise output's gradient)
    be.depthwise_backward_weights(g_, io.rows, io.in, mid_.data(), v.grads[0]);
    if (din != nullptr)
      be.depthwise_backward_input(g_, io.rows, mid_.data(), v.values[0], din);
  }

private:
  matrix rows(float* base, int examples, int cols) const {
    return {base, examples * g_.positions(), cols};
  }

  matrix pointwise(const float* w) const {
    return {const_cast<float*>(w), g_.channels, out_channels_};
  }

  window_geometry g_;
  int out_channels_;
  std::optional<activation> act_;
  buffer mid_;
};

// tf.nn.lrn over the channels of each example's positions.
class lrn_layer final : public layer {
public:
  lrn_layer(const image_shape& in, const lrn_params& p) : positions_(in.height * in.width), channels_(in.channels), p_(p) {
  }

  caf::error allocate(backend&, int) override {
    return caf::none;
  }

  void forward(backend& be, const layer_io& io, const layer_vars&, bool, uint64_t) override {
    be.lrn(rows(const_cast<float*>(io.in), io.rows), p_, rows(io.out, io.rows));
  }

  void backward(backend& be, const layer_io& io, float* dout, float* din, const layer_vars&) override {
    if (din != nullptr)
      be.lrn_backward(rows(const_cast<float*>(io.in), io.rows), rows(io.out, io.rows), rows(dout, io.rows), p_,
                      rows(din, io.rows));
  }

private:
  matrix rows(float* base, int examples) const {
    return {base, examples * positions_, channels_};
  }

  int positions_;
  int channels_;
  lrn_params p_;
};

} // namespace

std::unique_ptr<layer> make_depthwise_layer(const window_geometry& g, std::optional<activation> act) {
  return std::make_unique<depthwise_layer>(g, act);
}

std::unique_ptr<layer> make_separable_layer(const window_geometry& g, int channels, std::optional<activation> act) {
  return std::make_unique<separable_layer>(g, channels, act);
}

std::unique_ptr<layer> make_lrn_layer(const image_shape& in, const lrn_params& p) {
  return std::make_unique<lrn_layer>(in, p);
}

} // namespace actorps
