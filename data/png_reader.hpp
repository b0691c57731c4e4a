// Reads PNG images (Debian's libpng) as model inputs: grey or RGB, 8 or 16 bits, palette or not,
// alpha composited onto black; read_image takes JPEG too (data/jpeg_reader). A size or colours
// other than the model's are an error unless the caller asks for a resize (bilinear, converted).
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

/// The most pixels actorps decodes from one image, 2^26 (8192 x 8192): a header that declares
/// more is refused by name before anything is allocated (a crafted 65500 x 65500 JPEG of a few
/// bytes asked for 17 GB; PNG 100000^2 and JPEG 20000^2 cost 1.5-1.7 GB before their error).
constexpr uint64_t max_image_pixels = uint64_t{1} << 26;

/// Returns corrupt_data naming path and both sizes when width x height exceeds max_image_pixels.
caf::error check_image_size(const std::string& path, uint64_t width, uint64_t height);

/// Decodes the PNG at path; channels 1 or 3 converts to grey or RGB (libpng's conversion), 0
/// keeps what the file holds (grey or RGB; alpha composited onto black). Errors as read_png's.
caf::expected<decoded_image> decode_png(const std::string& path, int channels = 0);

/// Reads the PNG or JPEG image at path (by its content) as a one-example data set of shape `want`
/// (pixels in [0, 1], label 0). With resize, an image of another size is scaled (bilinear) and
/// one of other colours converted (the libraries' grey/RGB conversion, as image folders are read);
/// without, both are refused. Errors name the path: a missing or unreadable file, neither image
/// kind or a corrupt one (the library's message), "a grey image (1 channel), the model takes 3
/// (RGB) (pass --resize to convert it)", "40x30 pixels, the model takes 28x28 (pass --resize to
/// scale it)".
caf::expected<dataset> read_image(const std::string& path, const image_shape& want, bool resize);

/// Returns whether the file at path starts with PNG's signature.
bool looks_like_png(const std::string& path);

/// Bilinear resize of one h x w x c image (align-corners off, as most image libraries do).
std::vector<float> resize_bilinear(const std::vector<float>& image, const image_shape& from, const image_shape& to);

} // namespace actorps
