// Tests of compute/embedding_ops: a bag's mean and sum in slot order, an example without ids,
// ids taken mod the table's rows; backward zeroes the rows the ids pick, sums a repeated id's
// shares and leaves every other row as it was.
#include "compute/embedding_ops.hpp"

#include "compute/token_ids.hpp"

#include <boost/test/unit_test.hpp>

#include <vector>

using namespace actorps;

namespace {

// 3 examples of 3 slots over a table of 4 rows x 2: [1, 2], [3, 3 + 4 (row 3 again)], [] (no ids)
std::vector<float> slots() {
  std::vector<float> s(9, 0.0f);
  s[0] = encode_token(1);
  s[1] = encode_token(2);
  s[3] = encode_token(3);
  s[4] = encode_token(7);
  return s;
}

const std::vector<float> table{0, 1, 10, 11, 20, 21, 30, 31};

} // namespace

BOOST_AUTO_TEST_SUITE(embedding_ops)

BOOST_AUTO_TEST_CASE(a_bag_is_the_mean_or_sum_of_its_rows) {
  auto ids = slots();
  std::vector<float> out(6, -1.0f);
  embedding_bag_host({3, 3, 4, 2, true}, ids.data(), table.data(), out.data());
  BOOST_TEST((out == std::vector<float>{15, 16, 30, 31, 0, 0}));
  embedding_bag_host({3, 3, 4, 2, false}, ids.data(), table.data(), out.data());
  BOOST_TEST((out == std::vector<float>{30, 32, 60, 62, 0, 0}));
}

// A batch whose ids outnumber the rows the sums ask for ahead (compute/row_prefetch), examples
// filled to different lengths, some without ids, ids past the table's rows: each bag is the sum of
// its rows in slot order, as a plain loop over them gives.
BOOST_AUTO_TEST_CASE(a_long_batchs_bags_are_their_rows_sums) {
  const int examples = 20, tokens = 12, table_rows = 64, dim = 3;
  std::vector<float> big(static_cast<size_t>(table_rows * dim));
  for (size_t i = 0; i < big.size(); ++i)
    big[i] = static_cast<float>(i % 101) * 0.25f;
  std::vector<float> ids(static_cast<size_t>(examples * tokens), 0.0f), expected(static_cast<size_t>(examples * dim), 0.0f);
  for (int r = 0; r < examples; ++r) {
    const int filled = (r * 7) % (tokens + 1); // (0 ... 12 ids: examples 0 and 13 have none)
    for (int t = 0; t < filled; ++t) {
      const uint32_t id = static_cast<uint32_t>(r * 31 + t * 17) % 200; // (past 64: taken mod the rows)
      ids[static_cast<size_t>(r * tokens + t)] = encode_token(id);
      for (int d = 0; d < dim; ++d)
        expected[static_cast<size_t>(r * dim + d)] += big[(id % table_rows) * dim + static_cast<size_t>(d)];
    }
  }
  std::vector<float> out(expected.size(), -1.0f);
  embedding_bag_host({examples, tokens, table_rows, dim, false}, ids.data(), big.data(), out.data());
  BOOST_TEST(out == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(backward_writes_only_the_picked_rows) {
  auto ids = slots();
  std::vector<float> dtable(8, 99.0f); // (stale values of an earlier batch)
  const std::vector<float> dout{1, 2, 4, 8, 100, 100};
  embedding_bag_backward_host({3, 3, 4, 2, true}, ids.data(), dout.data(), dtable.data());
  // row 0: not picked, untouched; rows 1, 2: half of example 0's; row 3: example 1's twice, halved
  BOOST_TEST((dtable == std::vector<float>{99, 99, 0.5f, 1, 0.5f, 1, 4, 8}));
  std::vector<float> sum(8, 99.0f);
  embedding_bag_backward_host({3, 3, 4, 2, false}, ids.data(), dout.data(), sum.data());
  BOOST_TEST((sum == std::vector<float>{99, 99, 1, 2, 1, 2, 8, 16}));
}

BOOST_AUTO_TEST_SUITE_END()
