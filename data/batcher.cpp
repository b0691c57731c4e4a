// Partitioning and seeded epoch shuffling (portable Fisher-Yates on mt19937_64).
#include "data/batcher.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <random>

namespace actorps {

index_range partition_range(int n, int part, int parts) {
  auto at = [&](int p) { return static_cast<int>(static_cast<long>(n) * p / parts); };
  return {at(part), at(part + 1)};
}

batcher::batcher(const dataset& data, index_range range, int batch_size, uint64_t seed)
  : data_(data), range_(range), batch_size_(batch_size), seed_(seed) {
  order_.resize(static_cast<size_t>(range.size()));
  reshuffle();
}

std::vector<int> epoch_order(index_range range, uint64_t seed, long epoch) {
  std::vector<int> order(static_cast<size_t>(range.size()));
  std::iota(order.begin(), order.end(), range.begin);
  std::mt19937_64 gen{seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch)};
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[gen() % i]);
  return order;
}

void batcher::reshuffle() {
  order_ = epoch_order(range_, seed_, epoch_);
  cursor_ = 0;
}

void copy_examples(const dataset& data, const augmentation& aug, const int32_t* indices, int n, uint64_t seed,
                   float* images, float* labels) {
  const size_t px = static_cast<size_t>(data.cols);
  for (int r = 0; r < n; ++r)
    labels[r] = data.labels[static_cast<size_t>(indices[r])];
  if (!aug.any()) {
    for (int r = 0; r < n; ++r)
      std::memcpy(images + r * px, data.images.data() + static_cast<size_t>(indices[r]) * px, px * sizeof(float));
    return;
  }
  std::vector<const float*> sources(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r)
    sources[static_cast<size_t>(r)] = data.images.data() + static_cast<size_t>(indices[r]) * px;
  augment_batch(aug, data.shape, n, seed, sources.data(), images);
}

uint64_t augment_seed_at(uint64_t seed, long epoch, int position) {
  return (seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch)) * 1000003ULL + static_cast<uint64_t>(position);
}

batch_view batcher::next(float* images, float* labels) {
  uint64_t seed = 0;
  auto out = next_indices(scratch_, seed);
  copy_examples(data_, aug_, scratch_.data(), out.rows, seed, images, labels);
  return out;
}

batch_view batcher::next_indices(std::vector<int32_t>& indices, uint64_t& augment_seed) {
  const int rows = std::min(batch_size_, static_cast<int>(order_.size()) - cursor_);
  indices.assign(order_.begin() + cursor_, order_.begin() + cursor_ + rows);
  augment_seed = augment_seed_at(seed_, epoch_, cursor_);
  cursor_ += rows;
  batch_view out{rows, cursor_ == static_cast<int>(order_.size())};
  if (out.ends_epoch) {
    ++epoch_;
    reshuffle();
  }
  return out;
}

} // namespace actorps
