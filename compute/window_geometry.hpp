// The geometry of a sliding window over NHWC images: a convolution's receptive field or a pooling
// window. One struct serves im2col/col2im and max pooling on every backend.
#pragma once

#include "compute/host_device.hpp"

#include <cstddef>

namespace actorps {

/// Per example: input in_h x in_w x channels (NHWC, channels fastest), output out_h x out_w
/// positions; window k_h x k_w moved by stride, the input padded by pad_top / pad_left (and
/// whatever the bottom / right need) with zeros (convolution) or ignored cells (pooling).
struct window_geometry {
  int in_h = 0;
  int in_w = 0;
  int channels = 0;
  int out_h = 0;
  int out_w = 0;
  int k_h = 0;
  int k_w = 0;
  int stride = 1;
  int pad_top = 0;
  int pad_left = 0;

  /// Floats of one example's input.
  ACTORPS_HOST_DEVICE size_t in_size() const {
    return static_cast<size_t>(in_h) * static_cast<size_t>(in_w) * static_cast<size_t>(channels);
  }

  /// Output positions of one example.
  ACTORPS_HOST_DEVICE int positions() const { return out_h * out_w; }

  /// Columns of the im2col matrix: one window's values, ordered (k_h, k_w, channels).
  ACTORPS_HOST_DEVICE int window_size() const { return k_h * k_w * channels; }

  /// Returns whether the sizes are positive and every window starts inside the padded input.
  bool valid() const {
    return in_h > 0 && in_w > 0 && channels > 0 && out_h > 0 && out_w > 0 && k_h > 0 && k_w > 0
           && stride > 0 && pad_top >= 0 && pad_left >= 0 && (out_h - 1) * stride - pad_top < in_h
           && (out_w - 1) * stride - pad_left < in_w;
  }
};

} // namespace actorps
