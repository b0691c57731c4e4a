// Tests of data/batcher: partitions are disjoint and covering; epochs are seeded reshuffles.
#include "data/batcher.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <numeric>

using namespace actorps;

namespace {

actorps::dataset numbered(int n) {
  actorps::dataset d;
  d.rows = n;
  d.cols = 1;
  for (int i = 0; i < n; ++i) {
    d.images.push_back(static_cast<float>(i));
    d.labels.push_back(static_cast<float>(i % 10));
  }
  return d;
}

// The example indices (pixel values) served over one epoch.
std::vector<int> one_epoch(batcher& b, int batch) {
  std::vector<int> seen;
  std::vector<float> px(batch), lab(batch);
  for (;;) {
    auto view = b.next(px.data(), lab.data());
    for (int r = 0; r < view.rows; ++r)
      seen.push_back(static_cast<int>(px[r]));
    if (view.ends_epoch)
      return seen;
  }
}

} // namespace

BOOST_AUTO_TEST_SUITE(batcher)

BOOST_AUTO_TEST_CASE(partitions_are_disjoint_and_cover_everything) {
  for (int n : {1, 7, 100, 55000})
    for (int parts : {1, 2, 3, 4, 7}) {
      if (parts > n)
        continue;
      int expected_begin = 0;
      for (int p = 0; p < parts; ++p) {
        auto r = partition_range(n, p, parts);
        BOOST_TEST(r.begin == expected_begin, "n=" << n << " parts=" << parts << " p=" << p);
        BOOST_TEST(r.size() >= n / parts);
        BOOST_TEST(r.size() <= n / parts + 1);
        expected_begin = r.end;
      }
      BOOST_TEST(expected_begin == n);
    }
}

BOOST_AUTO_TEST_CASE(each_epoch_serves_its_partition_exactly_once) {
  auto d = numbered(103);
  auto range = partition_range(103, 1, 3);
  actorps::batcher b{d, range, 10, 5};
  for (int epoch = 0; epoch < 3; ++epoch) {
    auto seen = one_epoch(b, 10);
    std::sort(seen.begin(), seen.end());
    std::vector<int> want(range.size());
    std::iota(want.begin(), want.end(), range.begin);
    BOOST_TEST(seen == want);
    BOOST_TEST(b.epochs_completed() == epoch + 1);
  }
}

BOOST_AUTO_TEST_CASE(reshuffles_each_epoch_from_the_seed) {
  auto d = numbered(50);
  actorps::batcher a{d, {0, 50}, 8, 11}, same{d, {0, 50}, 8, 11}, other{d, {0, 50}, 8, 12};
  auto a1 = one_epoch(a, 8), a2 = one_epoch(a, 8);
  BOOST_TEST(a1 == one_epoch(same, 8));
  BOOST_TEST(a2 == one_epoch(same, 8));
  BOOST_TEST(a1 != a2);
  BOOST_TEST(a1 != one_epoch(other, 8));
}

BOOST_AUTO_TEST_CASE(last_batch_of_an_epoch_may_be_short_and_labels_follow_images) {
  auto d = numbered(25);
  actorps::batcher b{d, {0, 25}, 10, 1};
  std::vector<float> px(10), lab(10);
  BOOST_TEST(b.next(px.data(), lab.data()).rows == 10);
  BOOST_TEST(b.next(px.data(), lab.data()).rows == 10);
  auto last = b.next(px.data(), lab.data());
  BOOST_TEST(last.rows == 5);
  BOOST_TEST(last.ends_epoch);
  for (int r = 0; r < last.rows; ++r)
    BOOST_TEST(lab[r] == static_cast<float>(static_cast<int>(px[r]) % 10));
}

// In-graph replication: the chief takes the indices, the workers copy their parts of them;
// together they give exactly the batches next() copies.
BOOST_AUTO_TEST_CASE(indices_and_copies_give_the_same_batches_as_next) {
  auto d = numbered(23);
  actorps::batcher copies{d, {0, 23}, 5, 9};
  actorps::batcher indices{d, {0, 23}, 5, 9};
  std::vector<float> px(5), lab(5), px2(5), lab2(5);
  std::vector<int32_t> idx;
  for (int i = 0; i < 12; ++i) { // over two epochs and the short last batches
    auto a = copies.next(px.data(), lab.data());
    uint64_t seed = 0;
    auto b = indices.next_indices(idx, seed);
    BOOST_REQUIRE(a.rows == b.rows);
    BOOST_TEST(a.ends_epoch == b.ends_epoch);
    BOOST_REQUIRE(idx.size() == static_cast<size_t>(b.rows));
    copy_examples(d, {}, idx.data(), b.rows, seed, px2.data(), lab2.data());
    for (int r = 0; r < a.rows; ++r) {
      BOOST_TEST(px[r] == px2[r]);
      BOOST_TEST(lab[r] == lab2[r]);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
