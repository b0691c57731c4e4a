// Tests of model/partitioner: the rules' text forms and how they split a variable's rows.
#include "model/partitioner.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(partitioner)

BOOST_AUTO_TEST_CASE(partitioners_parse_and_print_as_written) {
  for (const char* text : {"none", "fixed:2", "fixed:16", "max-bytes:65536"})
    BOOST_TEST(to_string(*parse_partitioner(text)) == text);
  for (const char* bad : {"", "fixed", "fixed:", "fixed:0", "fixed:-2", "fixed:2x", "max-bytes:0", "max-bytes:1k",
                          "min-max", "fixed:99999999999999999999"})
    BOOST_TEST(!parse_partitioner(bad), bad);
}

BOOST_AUTO_TEST_CASE(fixed_splits_rows_as_tensorflow_does) {
  variable_spec w{"w", 10, 3};
  BOOST_TEST(partition_rows(w, *parse_partitioner("fixed:3")) == std::vector<int>({4, 3, 3}));
  BOOST_TEST(partition_rows(w, *parse_partitioner("fixed:1")) == std::vector<int>({10}));
  BOOST_TEST(partition_rows(w, *parse_partitioner("fixed:25")) == std::vector<int>(10, 1)); // at most one part per row
  BOOST_TEST(partition_rows({"b", 1, 160}, *parse_partitioner("fixed:2")) == std::vector<int>({1}));
  BOOST_TEST(partition_rows(w, actorps::partitioner{}) == std::vector<int>({10}));
}

BOOST_AUTO_TEST_CASE(max_bytes_keeps_every_part_below_the_limit) {
  variable_spec w{"dense0/weights", 784, 160}; // 640 bytes a row
  for (uint64_t limit : {640u, 1000u, 65536u, 100000u, 501759u}) {
    auto rows = partition_rows(w, {actorps::partitioner::rule::max_bytes, limit});
    int total = 0;
    for (int r : rows) {
      BOOST_TEST(static_cast<uint64_t>(r) * 640 <= limit, "limit " << limit);
      total += r;
    }
    BOOST_TEST(total == 784);
    // as few parts as the limit allows
    BOOST_TEST(rows.size() == (784 + limit / 640 - 1) / (limit / 640), "limit " << limit);
  }
  BOOST_TEST(partition_rows(w, {actorps::partitioner::rule::max_bytes, 501760}).size() == 1u);
  BOOST_TEST(partition_rows(w, {actorps::partitioner::rule::max_bytes, 10}).size() == 784u); // a row is never split
}

BOOST_AUTO_TEST_SUITE_END()
