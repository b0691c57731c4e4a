// A small learnable data set in memory: 4 classes of 4x4 images, class c lights up quadrant c.
#pragma once

#include "data/dataset.hpp"

#include <random>

namespace actorps::test {

/// Returns n examples of the quadrant task (pixels in [0, 1], labels 0..3), seeded.
inline dataset quadrant_set(int n, uint32_t seed) {
  std::mt19937 gen{seed};
  dataset d;
  d.rows = n;
  d.cols = 16;
  d.shape = {4, 4, 1};
  d.max_label = 3;
  for (int i = 0; i < n; ++i) {
    int c = static_cast<int>(gen() % 4);
    d.labels.push_back(static_cast<float>(c));
    for (int y = 0; y < 4; ++y)
      for (int x = 0; x < 4; ++x) {
        int base = (y / 2) * 2 + x / 2 == c ? 110 : 50;
        d.images.push_back(static_cast<float>(base + static_cast<int>(gen() % 100)) / 255.0f);
      }
  }
  return d;
}

/// Returns train / validation / test sets of the quadrant task.
inline data_splits quadrant_data(int train, int validation, int test) {
  return {quadrant_set(train, 1), quadrant_set(validation, 2), quadrant_set(test, 3), {}, {}};
}

} // namespace actorps::test
