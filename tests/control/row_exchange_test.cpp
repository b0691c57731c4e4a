// Tests of control/row_exchange: a batch's ids renumbered to local rows in the order they first
// appear, the pulls of each shard's rows, their values placed by local row, and the gradients
// pushed back to the parts that hold their rows; a batch renumbered ahead (batch_renumbering, on
// a pipeline thread) and adopted gives the exchange renumber() gives.
#include "control/row_exchange.hpp"

#include "compute/token_ids.hpp"
#include "control/placement.hpp"

#include "tests/support/token_slots.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <string>

using namespace actorps;
using actorps::test::slots_of;

namespace {

// A 16 x 2 table (ids mod 16) and a bias, on 2 shards: rows [0, 8) on shard 0, [8, 16) on shard 1.
placement_plan plan_of_table() {
  variable_spec table{"embedding0/weights", 16, 2};
  table.table = true;
  return make_placement({table, {"logits/bias", 1, 2}}, 2, placement_strategy::round_robin);
}

} // namespace

BOOST_AUTO_TEST_SUITE(row_exchange)

BOOST_AUTO_TEST_CASE(a_batch_pulls_its_distinct_rows_from_the_parts_that_hold_them) {
  auto plan = plan_of_table();
  actorps::row_exchange rows{plan, 0, 8};
  // two examples of 4 slots: ids 25 (row 9), 3, 9 again, 3 again; 4, 41 (row 9), empty
  auto slots = slots_of({25, 3, 9, 3, 4, 41, -1, -1});
  rows.renumber(slots.data(), 2, 4);
  BOOST_TEST(rows.distinct() == 3u);
  BOOST_TEST((slots == slots_of({0, 1, 0, 1, 2, 0, -1, -1}))); // local rows, first seen first
  BOOST_TEST(rows.shards() == std::vector<uint32_t>({0, 1}));
  auto to0 = rows.pulls(0), to1 = rows.pulls(1);
  BOOST_REQUIRE_EQUAL(to0.size(), 1u);
  BOOST_TEST(to0[0].rows.ids == std::vector<uint32_t>({3, 4}));
  BOOST_TEST(to0[0].offset == 0u);
  BOOST_TEST(to0[0].count == 4u);
  BOOST_REQUIRE_EQUAL(to1.size(), 1u);
  BOOST_TEST(to1[0].rows.ids == std::vector<uint32_t>({9}));
  BOOST_TEST(to1[0].offset == 16u);
  // the replies' rows go to their local rows
  std::vector<float> local(3 * 2, -1.0f);
  BOOST_REQUIRE(!rows.place({0, 0, {{3.0f, 3.5f, 4.0f, 4.5f}}, false, row_ids{{3, 4}}}, local.data()));
  BOOST_REQUIRE(!rows.place({0, 16, {{9.0f, 9.5f}}, false, row_ids{{9}}}, local.data()));
  BOOST_TEST(local == std::vector<float>({9.0f, 9.5f, 3.0f, 3.5f, 4.0f, 4.5f}));
  // a reply with rows the batch did not ask for is refused
  BOOST_TEST(static_cast<bool>(rows.place({0, 16, {{1.0f, 1.0f}}, false, row_ids{{10}}}, local.data())));
  BOOST_TEST(static_cast<bool>(rows.place({0, 0, {{1.0f, 1.0f}}, false, row_ids{{3}}}, local.data())));
  // runs of at most 2 values (one row of 2) for a reader of many rows (the chief's evaluation),
  // each placed as a run of its part
  auto runs = rows.pulls(0, 2);
  BOOST_REQUIRE_EQUAL(runs.size(), 2u);
  BOOST_TEST(runs[0].rows.ids == std::vector<uint32_t>({3}));
  BOOST_TEST(runs[1].rows.ids == std::vector<uint32_t>({4}));
  BOOST_TEST((runs[0].offset == 0u && runs[1].offset == 0u && runs[0].count == 2u && runs[1].count == 2u));
  BOOST_TEST(rows.pulls(0, 4).size() == 1u);
  BOOST_REQUIRE(!rows.place({0, 0, {{7.0f, 7.5f}}, false, row_ids{{4}}}, local.data(), 2));
  BOOST_REQUIRE(!rows.place({0, 0, {{6.0f, 6.5f}}, false, row_ids{{3}}}, local.data(), 2));
  BOOST_TEST(local == std::vector<float>({9.0f, 9.5f, 6.0f, 6.5f, 7.0f, 7.5f}));
  // a run that pulls() did not make (both rows where runs hold one) is refused
  BOOST_TEST(static_cast<bool>(rows.place({0, 0, {{1.0f, 1.0f, 2.0f, 2.0f}}, false, row_ids{{3, 4}}}, local.data(), 2)));
}

