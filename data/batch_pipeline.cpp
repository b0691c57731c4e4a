// Batches taken from the order under the lock (so their seeds and order are the batcher's),
// copied and augmented outside it, handed out by sequence number.
#include "data/batch_pipeline.hpp"

#include <algorithm>
#include <cstring>
#include <utility>

namespace actorps {

batch_pipeline::batch_pipeline(const dataset& data, index_range range, int batch_size, uint64_t seed,
                               const augmentation& aug, int threads, int prefetch,
                               const std::function<batch_finisher()>& make_finisher)
  : data_(data), order_(data, range, batch_size, seed), aug_(aug), batch_size_(batch_size),
    cols_(augmented_shape(aug, data.shape).size()) {
  order_.set_augmentation(aug);
  if (prefetch <= 0) {
    if (make_finisher)
      inline_finish_ = make_finisher();
    return;
  }
  ring_.resize(static_cast<size_t>(prefetch));
  for (auto& s : ring_) {
    s.images.resize(static_cast<size_t>(batch_size) * cols_);
    s.labels.resize(static_cast<size_t>(batch_size));
  }
  for (int t = 0; t < std::max(1, threads); ++t)
    threads_.emplace_back([this, finish = make_finisher ? make_finisher() : batch_finisher{}] { work(finish); });
}

batch_pipeline::~batch_pipeline() {
  {
    std::lock_guard<std::mutex> guard{mtx_};
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& t : threads_)
    t.join();
}

void batch_pipeline::work(batch_finisher finish) {
  std::vector<int32_t> indices;
  std::unique_lock<std::mutex> lock{mtx_};
  for (;;) {
    changed_.wait(lock, [this] { return stopping_ || planned_ < consumed_ + ring_.size(); });
    if (stopping_)
      return;
    slot& s = ring_[planned_ % ring_.size()];
    s.sequence = planned_++;
    s.at = slot::phase::filling;
    uint64_t augment_seed = 0;
    s.view = order_.next_indices(indices, augment_seed);
    lock.unlock();
    copy_examples(data_, aug_, indices.data(), s.view.rows, augment_seed, s.images.data(), s.labels.data());
    s.extras.clear();
    if (finish)
      finish(s.images.data(), s.view.rows, s.extras);
    lock.lock();
    s.at = slot::phase::ready;
    changed_.notify_all();
  }
}

batch_view batch_pipeline::next(float* images, float* labels, batch_extras* extras) {
  if (ring_.empty()) { // (inline: the trainer waits while its batch is prepared)
    const auto t0 = std::chrono::steady_clock::now();
    auto view = order_.next(images, labels);
    batch_extras mine;
    auto& out = extras ? *extras : mine;
    out.clear();
    if (inline_finish_)
      inline_finish_(images, view.rows, out);
    epochs_ = order_.epochs_completed();
    std::lock_guard<std::mutex> guard{mtx_};
    waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return view;
  }
  std::unique_lock<std::mutex> lock{mtx_};
  slot& s = ring_[consumed_ % ring_.size()];
  auto ready = [&] { return s.at == slot::phase::ready && s.sequence == consumed_; };
  if (!ready()) {
    const auto t0 = std::chrono::steady_clock::now();
    changed_.wait(lock, ready);
    waited_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
  lock.unlock(); // (the slot is ours until consumed_ moves on)
  std::memcpy(images, s.images.data(), static_cast<size_t>(s.view.rows) * cols_ * sizeof(float));
  std::memcpy(labels, s.labels.data(), static_cast<size_t>(s.view.rows) * sizeof(float));
  if (extras)
    std::swap(*extras, s.extras); // (the slot's next batch clears what it gets back)
  const batch_view view = s.view;
  lock.lock();
  s.at = slot::phase::free;
  ++consumed_;
  if (view.ends_epoch)
    ++epochs_;
  changed_.notify_all();
  return view;
}

double batch_pipeline::take_waited_seconds() {
  std::lock_guard<std::mutex> guard{mtx_};
  double out = waited_;
  waited_ = 0.0;
  return out;
}

} // namespace actorps
