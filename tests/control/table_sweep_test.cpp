// Tests of control/table_sweep: a table read whole, chunk by chunk, from the parts that hold its
// rows, under "div" and "mod", gives every row in table order; a slice it did not ask for is refused.
#include "control/table_sweep.hpp"

#include "common/errc.hpp"
#include "control/placement.hpp"

#include <boost/test/unit_test.hpp>

#include <map>

using namespace actorps;

namespace {

// A 10 x 2 table and a bias on 3 shards; table row r holds {10 r, 10 r + 1}.
placement_plan plan_of(const std::string& partition) {
  variable_spec table{"embedding0/weights", 10, 2};
  table.table = true;
  return make_placement({table, {"logits/bias", 1, 2}}, 3, placement_strategy::round_robin, {}, partition);
}

// What shard s answers to a read of a range of its part's stored rows.
variable_slice answer(const placement_plan& plan, const slice_ref& r) {
  float_vector values(r.count);
  for (uint32_t j = 0; j < r.count / 2; ++j) {
    uint32_t row = table_row(plan, 0, r.offset / 2 + j);
    values[2 * j] = 10.0f * row;
    values[2 * j + 1] = 10.0f * row + 1;
  }
  return {r.variable, r.offset, {std::move(values)}};
}

// The whole table read through the sweep, in chunks of at most 3 rows.
std::vector<float> swept(const placement_plan& plan, std::map<uint32_t, int>* reads_per_shard = nullptr) {
  table_sweep sweep{plan, 0, 6};
  std::vector<float> whole;
  for (size_t i = 0; i < sweep.chunks(); ++i) {
    std::vector<float> chunk(sweep.rows_of(i) * sweep.cols(), -1.0f);
    for (auto& [shard, r] : sweep.reads(i)) {
      if (reads_per_shard)
        ++(*reads_per_shard)[shard];
      BOOST_TEST(!sweep.place(i, answer(plan, r), chunk.data()));
    }
    whole.insert(whole.end(), chunk.begin(), chunk.end());
  }
  return whole;
}

std::vector<float> expected_table() {
  std::vector<float> out;
  for (int r = 0; r < 10; ++r) {
    out.push_back(10.0f * r);
    out.push_back(10.0f * r + 1);
  }
  return out;
}

} // namespace

BOOST_AUTO_TEST_SUITE(table_sweep)

BOOST_AUTO_TEST_CASE(a_table_split_by_div_is_read_in_row_order) {
  auto plan = plan_of("div");
  actorps::table_sweep sweep{plan, 0, 6};
  BOOST_TEST(sweep.chunks() == 4u); // 3 + 3 + 3 + 1 rows
  BOOST_TEST(sweep.rows_of(3) == 1u);
  std::map<uint32_t, int> reads;
  BOOST_TEST(swept(plan, &reads) == expected_table());
  BOOST_TEST(reads.size() == 3u); // every part is read
}

BOOST_AUTO_TEST_CASE(a_table_split_by_mod_is_read_in_row_order) {
  auto plan = plan_of("mod");
  actorps::table_sweep sweep{plan, 0, 6};
  auto first = sweep.reads(0); // rows 0, 1, 2: one row of each part
  BOOST_REQUIRE_EQUAL(first.size(), 3u);
  for (auto& [shard, r] : first)
    BOOST_TEST(r.count == 2u);
  BOOST_TEST(swept(plan) == expected_table());
}

BOOST_AUTO_TEST_CASE(a_chunk_larger_than_the_table_is_the_table) {
  auto plan = plan_of("mod");
  actorps::table_sweep sweep{plan, 0, 1000};
  BOOST_TEST(sweep.chunks() == 1u);
  BOOST_TEST(sweep.rows_of(0) == 10u);
}

BOOST_AUTO_TEST_CASE(a_slice_that_was_not_read_is_refused_and_leaves_the_chunk_alone) {
  auto plan = plan_of("div");
  actorps::table_sweep sweep{plan, 0, 6};
  std::vector<float> chunk(6, -1.0f);
  auto read = sweep.reads(0).front().second;
  auto other_chunk = answer(plan, sweep.reads(1).front().second);
  BOOST_TEST((sweep.place(0, other_chunk, chunk.data()) == errc::protocol_error));
  auto short_one = answer(plan, read);
  short_one.data.values.resize(2);
  BOOST_TEST((sweep.place(0, short_one, chunk.data()) == errc::protocol_error));
  auto as_rows = answer(plan, read);
  as_rows.rows = row_ids{{0, 1, 2}};
  BOOST_TEST((sweep.place(0, as_rows, chunk.data()) == errc::protocol_error));
  BOOST_TEST(chunk == std::vector<float>(6, -1.0f));
}

BOOST_AUTO_TEST_SUITE_END()