BOOST_AUTO_TEST_CASE(a_batch_renumbered_ahead_and_adopted_is_the_batch_renumbered_here) {
  auto plan = plan_of_table();
  actorps::row_exchange here{plan, 0, 8}, ahead{plan, 0, 8};
  actorps::batch_renumbering renumbering{16, 8};
  for (auto ids : {std::vector<int>{25, 3, 9, 3, 4, 41, -1, -1}, std::vector<int>{7, 7, 15, 0, 8, -1, -1, -1}}) {
    auto slots = slots_of(ids), early = slots_of(ids);
    here.renumber(slots.data(), 2, 4);
    std::vector<uint32_t> distinct{99}; // (replaced)
    renumbering.renumber(early.data(), 2, 4, distinct);
    ahead.adopt(distinct);
    BOOST_TEST(early == slots, boost::test_tools::per_element());
    BOOST_TEST(distinct == here.table_rows(), boost::test_tools::per_element());
    BOOST_TEST(ahead.distinct() == here.distinct());
    BOOST_TEST(ahead.shards() == here.shards());
    for (uint32_t s : {0u, 1u}) {
      auto a = ahead.pulls(s), b = here.pulls(s);
      BOOST_REQUIRE_EQUAL(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i)
        BOOST_TEST((a[i].rows.ids == b[i].rows.ids && a[i].offset == b[i].offset && a[i].count == b[i].count));
    }
  }
}

BOOST_AUTO_TEST_CASE(gradients_go_back_to_the_parts_of_their_rows) {
  auto plan = plan_of_table();
  actorps::row_exchange rows{plan, 0, 8};
  auto slots = slots_of({12, 2, 12, -1});
  rows.renumber(slots.data(), 1, 4);
  // the network's gradient lists local rows 1, 0 (in its own order)
  const std::vector<float> grad{1.0f, 2.0f, 3.0f, 4.0f};
  auto to0 = rows.gradients(0, {1, 0}, grad.data());
  auto to1 = rows.gradients(1, {1, 0}, grad.data());
  BOOST_REQUIRE(to0 && to1);
  BOOST_REQUIRE_EQUAL(to0->size(), 1u);
  BOOST_TEST((*to0)[0].rows.ids == std::vector<uint32_t>({2}));
  BOOST_TEST(((*to0)[0].data == std::vector<float>({1.0f, 2.0f})));
  BOOST_REQUIRE_EQUAL(to1->size(), 1u);
  BOOST_TEST((*to1)[0].rows.ids == std::vector<uint32_t>({12}));
  BOOST_TEST((*to1)[0].offset == 16u);
  BOOST_TEST(((*to1)[0].data == std::vector<float>({3.0f, 4.0f})));
  // a local row the gradient lacks (12, local row 0) pushes zeros, its neighbours their values
  auto lacking = rows.gradients(1, {1}, grad.data());
  BOOST_REQUIRE(lacking);
  BOOST_TEST(((*lacking)[0].data == std::vector<float>({0.0f, 0.0f})));
  BOOST_TEST(((*rows.gradients(0, {1}, grad.data()))[0].data == std::vector<float>({1.0f, 2.0f})));
  BOOST_TEST(!rows.gradients(0, {5}, grad.data())); // a local row the batch does not have
  // a batch without ids pulls nothing
  auto empty = slots_of({-1, -1, -1, -1});
  rows.renumber(empty.data(), 1, 4);
  BOOST_TEST(rows.distinct() == 0u);
  BOOST_TEST(rows.shards().empty());
}

BOOST_AUTO_TEST_CASE(the_local_table_fits_a_batch_and_never_exceeds_the_table) {
  BOOST_TEST(actorps::row_exchange::local_bits(size_t{1} << 22, 50 * 400) == 15); // 20,000 slots -> 32,768 rows
  BOOST_TEST(actorps::row_exchange::local_bits(size_t{1} << 10, 50 * 400) == 10);
  BOOST_TEST(actorps::row_exchange::local_bits(size_t{1} << 10, 1) == 1);
}

