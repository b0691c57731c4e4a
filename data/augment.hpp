// Training-time augmentation of one batch: a random crop of each image after zero padding, and a
// horizontal flip of about half of them; one seed per batch decides every choice.
#pragma once

#include "data/data_source.hpp"

#include <cstdint>

namespace actorps {

/// Augments rows NHWC images of `shape` in place as `aug` says, drawing from seed.
void augment_batch(const augmentation& aug, const image_shape& shape, int rows, uint64_t seed,
                   float* images);

} // namespace actorps
