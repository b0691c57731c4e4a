// Tests of model/embedding_layer's touched_rows: a batch's distinct rows in the order its ids
// first name them and each slot's place among them, through the hash table or, for ids already
// in that order from 0 (a worker's renumbered batch), as they are; both give the same answer.
#include "model/layers.hpp"

#include "compute/token_ids.hpp"

#include "tests/support/token_slots.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
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

// A full batch (more ids than the cursor asks for ahead, ids colliding in the hash table, examples
// filled to different lengths) against a plain search of the rows listed so far, over batches in
// turn (each leaves the table empty for the next).
BOOST_AUTO_TEST_CASE(a_full_batch_lists_its_rows_as_a_plain_search_does) {
  const int examples = 30, tokens = 40;
  const size_t table_rows = size_t{1} << 20;
  touched_rows t(table_rows, examples * tokens);
  for (uint32_t batch = 0; batch < 3; ++batch) {
    std::vector<int> ids(static_cast<size_t>(examples * tokens), -1);
    for (int r = 0; r < examples; ++r)
      for (int k = 0; k < (r * 13 + static_cast<int>(batch)) % (tokens + 1); ++k) // (up to 40 ids, some none)
        ids[static_cast<size_t>(r * tokens + k)] = static_cast<int>((static_cast<uint32_t>(r * 7919 + k * 104729) * (batch + 1)) % 3001) * 4096;
    auto slots = slots_of(ids);
    std::vector<size_t> expected;
    std::vector<int> places(ids.size(), -1);
    for (size_t s = 0; s < ids.size(); ++s) {
      if (ids[s] < 0)
        continue;
      const size_t row = static_cast<size_t>(ids[s]) % table_rows;
      auto it = std::find(expected.begin(), expected.end(), row);
      places[s] = static_cast<int>(it - expected.begin());
      if (it == expected.end())
        expected.push_back(row);
    }
    BOOST_TEST_INFO("batch " << batch);
    BOOST_TEST(t.collect(slots.data(), examples, tokens) == expected, boost::test_tools::per_element());
    BOOST_TEST(t.positions() == slots_of(places), boost::test_tools::per_element());
  }
}

BOOST_AUTO_TEST_SUITE_END()
