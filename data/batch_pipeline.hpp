// The input pipeline (data.threads, data.prefetch-batches): a batcher's batches -- the same
// examples, order and augmentation seeds -- copied and augmented by `threads` threads up to
// `prefetch` batches ahead of the trainer, in a bounded ring, and handed out in order. TF1's
// queue runners filled by background threads, without their nondeterminism: the batch a step
// gets does not depend on the threads' timing. prefetch 0 prepares each batch on the caller's
// thread (the batcher alone). The time next() waits for its batch is counted: for a batch not
// ready yet, or (prefetch 0) while the batch is prepared. A finisher (optional) ends each batch's
// preparation on the thread that copied it: it may rewrite the batch's images in place and list
// what the batch's user needs beside them (a worker's embedding ids renumbered to its local rows,
// and the table rows they stand for: control/row_exchange; one process's ids left as they are,
// the rows they touch and each slot's position among them: model/touched_rows), off the
// trainer's thread.
#pragma once

#include "data/batcher.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace actorps {

/// What a finisher makes of a batch beside its images: the table rows its ids stand for, and
/// (where the ids stay as they are) each id slot's position among them.
struct batch_extras {
  std::vector<uint32_t> listed;
  std::vector<float> positions;

  /// Empties both, keeping their buffers.
  void clear() {
    listed.clear();
    positions.clear();
  }
};

/// finish(images, rows, out): ends a batch of `rows` examples (see above); out comes empty (its
/// buffers those of an earlier batch, to reuse).
using batch_finisher = std::function<void(float* images, int rows, batch_extras& out)>;

class batch_pipeline {
public:
  /// REQUIRES: as batcher's; threads >= 1, prefetch >= 0. Keeps a reference to data.
  /// make_finisher (optional) is called once per thread that prepares batches (the caller's with
  /// prefetch 0), each finisher used by that thread alone.
  batch_pipeline(const dataset& data, index_range range, int batch_size, uint64_t seed, const augmentation& aug,
                 int threads, int prefetch, const std::function<batch_finisher()>& make_finisher = {});
  ~batch_pipeline();
  batch_pipeline(const batch_pipeline&) = delete;
  batch_pipeline& operator=(const batch_pipeline&) = delete;

  /// Copies the next batch into images (batch_size x cols) and labels (batch_size), as
  /// batcher::next would (then finished, with a finisher), and what its finisher made into
  /// *extras (when given; swapped: its buffers go back to the pipeline).
  batch_view next(float* images, float* labels, batch_extras* extras = nullptr);

  /// Seconds next() has waited for batches not yet prepared (prefetch 0: preparing them), and
  /// takes them (a new count starts).
  double take_waited_seconds();

  /// The completed epochs of the batches handed out.
  long epochs_completed() const { return epochs_; }

private:
  struct slot {
    enum class phase { free, filling, ready };
    phase at = phase::free;
    uint64_t sequence = 0;
    batch_view view;
    std::vector<float> images;
    std::vector<float> labels;
    batch_extras extras; // (by the finisher)
  };
  void work(batch_finisher finish);

  const dataset& data_;
  batcher order_;
  augmentation aug_;
  const int batch_size_;
  const size_t cols_; ///< floats per example handed out (after a crop)
  batch_finisher inline_finish_; // prefetch 0: the caller's thread's
  std::vector<slot> ring_;
  std::vector<std::thread> threads_;
  std::mutex mtx_;
  std::condition_variable changed_;
  uint64_t planned_ = 0;  // batches taken from the order
  uint64_t consumed_ = 0; // batches handed out
  bool stopping_ = false;
  long epochs_ = 0;
  double waited_ = 0.0;
};

} // namespace actorps
