// Crop offsets in [-pad, pad] on each axis: the output pixel (y, x) reads input (y + dy, x + dx),
// zero outside the image (the padding); a flip then reads column w - 1 - x.
#include "data/augment.hpp"

#include <random>
#include <vector>

namespace actorps {

void augment_batch(const augmentation& aug, const image_shape& shape, int rows, uint64_t seed,
                   float* images) {
  if (!aug.enabled)
    return;
  std::mt19937_64 gen{seed};
  const int h = shape.height, w = shape.width, c = shape.channels, pad = aug.crop_padding;
  std::vector<float> src(shape.size());
  for (int r = 0; r < rows; ++r) {
    float* img = images + static_cast<size_t>(r) * shape.size();
    src.assign(img, img + shape.size());
    const int dy = pad > 0 ? static_cast<int>(gen() % (2 * pad + 1)) - pad : 0;
    const int dx = pad > 0 ? static_cast<int>(gen() % (2 * pad + 1)) - pad : 0;
    const bool flip = aug.flip && (gen() & 1) != 0;
    for (int y = 0; y < h; ++y)
      for (int x = 0; x < w; ++x) {
        int sy = y + dy, sx = (flip ? w - 1 - x : x) + dx;
        bool inside = sy >= 0 && sy < h && sx >= 0 && sx < w;
        for (int k = 0; k < c; ++k)
          img[(static_cast<size_t>(y) * w + x) * c + k] =
            inside ? src[(static_cast<size_t>(sy) * w + sx) * c + k] : 0.0f;
      }
  }
}

} // namespace actorps