// Split by mod, row r lives in part r mod 2, at its first stored row + r / 2.
BOOST_AUTO_TEST_CASE(a_table_split_by_mod_is_pulled_by_stored_rows) {
  variable_spec table{"embedding0/weights", 16, 2};
  table.table = true;
  auto plan = make_placement({table, {"logits/bias", 1, 2}}, 2, placement_strategy::round_robin, {}, "mod");
  actorps::row_exchange rows{plan, 0, 8};
  auto slots = slots_of({5, 2, 13, -1});
  rows.renumber(slots.data(), 1, 4);
  auto to0 = rows.pulls(0), to1 = rows.pulls(1);
  BOOST_REQUIRE(to0.size() == 1u && to1.size() == 1u);
  BOOST_TEST(to0[0].rows.ids == std::vector<uint32_t>({1}));        // row 2: part 0, stored row 1
  BOOST_TEST(to1[0].rows.ids == std::vector<uint32_t>({10, 14}));   // rows 5, 13: part 1 (from 8)
  BOOST_TEST(to1[0].offset == 16u);
  std::vector<float> local(3 * 2);
  BOOST_REQUIRE(!rows.place({0, 16, {{5.0f, 5.5f, 13.0f, 13.5f}}, false, row_ids{{10, 14}}}, local.data()));
  BOOST_REQUIRE(!rows.place({0, 0, {{2.0f, 2.5f}}, false, row_ids{{1}}}, local.data()));
  BOOST_TEST(local == std::vector<float>({5.0f, 5.5f, 2.0f, 2.5f, 13.0f, 13.5f}));
}

// A slice holds the batch's whole local table only when the batch's rows all lie in its part and
// it brings every one of them, in local order.
BOOST_AUTO_TEST_CASE(a_slice_holds_every_row_only_when_it_is_the_whole_local_table) {
  auto plan = plan_of_table();
  actorps::row_exchange rows{plan, 0, 8};
  auto slots = slots_of({3, 4, 3, -1}); // rows 3 and 4, both on shard 0
  rows.renumber(slots.data(), 1, 4);
  const variable_slice whole{0, 0, {{3.0f, 3.5f, 4.0f, 4.5f}}, false, row_ids{{3, 4}}};
  BOOST_TEST(rows.holds_every_row(whole));
  BOOST_TEST(!rows.holds_every_row({0, 0, {{3.0f, 3.5f}}, false, row_ids{{3}}}));              // (one of them)
  BOOST_TEST(!rows.holds_every_row({0, 0, {{4.0f, 4.5f, 3.0f, 3.5f}}, false, row_ids{{4, 3}}})); // (out of order)
  BOOST_TEST(!rows.holds_every_row({0, 0, {{3.0f, 3.5f, 4.0f}}, false, row_ids{{3, 4}}}));       // (short)
  BOOST_TEST(!rows.holds_every_row({1, 0, {{3.0f, 3.5f, 4.0f, 4.5f}}, false, row_ids{{3, 4}}})); // (another variable)
  auto spread = slots_of({3, 9, -1, -1}); // rows on both shards: no slice is the whole table
  rows.renumber(spread.data(), 1, 4);
  BOOST_TEST(!rows.holds_every_row({0, 0, {{3.0f, 3.5f}}, false, row_ids{{3}}}));
  BOOST_TEST(!rows.holds_every_row({0, 16, {{9.0f, 9.5f}}, false, row_ids{{9}}}));
}

// On one shard (one part: the table's rows as they are) a batch pulls its rows in local
// order and the answer is its whole local table.
BOOST_AUTO_TEST_CASE(on_one_shard_the_pull_lists_the_rows_in_local_order) {
  variable_spec table{"embedding0/weights", 16, 2};
  table.table = true;
  for (auto strategy : {placement_strategy::round_robin, placement_strategy::balanced}) {
    auto plan = make_placement({table}, 1, strategy);
    actorps::row_exchange rows{plan, 0, 8};
    auto slots = slots_of({25, 3, 9, 3, 4, 41, -1, -1}); // rows 9, 3, 4
    rows.renumber(slots.data(), 2, 4);
    auto pulls = rows.pulls(0);
    BOOST_REQUIRE_EQUAL(pulls.size(), 1u);
    BOOST_TEST(pulls[0].rows.ids == std::vector<uint32_t>({9, 3, 4}));
    BOOST_TEST(rows.holds_every_row({0, 0, {{9.0f, 9.5f, 3.0f, 3.5f, 4.0f, 4.5f}}, false, row_ids{{9, 3, 4}}}));
    const std::vector<float> grad{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f};
    auto back = rows.gradients(0, {0, 1, 2}, grad.data());
    BOOST_REQUIRE(back);
    BOOST_TEST((*back)[0].rows.ids == std::vector<uint32_t>({9, 3, 4}));
    BOOST_TEST(((*back)[0].data == grad));
  }
}

