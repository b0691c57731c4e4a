// Tests of control/snapshot_overlay: a read gives the values as they were at begin() whatever
// was written since, in blocks and across their edges (a short last block too); only the blocks
// written are kept, each once; nothing is kept without a snapshot, and begin() and end()
// release what was kept.
#include "control/snapshot_overlay.hpp"

#include <boost/test/unit_test.hpp>

#include <numeric>
#include <vector>

using namespace actorps;

namespace {

// Writes v to [from, from + n) of xs, as the store does after telling the overlay.
void write(snapshot_overlay& o, size_t p, size_t a, std::vector<float>& xs, size_t from, size_t n, float v) {
  o.before_write(p, a, xs.data(), from, n);
  std::fill(xs.begin() + static_cast<std::ptrdiff_t>(from), xs.begin() + static_cast<std::ptrdiff_t>(from + n), v);
}

std::vector<float> read(const snapshot_overlay& o, size_t p, size_t a, const std::vector<float>& xs, size_t from, size_t n) {
  std::vector<float> out(n, -1.0f);
  o.read(p, a, xs.data(), from, n, out.data());
  return out;
}

std::vector<float> iota(size_t n, float first) {
  std::vector<float> xs(n);
  std::iota(xs.begin(), xs.end(), first);
  return xs;
}

} // namespace

BOOST_AUTO_TEST_SUITE(snapshot_overlay)

BOOST_AUTO_TEST_CASE(a_read_gives_the_values_at_the_hold_whatever_was_written_since) {
  // part 0: values of 10 floats in blocks of 4 (the last of 2) and a slot; part 1: rows of 3
  auto v0 = iota(10, 0.0f), s0 = iota(10, 100.0f), v1 = iota(9, 200.0f);
  const auto at_hold0 = v0, at_hold_s0 = s0, at_hold1 = v1;
  actorps::snapshot_overlay o;
  o.begin(7, {{{{10, 4}, {10, 4}, {0, 4}}}, {{{9, 3}, {0, 3}, {0, 3}}}});
  BOOST_TEST(o.holding(7));
  BOOST_TEST(!o.holding(8));
  write(o, 0, 0, v0, 3, 2, -5.0f); // blocks 0 and 1 (floats 0-7)
  write(o, 0, 0, v0, 9, 1, -6.0f); // the short last block
  write(o, 0, 0, v0, 3, 2, -7.0f); // written again: kept once
  write(o, 0, 1, s0, 0, 10, -8.0f);
  write(o, 1, 0, v1, 6, 3, -9.0f); // a row
  BOOST_TEST(o.kept_floats() == 10u + 10u + 3u);
  BOOST_TEST(read(o, 0, 0, v0, 0, 10) == at_hold0, boost::test_tools::per_element());
  BOOST_TEST(read(o, 0, 0, v0, 2, 7) == std::vector<float>(at_hold0.begin() + 2, at_hold0.begin() + 9),
             boost::test_tools::per_element());
  BOOST_TEST(read(o, 0, 1, s0, 5, 5) == std::vector<float>(at_hold_s0.begin() + 5, at_hold_s0.end()),
             boost::test_tools::per_element());
  BOOST_TEST(read(o, 1, 0, v1, 0, 9) == at_hold1, boost::test_tools::per_element());
  BOOST_TEST(v1[6] == -9.0f); // (the store has the new values)
}

BOOST_AUTO_TEST_CASE(only_written_blocks_are_kept_and_nothing_without_a_snapshot) {
  auto v = iota(1000, 0.0f);
  actorps::snapshot_overlay o;
  write(o, 0, 0, v, 0, 1000, 1.0f); // no snapshot: nothing kept
  BOOST_TEST(o.kept_floats() == 0u);
  const auto at_hold = v;
  o.begin(1, {{{{1000, 10}, {0, 10}, {0, 10}}}});
  write(o, 0, 0, v, 15, 1, 2.0f); // one block of 10
  write(o, 0, 0, v, 990, 10, 3.0f);
  BOOST_TEST(o.kept_floats() == 20u);
  BOOST_TEST(read(o, 0, 0, v, 0, 1000) == at_hold, boost::test_tools::per_element());
  o.begin(2, {{{{1000, 10}, {0, 10}, {0, 10}}}}); // a new hold releases the old one's blocks
  BOOST_TEST(!o.holding(1));
  BOOST_TEST(o.kept_floats() == 0u);
  BOOST_TEST(read(o, 0, 0, v, 10, 10) == std::vector<float>(v.begin() + 10, v.begin() + 20), boost::test_tools::per_element());
  o.end();
  BOOST_TEST(!o.holding());
  write(o, 0, 0, v, 0, 10, 4.0f);
  BOOST_TEST(o.kept_floats() == 0u);
}

BOOST_AUTO_TEST_SUITE_END()
