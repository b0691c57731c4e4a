// libpng's simplified API (png_image): no setjmp/longjmp, errors in image.message.
#include "data/png_reader.hpp"

#include "data/jpeg_reader.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <png.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>

namespace actorps {

bool looks_like_png(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  unsigned char head[8] = {};
  return in.read(reinterpret_cast<char*>(head), 8) && png_sig_cmp(head, 0, 8) == 0;
}

std::vector<float> resize_bilinear(const std::vector<float>& image, const image_shape& from, const image_shape& to) {
  std::vector<float> out(to.size());
  const int c = from.channels;
  const double sy = static_cast<double>(from.height) / to.height, sx = static_cast<double>(from.width) / to.width;
  for (int y = 0; y < to.height; ++y) {
    double fy = std::clamp((y + 0.5) * sy - 0.5, 0.0, from.height - 1.0);
    int y0 = static_cast<int>(fy), y1 = std::min(y0 + 1, from.height - 1);
    double wy = fy - y0;
    for (int x = 0; x < to.width; ++x) {
      double fx = std::clamp((x + 0.5) * sx - 0.5, 0.0, from.width - 1.0);
      int x0 = static_cast<int>(fx), x1 = std::min(x0 + 1, from.width - 1);
      double wx = fx - x0;
      for (int k = 0; k < c; ++k) {
        auto at = [&](int yy, int xx) { return image[(static_cast<size_t>(yy) * from.width + xx) * c + k]; };
        double top = at(y0, x0) * (1 - wx) + at(y0, x1) * wx;
        double bottom = at(y1, x0) * (1 - wx) + at(y1, x1) * wx;
        out[(static_cast<size_t>(y) * to.width + x) * c + k] = static_cast<float>(top * (1 - wy) + bottom * wy);
      }
    }
  }
  return out;
}

caf::error check_image_size(const std::string& path, uint64_t width, uint64_t height) {
  if (width * height <= max_image_pixels) // (each below 2^32: no overflow)
    return caf::none;
  return caf::make_error(errc::corrupt_data, cat(path, ": its header declares ", width, "x", height, " pixels, more than the ",
                                                 max_image_pixels, " (8192x8192) actorps decodes from one image"));
}

caf::expected<decoded_image> decode_png(const std::string& path, int channels) {
  std::ifstream probe{path, std::ios::binary};
  if (!probe)
    return caf::make_error(errc::file_error, cat(path, ": cannot be read"));
  probe.close();
  if (!looks_like_png(path))
    return caf::make_error(errc::corrupt_data, cat(path, ": not a PNG image (no PNG signature)"));
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  if (!png_image_begin_read_from_file(&image, path.c_str()))
    return caf::make_error(errc::corrupt_data, cat(path, ": a corrupt PNG (", image.message, ")"));
  if (auto err = check_image_size(path, image.width, image.height)) {
    png_image_free(&image);
    return err;
  }
  const bool color = channels == 0 ? (image.format & PNG_FORMAT_FLAG_COLOR) != 0 : channels == 3;
  image.format = color ? PNG_FORMAT_RGB : PNG_FORMAT_GRAY; // alpha composited onto black
  decoded_image out{{static_cast<int>(image.height), static_cast<int>(image.width), color ? 3 : 1}, {}};
  std::vector<png_byte> bytes(PNG_IMAGE_SIZE(image));
  png_color black{0, 0, 0};
  if (!png_image_finish_read(&image, &black, bytes.data(), 0, nullptr))
    return caf::make_error(errc::corrupt_data, cat(path, ": a corrupt PNG (", image.message, ")"));
  out.pixels.resize(bytes.size());
  for (size_t i = 0; i < bytes.size(); ++i)
    out.pixels[i] = static_cast<float>(bytes[i]) * (1.0f / 255.0f); // as the IDX and CIFAR-10 readers scale
  return out;
}

caf::expected<dataset> read_image(const std::string& path, const image_shape& want, bool resize) {
  const int channels = resize ? want.channels : 0; // (resizing converts the colours too)
  auto image = looks_like_jpeg(path) ? decode_jpeg(path, channels) : decode_png(path, channels);
  if (!image)
    return std::move(image.error());
  const image_shape got = image->shape;
  if (got.channels != want.channels)
    return caf::make_error(errc::shape_mismatch,
                           cat(path, ": ", got.channels == 3 ? "an RGB image (3 channels)" : "a grey image (1 channel)",
                               ", the model takes ", want.channels, want.channels == 1 ? " (grey)" : " (RGB)",
                               " (pass --resize to convert it)"));
  if ((got.height != want.height || got.width != want.width) && !resize)
    return caf::make_error(errc::shape_mismatch, cat(path, ": ", got.width, "x", got.height, " pixels, the model takes ",
                                                     want.width, "x", want.height, " (pass --resize to scale it)"));
  dataset out;
  out.rows = 1;
  out.shape = want;
  out.cols = static_cast<int>(want.size());
  out.images = got == want ? std::move(image->pixels) : resize_bilinear(image->pixels, got, want);
  out.labels = {0.0f};
  return out;
}

} // namespace actorps
