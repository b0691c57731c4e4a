// Tests of data/batch_pipeline: every thread and prefetch setting hands out the batcher's
// batches bit for bit (augmentation included), across epochs; it stops cleanly mid-stream; a
// finisher ends every batch on the thread that prepared it, one finisher per thread, and what it
// listed comes with its batch.
#include "data/batch_pipeline.hpp"

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <random>
#include <set>
#include <thread>

using namespace actorps;

namespace {

// n random images of `shape` with labels below `classes`, seeded.
dataset random_images(int n, image_shape shape, int classes, uint32_t seed) {
  std::mt19937 gen{seed};
  dataset d;
  d.rows = n;
  d.shape = shape;
  d.cols = static_cast<int>(shape.size());
  for (int i = 0; i < n; ++i) {
    d.labels.push_back(static_cast<float>(gen() % static_cast<uint32_t>(classes)));
    for (int k = 0; k < d.cols; ++k)
      d.images.push_back(static_cast<float>(gen() % 256) / 255.0f);
  }
  d.max_label = classes - 1;
  return d;
}

} // namespace

BOOST_AUTO_TEST_SUITE(batch_pipeline)

BOOST_AUTO_TEST_CASE(same_batches_as_the_batcher_whatever_the_threads) {
  dataset d = random_images(103, {6, 6, 3}, 5, 7);
  augmentation aug{true, 2, true};
  const int batch = 10;
  batcher reference{d, partition_range(d.rows, 1, 2), batch, 99};
  reference.set_augmentation(aug);
  std::vector<std::vector<float>> want_images, want_labels;
  std::vector<bool> want_ends;
  for (int i = 0; i < 30; ++i) { // (6 batches an epoch of 52 examples, the last of 2: 5 epochs)
    std::vector<float> images(batch * d.cols), labels(batch);
    auto v = reference.next(images.data(), labels.data());
    images.resize(static_cast<size_t>(v.rows) * d.cols);
    labels.resize(static_cast<size_t>(v.rows));
    want_images.push_back(images);
    want_labels.push_back(labels);
    want_ends.push_back(v.ends_epoch);
  }
  for (int threads : {1, 2, 4})
    for (int prefetch : {0, 1, 3, 8}) {
      actorps::batch_pipeline p{d, partition_range(d.rows, 1, 2), batch, 99, aug, threads, prefetch};
      for (int i = 0; i < 30; ++i) {
        std::vector<float> images(batch * d.cols), labels(batch);
        auto v = p.next(images.data(), labels.data());
        images.resize(static_cast<size_t>(v.rows) * d.cols);
        labels.resize(static_cast<size_t>(v.rows));
        BOOST_TEST_INFO("threads " << threads << ", prefetch " << prefetch << ", batch " << i);
        BOOST_TEST((images == want_images[static_cast<size_t>(i)]));
        BOOST_TEST((labels == want_labels[static_cast<size_t>(i)]));
        BOOST_TEST(v.ends_epoch == want_ends[static_cast<size_t>(i)]);
      }
      BOOST_TEST(p.epochs_completed() == 5);
      BOOST_TEST(p.take_waited_seconds() >= 0.0);
    }
}

// The finisher negates each image and lists the batch's first label and its rows; every batch
// handed out is finished once, with its own list, in order, whatever the threads.
BOOST_AUTO_TEST_CASE(a_finisher_ends_each_batch_on_its_thread_and_its_list_comes_with_it) {
  dataset d = random_images(64, {2, 2, 1}, 50, 3);
  const int batch = 8;
  for (int threads : {1, 3})
    for (int prefetch : {0, 2, 5}) {
      std::mutex mtx;
      std::set<std::thread::id> made_on; // (each finisher's thread: one finisher per thread)
      std::atomic<int> finishers{0}, foreign{0}, unclear{0}; // (counted: Boost.Test checks on this thread alone)
      auto make = [&] {
        ++finishers;
        auto mine = std::make_shared<std::thread::id>();
        return batch_finisher{[&, mine](float* images, int rows, batch_extras& out) {
          if (*mine == std::thread::id{})
            *mine = std::this_thread::get_id();
          foreign += *mine != std::this_thread::get_id() ? 1 : 0;
          {
            std::lock_guard<std::mutex> guard{mtx};
            made_on.insert(*mine);
          }
          unclear += out.listed.empty() && out.positions.empty() ? 0 : 1;
          for (int i = 0; i < rows * d.cols; ++i)
            images[i] = -images[i];
          out.listed.push_back(static_cast<uint32_t>(rows));
          out.positions.push_back(images[0]);
        }};
      };
      batcher reference{d, partition_range(d.rows, 0, 1), batch, 4};
      actorps::batch_pipeline p{d, partition_range(d.rows, 0, 1), batch, 4, augmentation{}, threads, prefetch, make};
      batch_extras extras{{99}, {99.0f}}; // (replaced by each batch's)
      for (int i = 0; i < 24; ++i) {
        std::vector<float> images(batch * d.cols), labels(batch), want(batch * d.cols), want_labels(batch);
        auto v = p.next(images.data(), labels.data(), &extras);
        reference.next(want.data(), want_labels.data());
        for (auto& x : want)
          x = -x;
        BOOST_TEST_INFO("threads " << threads << ", prefetch " << prefetch << ", batch " << i);
        BOOST_TEST((images == want));
        BOOST_TEST((labels == want_labels));
        BOOST_TEST((extras.listed == std::vector<uint32_t>{static_cast<uint32_t>(v.rows)}));
        BOOST_TEST((extras.positions == std::vector<float>{want[0]}));
      }
      BOOST_TEST(finishers == (prefetch == 0 ? 1 : threads));
      BOOST_TEST(foreign == 0);
      BOOST_TEST(unclear == 0);
      BOOST_TEST(made_on.size() <= static_cast<size_t>(prefetch == 0 ? 1 : threads));
      if (prefetch == 0)
        BOOST_TEST((made_on == std::set<std::thread::id>{std::this_thread::get_id()}));
    }
}

BOOST_AUTO_TEST_CASE(stops_with_batches_prepared_and_none_taken) {
  dataset d = random_images(40, {4, 4, 1}, 3, 1);
  for (int i = 0; i < 20; ++i) {
    actorps::batch_pipeline p{d, partition_range(d.rows, 0, 1), 8, 5, augmentation{}, 3, 4};
    std::vector<float> images(8 * d.cols), labels(8);
    if (i % 2)
      p.next(images.data(), labels.data());
  } // (each destructor joins its threads: a hang fails the test by its timeout)
}

BOOST_AUTO_TEST_SUITE_END()
