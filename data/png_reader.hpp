// Reads PNG images (Debian's libpng) as model inputs: grey or RGB, 8 or 16 bits, palette or not,
// alpha composited onto black. A size other than the model's is an error unless the caller asks
// for a resize (bilinear); a channel count other than the model's is always an error.
#pragma once

#include "data/dataset.hpp"

#include <caf/expected.hpp>

#include <string>

namespace actorps {

/// A decoded image: h x w x c floats in [0, 1], channels fastest.
struct decoded_image {
  image_shape shape;
  std::vector<float> pixels;
};

/// Decodes the PNG at path; channels 1 or 3 converts to grey or RGB (libpng's conversion), 0
/// keeps what the file holds (grey or RGB; alpha composited onto black). Errors as read_png's.
caf::expected<decoded_image> decode_png(const std::string& path, int channels = 0);

/// Reads the image at path as a one-example data set of shape `want` (pixels in [0, 1], label 0).
/// Errors name the path: a missing or unreadable file, not a PNG or a corrupt one (libpng's
/// message), "a grey image (1 channel), the model takes 3 (RGB)", "40x30 pixels, the model takes
/// 28x28 (pass --resize to scale it)".
caf::expected<dataset> read_png(const std::string& path, const image_shape& want, bool resize);

/// Returns whether the file at path starts with PNG's signature.
bool looks_like_png(const std::string& path);

/// Bilinear resize of one h x w x c image (align-corners off, as most image libraries do).
std::vector<float> resize_bilinear(const std::vector<float>& image, const image_shape& from, const image_shape& to);

} // namespace actorps
