// Tests of compute/row_prefetch: the row copies against plain loops, for row widths below, at
// and between the 16-float blocks they copy in.
#include "compute/row_prefetch.hpp"

#include <boost/test/unit_test.hpp>

#include <cstdint>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(row_prefetch)

namespace {

std::vector<float> counting(size_t n) {
  std::vector<float> out(n);
  for (size_t i = 0; i < n; ++i)
    out[i] = static_cast<float>(i) + 0.5f;
  return out;
}

const size_t widths[] = {1, 7, 15, 16, 17, 32, 33, 48, 50};

// Picks of 100 rows of a 200-row table: more than rows_ahead, repeats and the last row included.
std::vector<uint32_t> picks() {
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < 100; ++j)
    out.push_back((j * 37 + 11) % 200);
  out.back() = 199;
  return out;
}

} // namespace

BOOST_AUTO_TEST_CASE(gather_rows_copies_each_row_from_its_offset) {
  for (size_t cols : widths) {
    const auto table = counting(200 * cols);
    std::vector<size_t> at;
    for (uint32_t r : picks())
      at.push_back(r * cols);
    std::vector<float> out(at.size() * cols + 1, -1.0f);
    gather_rows(table.data(), cols, at.data(), at.size(), out.data());
    for (size_t j = 0; j < at.size(); ++j)
      for (size_t k = 0; k < cols; ++k)
        BOOST_TEST_REQUIRE(out[j * cols + k] == table[at[j] + k], "cols " << cols << " row " << j << " value " << k);
    BOOST_TEST(out.back() == -1.0f); // (nothing written past the rows)
  }
}

BOOST_AUTO_TEST_CASE(copy_rows_from_picks_rows_by_index) {
  for (size_t cols : widths) {
    const auto table = counting(200 * cols);
    const auto rows = picks();
    std::vector<float> out(rows.size() * cols + 1, -1.0f);
    copy_rows_from(table.data(), cols, rows.data(), rows.size(), out.data());
    for (size_t j = 0; j < rows.size(); ++j)
      for (size_t k = 0; k < cols; ++k)
        BOOST_TEST_REQUIRE(out[j * cols + k] == table[rows[j] * cols + k], "cols " << cols << " row " << j);
    BOOST_TEST(out.back() == -1.0f);
  }
}

BOOST_AUTO_TEST_CASE(copy_rows_to_places_rows_by_index_and_leaves_the_others) {
  for (size_t cols : widths) {
    std::vector<uint32_t> rows;
    for (uint32_t j = 0; j < 100; ++j)
      rows.push_back((j * 37 + 11) % 200); // (distinct: 37 and 200 share no factor)
    const auto from = counting(rows.size() * cols);
    std::vector<float> out(200 * cols, -1.0f), expected = out;
    for (size_t j = 0; j < rows.size(); ++j)
      for (size_t k = 0; k < cols; ++k)
        expected[rows[j] * cols + k] = from[j * cols + k];
    copy_rows_to(from.data(), cols, rows.data(), rows.size(), out.data());
    BOOST_TEST(out == expected, "cols " << cols);
  }
}

BOOST_AUTO_TEST_CASE(add_row_adds_exactly_its_row_as_a_plain_loop_does) {
  for (size_t cols : widths) {
    auto rows = counting(3 * cols);
    auto want = rows;
    const auto from = counting(cols + 5);
    for (size_t c = 0; c < cols; ++c)
      want[cols + c] += from[5 + c];
    add_row(from.data() + 5, cols, rows.data() + cols);
    BOOST_TEST(rows == want, "cols " << cols);
  }
}

BOOST_AUTO_TEST_CASE(zero_row_zeroes_exactly_its_row) {
  for (size_t cols : widths) {
    std::vector<float> rows(3 * cols, 1.5f);
    zero_row(rows.data() + cols, cols);
    for (size_t i = 0; i < rows.size(); ++i)
      BOOST_TEST_REQUIRE(rows[i] == (i >= cols && i < 2 * cols ? 0.0f : 1.5f), "cols " << cols << " value " << i);
  }
}

BOOST_AUTO_TEST_SUITE_END()