// Hashed rows land in any part: each is found by arithmetic (a multiplication by mod; by div a
// bucket of rows and one comparison), which must name the part and stored row control/placement
// names, on parts of unequal size too, and on parts too uneven for buckets (a search then); the
// row gradients of a network that lists every local row in order go to the same parts.
BOOST_AUTO_TEST_CASE(every_row_is_pulled_from_the_part_and_stored_row_the_placement_names) {
  variable_spec table{"embedding0/weights", 4096, 2};
  table.table = true;
  std::vector<int> hashed;
  uint32_t state = 12345;
  for (int i = 0; i < 40 * 50; ++i) {
    state = state * 1664525u + 1013904223u;
    hashed.push_back(static_cast<int>(state >> 12)); // (ids of up to 2^20, taken mod the table)
  }
  const auto ids = slots_of(hashed);
  auto check = [&](const placement_plan& plan, const std::string& what) {
    actorps::row_exchange rows{plan, 0, ids.size()};
    auto slots = ids;
    rows.renumber(slots.data(), 40, 50);
    std::vector<uint32_t> local_of(4096, UINT32_MAX);
    for (uint32_t l = 0; l < rows.distinct(); ++l)
      local_of[rows.table_rows()[l]] = l;
    size_t pulled = 0;
    for (uint32_t s = 0; s < plan.shards; ++s)
      for (auto& pull : rows.pulls(s)) {
        uint32_t last_local = 0;
        for (size_t j = 0; j < pull.rows.ids.size(); ++j) {
          const uint32_t stored = pull.rows.ids[j];
          const uint32_t row = table_row(plan, 0, stored);
          BOOST_TEST_REQUIRE(stored_row(plan, 0, row) == stored, what);
          auto holder = std::find_if(plan.parts.begin(), plan.parts.end(), [&](const variable_part& p) {
            return p.variable == 0 && static_cast<uint32_t>(p.row_begin) <= stored
                   && stored < static_cast<uint32_t>(p.row_begin + p.rows);
          });
          BOOST_TEST_REQUIRE((holder != plan.parts.end() && holder->shard == s), what << ": stored row " << stored);
          BOOST_TEST_REQUIRE(pull.offset == part_offset(plan, *holder), what);
          BOOST_TEST_REQUIRE(local_of[row] != UINT32_MAX, what << ": row " << row << " is not the batch's");
          BOOST_TEST_REQUIRE((j == 0 || local_of[row] > last_local), what << ": out of local order"); // (each once)
          last_local = local_of[row];
          ++pulled;
        }
      }
    BOOST_TEST(rows.distinct() > 1000u, what);
    BOOST_TEST(pulled == rows.distinct(), what);
    // each part's row gradients: its rows' of the network's gradient (row j: local row j's)
    std::vector<size_t> order(rows.distinct());
    std::vector<float> grad(rows.distinct() * 2);
    for (size_t l = 0; l < order.size(); ++l) {
      order[l] = l;
      grad[2 * l] = static_cast<float>(l);
      grad[2 * l + 1] = 0.5f;
    }
    size_t pushed = 0;
    for (uint32_t s = 0; s < plan.shards; ++s) {
      auto back = rows.gradients(s, order, grad.data());
      BOOST_TEST_REQUIRE(static_cast<bool>(back), what);
      for (auto& slice : *back)
        for (size_t j = 0; j < slice.rows.ids.size(); ++j, ++pushed)
          BOOST_TEST_REQUIRE((slice.data.values[2 * j] == static_cast<float>(local_of[table_row(plan, 0, slice.rows.ids[j])])
                              && slice.data.values[2 * j + 1] == 0.5f), what << ": stored row " << slice.rows.ids[j]);
    }
    BOOST_TEST(pushed == rows.distinct(), what);
  };
  for (uint32_t shards : {2u, 3u, 5u, 7u})
    for (const char* by : {"div", "mod"})
      check(make_placement({table, {"logits/bias", 1, 2}}, shards, placement_strategy::round_robin, {}, by),
            std::string{by} + " over " + std::to_string(shards));
  auto uneven = make_placement({table}, 2, placement_strategy::round_robin, {}, "div");
  uneven.parts[0].rows = 1; // (a part of one row: no bucket of rows fits it)
  uneven.parts[1].row_begin = 1;
  uneven.parts[1].rows = 4095;
  check(uneven, "div, a part of one row");
}

BOOST_AUTO_TEST_SUITE_END()
