// Tests of model/embedding_layer's touched_rows: a batch's distinct rows in the order its ids
// first name them and each slot's place among them, through the hash table or, for ids already
// in that order from 0 (a worker's renumbered batch), as they are; both give the same answer.
#include "model/layers.hpp"

#include "compute/token_ids.hpp"

#include "tests/support/token_slots.hpp"

#include <boost/test/unit_test.hpp>

#include <vector>

using namespace actorps;
using actorps::test::slots_of;

BOOST_AUTO_TEST_SUITE(embedding_layer)

BOOST_AUTO_TEST_CASE(ids_in_first_seen_order_are_their_own_places) {
  touched_rows t(16, 8);
  auto slots = slots_of({0, 1, 0, 2, /* example 2 */ 1, 3, -1, -1});
  BOOST_TEST((t.collect(slots.data(), 2, 4) == std::vector<size_t>{0, 1, 2, 3}));
  BOOST_TEST(t.positions() == slots, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(other_ids_go_through_the_hash_table) {
  touched_rows t(16, 8);
  auto slots = slots_of({1, 0, 2, 1, /* example 2 */ 18, 5, -1, -1}); // (18 is row 2 of a 16-row table)
  BOOST_TEST((t.collect(slots.data(), 2, 4) == std::vector<size_t>{1, 0, 2, 5}));
  BOOST_TEST(t.positions() == slots_of({0, 1, 2, 0, 2, 3, -1, -1}), boost::test_tools::per_element());
  // a batch in first-seen order after it: the hash table left empty, the answer as it should be
  auto compact = slots_of({0, 0, 1, -1});
  BOOST_TEST((t.collect(compact.data(), 1, 4) == std::vector<size_t>{0, 1}));
  BOOST_TEST(t.positions() == compact, boost::test_tools::per_element());
  // and one that breaks the order late (after places were written): hashed, every slot placed
  auto late = slots_of({0, 1, 2, 0, /* example 2 */ 1, 9, 3, -1});
  BOOST_TEST((t.collect(late.data(), 2, 4) == std::vector<size_t>{0, 1, 2, 9, 3}));
  BOOST_TEST(t.positions() == slots_of({0, 1, 2, 0, 1, 3, 4, -1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(ids_past_the_table_are_taken_modulo_its_rows) {
  touched_rows t(4, 8);
  auto slots = slots_of({0, 1, 2, 3, 4, -1}); // (id 4 is row 0 again: not in first-seen order)
  BOOST_TEST((t.collect(slots.data(), 1, 6) == std::vector<size_t>{0, 1, 2, 3}));
  BOOST_TEST(t.positions() == slots_of({0, 1, 2, 3, 0, -1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
