// Tests of compute/memory_arena: alignment, first fit, exhaustion, merging, a seeded churn
// checked against a byte map of who owns what.
#include "compute/memory_arena.hpp"

#include <boost/test/unit_test.hpp>

#include <random>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(memory_arena)

BOOST_AUTO_TEST_CASE(offsets_are_aligned_and_sizes_rounded_up) {
  actorps::memory_arena a{4096, 256};
  auto x = a.take(1), y = a.take(257), z = a.take(0);
  BOOST_REQUIRE(x && y && z);
  BOOST_TEST(*x == 0u);
  BOOST_TEST(*y == 256u);
  BOOST_TEST(*z == 768u);
  BOOST_TEST(a.in_use() == 1024u);
  BOOST_TEST(a.largest_free() == 3072u);
}

BOOST_AUTO_TEST_CASE(a_full_arena_refuses_and_a_freed_range_is_taken_again) {
  actorps::memory_arena a{1024, 256};
  BOOST_TEST(a.capacity() == 1024u);
  std::vector<size_t> got;
  for (int i = 0; i < 4; ++i)
    got.push_back(a.take(200).value());
  BOOST_TEST(!a.take(1));
  BOOST_TEST(a.give_back(got[2]));
  BOOST_TEST(!a.take(257)); // one range of 256 is free
  BOOST_TEST(a.take(256).value() == got[2]);
  BOOST_TEST(!a.give_back(12345)); // never taken
  BOOST_TEST(!a.give_back(7));
  BOOST_TEST(a.in_use() == 1024u);
}

BOOST_AUTO_TEST_CASE(free_neighbours_merge_both_ways) {
  actorps::memory_arena a{1024, 256};
  auto r0 = a.take(256).value(), r1 = a.take(256).value(), r2 = a.take(256).value(), r3 = a.take(256).value();
  BOOST_TEST(a.give_back(r0));
  BOOST_TEST(a.give_back(r2));
  BOOST_TEST(a.largest_free() == 256u);
  BOOST_TEST(a.give_back(r1)); // joins r0 before it and r2 after it
  BOOST_TEST(a.largest_free() == 768u);
  BOOST_TEST(a.take(768).value() == 0u);
  BOOST_TEST(a.give_back(r3));
  BOOST_TEST(a.give_back(0));
  BOOST_TEST(a.largest_free() == 1024u);
  BOOST_TEST(a.in_use() == 0u);
}

BOOST_AUTO_TEST_CASE(capacity_is_cut_to_whole_alignments) {
  actorps::memory_arena a{1000, 256};
  BOOST_TEST(a.capacity() == 768u);
  actorps::memory_arena none{100, 256};
  BOOST_TEST(!none.take(1));
}

BOOST_AUTO_TEST_CASE(seeded_churn_never_hands_out_a_byte_twice) {
  constexpr size_t capacity = 64 * 1024, align = 64;
  actorps::memory_arena a{capacity, align};
  std::vector<int> owner(capacity / align, -1); // per aligned unit: the live range holding it
  struct live {
    size_t offset, units;
  };
  std::vector<live> alive;
  std::mt19937 rng{7};
  int refused = 0;
  for (int step = 0; step < 20000; ++step) {
    if (alive.empty() || rng() % 3 != 0) {
      const size_t bytes = 1 + rng() % 3000;
      auto at = a.take(bytes);
      if (!at) {
        ++refused;
        BOOST_TEST(a.largest_free() < (bytes + align - 1) / align * align); // refused only when it cannot fit
        continue;
      }
      BOOST_REQUIRE(*at % align == 0);
      const size_t units = (bytes + align - 1) / align;
      BOOST_REQUIRE(*at / align + units <= owner.size());
      for (size_t u = 0; u < units; ++u) {
        BOOST_REQUIRE(owner[*at / align + u] == -1);
        owner[*at / align + u] = step;
      }
      alive.push_back({*at, units});
    } else {
      const size_t k = rng() % alive.size();
      BOOST_REQUIRE(a.give_back(alive[k].offset));
      for (size_t u = 0; u < alive[k].units; ++u)
        owner[alive[k].offset / align + u] = -1;
      alive.erase(alive.begin() + static_cast<std::ptrdiff_t>(k));
    }
    size_t used = 0;
    for (auto& l : alive)
      used += l.units * align;
    BOOST_REQUIRE(a.in_use() == used);
  }
  BOOST_TEST(refused > 0); // the churn did fill the arena
  for (auto& l : alive)
    BOOST_REQUIRE(a.give_back(l.offset));
  BOOST_TEST(a.largest_free() == capacity);
}

BOOST_AUTO_TEST_SUITE_END()
