// Tests of common/row_places: ids placed in the order they first come, a repeated id finding its
// place, many ids sharing probe chains, and a clear that leaves the table empty for the next use.
#include "common/row_places.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(row_places)

BOOST_AUTO_TEST_CASE(ids_are_placed_in_the_order_they_first_come) {
  actorps::row_places places(4);
  BOOST_TEST((places.place(70, 0) == std::pair<uint32_t, bool>{0, true}));
  BOOST_TEST((places.place(3, 1) == std::pair<uint32_t, bool>{1, true}));
  BOOST_TEST((places.place(70, 2) == std::pair<uint32_t, bool>{0, false})); // (seen: its place, not the offered one)
  BOOST_TEST((places.place(0, 2) == std::pair<uint32_t, bool>{2, true}));
}

// A full table of ids that crowd a few probe chains, over uses in turn, against a plain search;
// each use's clear leaves the next one an empty table (the table grows as a use needs).
BOOST_AUTO_TEST_CASE(crowded_ids_over_uses_in_turn_match_a_plain_search) {
  actorps::row_places places(16);
  for (uint32_t use = 0; use < 4; ++use) {
    const size_t count = 200 + 100 * use;
    std::vector<uint32_t> ids, firsts;
    for (size_t k = 0; k < 3 * count; ++k)
      ids.push_back(static_cast<uint32_t>((k * 7919 + use) % count) << 20); // (many ids, few distinct low bits)
    for (uint32_t id : ids) {
      auto seen = std::find(firsts.begin(), firsts.end(), id);
      const auto expected_place = static_cast<uint32_t>(seen - firsts.begin());
      const bool fresh = seen == firsts.end();
      if (fresh)
        firsts.push_back(id);
      const auto got = places.place(id, static_cast<uint32_t>(firsts.size() - (fresh ? 1 : 0)));
      BOOST_TEST_INFO("use " << use << ", id " << id);
      BOOST_TEST(got.first == expected_place);
      BOOST_TEST(got.second == fresh);
    }
    places.clear(firsts);
    BOOST_TEST((places.place(firsts.front(), 0) == std::pair<uint32_t, bool>{0, true})); // (empty again)
    places.clear(std::vector<uint32_t>{firsts.front()});
  }
}

// A table made for 2 ids takes 3,000 distinct ones (and their repeats) as they come, each
// keeping the place it was given while the table grows under it, and is empty after the clear.
BOOST_AUTO_TEST_CASE(a_small_table_grows_as_ids_come_and_keeps_their_places) {
  actorps::row_places places(2);
  std::vector<uint32_t> firsts;
  for (uint32_t round = 0; round < 2; ++round)
    for (uint32_t k = 0; k < 3000; ++k) {
      const uint32_t id = k * 2654435761u; // (distinct: an odd multiplier)
      const auto got = places.place(id, static_cast<uint32_t>(firsts.size()));
      BOOST_TEST_INFO("round " << round << ", k " << k);
      BOOST_TEST(got.first == k);
      BOOST_TEST(got.second == (round == 0));
      if (round == 0)
        firsts.push_back(id);
    }
  places.clear(firsts);
  BOOST_TEST((places.place(firsts.back(), 0) == std::pair<uint32_t, bool>{0, true}));
}

BOOST_AUTO_TEST_SUITE_END()
