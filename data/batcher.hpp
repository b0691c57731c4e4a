// Partition j of W of a training set, served as seeded, reshuffled-each-epoch mini-batches.
#pragma once

#include "data/augment.hpp"
#include "data/dataset.hpp"

#include <cstdint>
#include <vector>

namespace actorps {

/// A half-open range of example indices.
struct index_range {
  int begin = 0;
  int end = 0;
  int size() const { return end - begin; }
};

/// Returns partition part of parts over n examples: [part*n/parts, (part+1)*n/parts).
/// The partitions are disjoint and cover [0, n). REQUIRES: 0 <= part < parts.
index_range partition_range(int n, int part, int parts);

/// The example order of `epoch`: range's indices shuffled, seeded by (seed, epoch). The batcher
/// serves its epochs in this order; elastic training's data leases cut it into pieces.
std::vector<int> epoch_order(index_range range, uint64_t seed, long epoch);

/// The augmentation seed of the batch at `position` of epoch `epoch`'s order (seed: the order's).
/// The batcher's batches and elastic training's leases take theirs from it.
uint64_t augment_seed_at(uint64_t seed, long epoch, int position);

/// One mini-batch copied out of the data set.
struct batch_view {
  int rows = 0;             ///< examples in this batch (the last of an epoch may be smaller)
  bool ends_epoch = false;  ///< whether this batch completes an epoch of the partition
};

/// Copies examples `indices[0..n)` of data into images (n x augmented_shape(aug, data.shape)
/// floats) and labels (n), distorted as aug says, seeded by `seed`.
void copy_examples(const dataset& data, const augmentation& aug, const int32_t* indices, int n, uint64_t seed,
                   float* images, float* labels);

/// Threading: one owner. Keeps a reference to the data set, which must outlive it.
class batcher {
public:
  /// Serves range of data in batches of batch_size, in an order reshuffled every epoch from
  /// (seed, epoch). REQUIRES: range non-empty, batch_size > 0.
  batcher(const dataset& data, index_range range, int batch_size, uint64_t seed);

  /// Augments every batch from now on (seeded by the batcher's seed, epoch and position).
  void set_augmentation(const augmentation& aug) { aug_ = aug; }

  /// Copies the next batch into images (batch_size x the augmented shape) and labels (batch_size).
  batch_view next(float* images, float* labels);

  /// The next batch's example indices (into `indices`) and the seed its augmentation takes,
  /// without copying anything: in-graph replication's global batch, which workers copy in parts.
  batch_view next_indices(std::vector<int32_t>& indices, uint64_t& augment_seed);

  /// Returns the number of completed epochs.
  long epochs_completed() const { return epoch_; }

  /// Returns the index order of the current epoch (for tests).
  const std::vector<int>& order() const { return order_; }

private:
  void reshuffle();

  const dataset& data_;
  index_range range_;
  int batch_size_;
  uint64_t seed_;
  long epoch_ = 0;
  int cursor_ = 0;
  std::vector<int> order_;
  std::vector<int32_t> scratch_; // next()'s indices
  augmentation aug_;
};

} // namespace actorps
