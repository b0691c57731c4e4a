// Tests of compute/token_ids: ids_below's guard over a batch's slots.
#include "compute/token_ids.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(token_ids)

BOOST_AUTO_TEST_CASE(ids_below_looks_at_every_id_and_skips_empty_slots) {
  std::vector<float> slots{encode_token(0), encode_token(3), 0.0f, encode_token(1), 0.0f};
  BOOST_TEST(ids_below(slots.data(), slots.size(), 4));
  BOOST_TEST(!ids_below(slots.data(), slots.size(), 3)); // (id 3 is not below 3)
  BOOST_TEST(!ids_below(slots.data(), 2, 3));
  BOOST_TEST(ids_below(slots.data(), 1, 1));
  BOOST_TEST(ids_below(slots.data(), 0, 0));
  uint32_t beyond = (1u << token_id_bits) + 7; // (no id: an empty slot to every reader)
  float junk;
  std::memcpy(&junk, &beyond, sizeof junk);
  slots.push_back(junk);
  BOOST_TEST(ids_below(slots.data(), slots.size(), 4));
}

BOOST_AUTO_TEST_SUITE_END()
