// Tests of model/column_split: slices cover every column once, in order, as evenly as possible.
#include "model/column_split.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(column_split)

BOOST_AUTO_TEST_CASE(slices_tile_the_columns_evenly) {
  for (int units : {1, 3, 10, 160}) {
    for (int slices = 1; slices <= std::min(units, 7); ++slices) {
      int next = 0, smallest = units, largest = 0;
      for (int k = 0; k < slices; ++k) {
        auto c = slice_columns(units, k, slices);
        BOOST_TEST(c.begin == next);
        next = c.end;
        smallest = std::min(smallest, c.size());
        largest = std::max(largest, c.size());
      }
      BOOST_TEST(next == units);
      BOOST_TEST(largest - smallest <= 1);
      BOOST_TEST(smallest >= 1);
    }
  }
  BOOST_TEST(slice_columns(10, 0, 3).size() == 4); // the first slices take the remainder
  BOOST_TEST(slice_columns(10, 2, 3).begin == 7);
}

BOOST_AUTO_TEST_CASE(a_layer_narrower_than_the_slices_is_named) {
  mlp_spec spec; // logits: 10 units
  BOOST_TEST(check_split(spec, 10).empty());
  auto why = check_split(spec, 11);
  BOOST_TEST(why.find("layer 5 has only 10 units") != std::string::npos, why);
  BOOST_TEST(!check_split(spec, 0).empty());
}

BOOST_AUTO_TEST_SUITE_END()
