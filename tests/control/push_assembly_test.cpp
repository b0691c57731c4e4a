// Tests of control/push_assembly: a sync aggregator's gathering of pushes that come in parts.
#include "control/push_assembly.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

using assembly = actorps::push_assembly<int>; // tickets: numbers standing for reply promises

std::vector<variable_slice> grads(uint32_t var, std::vector<float> xs) {
  return {{var, 0, {xs}}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(push_assembly)

BOOST_AUTO_TEST_CASE(a_push_is_complete_once_every_part_is_in_whatever_their_order) {
  assembly a{2};
  auto r = a.add(1, 5, 2, 3, grads(0, {1.0f}), 12);
  BOOST_REQUIRE(r);
  BOOST_TEST(!*r);
  BOOST_TEST(!*a.add(1, 5, 0, 3, grads(2, {3.0f, 3.0f}), 10));
  BOOST_TEST(*a.add(1, 5, 1, 3, grads(1, {2.0f}), 11));
  auto [whole, parts] = a.take(1);
  BOOST_REQUIRE_EQUAL(whole.size(), 3u); // in part order
  BOOST_TEST(whole[0].variable == 2u);
  BOOST_TEST(whole[1].variable == 1u);
  BOOST_TEST(whole[2].variable == 0u);
  BOOST_REQUIRE_EQUAL(parts.size(), 3u);
  BOOST_TEST(parts[0].ticket == 10);
  BOOST_TEST(parts[0].ranges.at(0).count == 2u);
  BOOST_TEST(parts[2].ticket == 12);
  BOOST_TEST(a.drop_before(100).empty()); // nothing left held
}

// cluster.rows-with-push: the part carrying the table's rows asks its worker's next rows back;
// each part keeps its own reads, whether the push completes or comes too late.
BOOST_AUTO_TEST_CASE(each_part_keeps_the_rows_it_asks_back) {
  assembly a{2};
  const slice_ref rows{0, 0, 4, row_ids{{7, 2}}};
  BOOST_REQUIRE(a.add(0, 3, 1, 2, grads(0, {1.0f}), 31, {rows}));
  BOOST_TEST(*a.add(0, 3, 0, 2, grads(1, {1.0f}), 30));
  auto [whole, parts] = a.take(0);
  BOOST_REQUIRE_EQUAL(parts.size(), 2u);
  BOOST_TEST(parts[0].reads.empty());
  BOOST_REQUIRE_EQUAL(parts[1].reads.size(), 1u);
  BOOST_TEST(parts[1].reads[0].rows.ids == std::vector<uint32_t>({7, 2}));
  BOOST_REQUIRE(a.add(1, 3, 0, 2, grads(0, {1.0f}), 40, {rows}));
  auto late = a.drop_before(4);
  BOOST_REQUIRE_EQUAL(late.size(), 1u);
  BOOST_TEST(late[0].ticket == 40);
  BOOST_TEST(late[0].reads.size() == 1u);
}

BOOST_AUTO_TEST_CASE(bad_parts_are_refused_by_name) {
  assembly a{2};
  auto bad = [&](uint32_t w, uint32_t part, uint32_t parts, const std::string& text) {
    auto r = a.add(w, 0, part, parts, grads(0, {1.0f}), 0);
    BOOST_REQUIRE(!r);
    BOOST_TEST(describe(r.error()) == text);
  };
  bad(2, 0, 2, "unknown_worker: worker 2 is not in the cluster (2 workers)");
  bad(0, 2, 2, "protocol_error: worker 0 sent part 2 of 2");
  bad(0, 0, 0, "protocol_error: worker 0 sent part 0 of 0");
  BOOST_REQUIRE(a.add(0, 0, 0, 2, grads(0, {1.0f}), 0));
  bad(0, 0, 2, "protocol_error: worker 0 sent part 0 of step 0 twice");
  bad(0, 1, 3, "protocol_error: worker 0 cut step 0 into 3 parts and into 2");
  BOOST_TEST(*a.add(0, 0, 1, 2, grads(1, {1.0f}), 1)); // the good part still completes it
}

BOOST_AUTO_TEST_CASE(parts_of_steps_that_went_on_without_them_are_handed_back) {
  assembly a{3};
  BOOST_REQUIRE(a.add(0, 4, 0, 2, grads(0, {1.0f}), 40));
  BOOST_REQUIRE(a.add(2, 5, 0, 2, grads(0, {1.0f}), 50));
  auto late = a.drop_before(5);
  BOOST_REQUIRE_EQUAL(late.size(), 1u);
  BOOST_TEST(late[0].ticket == 40);
  BOOST_TEST(late[0].ranges.at(0).variable == 0u);
  BOOST_TEST(a.drop_before(5).empty());
  // a part of a later step replaces what was held of an earlier one
  BOOST_TEST(!*a.add(2, 6, 0, 2, grads(0, {2.0f}), 60));
  BOOST_TEST(*a.add(2, 6, 1, 2, grads(1, {2.0f}), 61));
  BOOST_TEST(a.take(2).second.front().ticket == 60);
}

BOOST_AUTO_TEST_SUITE_END()
