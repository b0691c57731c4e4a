// Tests of compute/staging_ring: pieces placed in order and wrapped to the start, a full ring
// asking for its oldest ticket, tickets done in order, and a seeded churn of copies completing
// in ticket order, checked against a byte map: no piece ever overlaps one still in flight.
#include "compute/staging_ring.hpp"

#include <boost/test/unit_test.hpp>

#include <deque>
#include <random>
#include <stdexcept>
#include <vector>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(staging_ring)

BOOST_AUTO_TEST_CASE(pieces_go_in_order_aligned_with_rising_tickets) {
  actorps::staging_ring r{4096, 256};
  BOOST_TEST(r.chunk() == 1024u);
  auto a = r.take(1), b = r.take(300), c = r.take(1024);
  BOOST_TEST((a.what == actorps::staging_ring::answer::kind::fits && b.what == a.what && c.what == a.what));
  BOOST_TEST(a.offset == 0u);
  BOOST_TEST(b.offset == 256u);
  BOOST_TEST(c.offset == 768u);
  BOOST_TEST(a.ticket == 1u);
  BOOST_TEST(b.ticket == 2u);
  BOOST_TEST(c.ticket == 3u);
  BOOST_TEST(r.outstanding() == 3u);
  BOOST_TEST(r.last_ticket() == 3u);
  BOOST_CHECK_THROW(r.take(1025), std::logic_error);
}

BOOST_AUTO_TEST_CASE(a_full_ring_waits_for_its_oldest_ticket_then_wraps_to_the_start) {
  actorps::staging_ring r{4096, 256};
  for (int i = 0; i < 4; ++i)
    BOOST_TEST(r.take(1024).offset == 1024u * static_cast<size_t>(i));
  auto w = r.take(256);
  BOOST_TEST((w.what == actorps::staging_ring::answer::kind::wait));
  BOOST_TEST(w.ticket == 1u);
  r.done(1); // [0, 1024) free: the next piece wraps there
  auto x = r.take(512);
  BOOST_TEST((x.what == actorps::staging_ring::answer::kind::fits));
  BOOST_TEST(x.offset == 0u);
  BOOST_TEST(x.ticket == 5u);
  auto y = r.take(1024); // 512 left before ticket 2's piece: wait for it
  BOOST_TEST((y.what == actorps::staging_ring::answer::kind::wait));
  BOOST_TEST(y.ticket == 2u);
  r.done(5); // every ticket: the ring starts over
  BOOST_TEST(r.outstanding() == 0u);
  BOOST_TEST(r.take(1024).offset == 0u);
}

BOOST_AUTO_TEST_CASE(a_piece_that_does_not_fit_before_the_end_goes_to_the_start) {
  actorps::staging_ring r{4096, 256};
  r.take(1024);
  r.take(1024);
  r.take(768); // head at 2816: 1280 left before the end
  r.done(2);   // the first two done: [0, 2048) free, ticket 3 at [2048, 2816)
  auto a = r.take(1024);
  BOOST_TEST(a.offset == 2816u); // (fits before the end)
  auto b = r.take(512);          // 256 left before the end: to the start
  BOOST_TEST((b.what == actorps::staging_ring::answer::kind::fits));
  BOOST_TEST(b.offset == 0u);
  auto c = r.take(1024); // [512, 2048) free
  BOOST_TEST(c.offset == 512u);
  auto d = r.take(768); // [1536, 2048): 512 free, not enough
  BOOST_TEST((d.what == actorps::staging_ring::answer::kind::wait));
  BOOST_TEST(d.ticket == 3u);
}

// Copies complete in ticket order at random moments; every byte a fitting piece is given must
// be free of every piece still in flight.
BOOST_AUTO_TEST_CASE(seeded_churn_never_hands_out_bytes_in_flight) {
  for (unsigned seed = 1; seed <= 20; ++seed) {
    std::mt19937 rng{seed};
    const size_t capacity = 8192;
    actorps::staging_ring r{capacity, 64};
    std::vector<uint64_t> owner(capacity, 0); // byte -> ticket in flight (0: free)
    std::deque<std::pair<uint64_t, std::pair<size_t, size_t>>> flying;
    uint64_t completed = 0;
    auto complete_oldest = [&] {
      auto [t, span] = flying.front();
      flying.pop_front();
      for (size_t i = span.first; i < span.first + span.second; ++i)
        owner[i] = 0;
      completed = t;
      r.done(t);
    };
    for (int op = 0; op < 4000; ++op) {
      if (!flying.empty() && rng() % 3 == 0) {
        complete_oldest();
        continue;
      }
      const size_t bytes = 1 + rng() % r.chunk();
      auto a = r.take(bytes);
      if (a.what == actorps::staging_ring::answer::kind::wait) {
        BOOST_REQUIRE(!flying.empty());
        BOOST_REQUIRE(a.ticket == flying.front().first); // (the oldest in flight)
        complete_oldest();
        continue;
      }
      BOOST_REQUIRE(a.ticket > completed);
      BOOST_REQUIRE(a.offset % 64 == 0);
      BOOST_REQUIRE(a.offset + bytes <= capacity);
      size_t taken = 0; // bytes of the new piece still owned by a piece in flight
      for (size_t i = a.offset; i < a.offset + bytes; ++i) {
        taken += owner[i] != 0;
        owner[i] = a.ticket;
      }
      BOOST_REQUIRE_MESSAGE(taken == 0, "seed " << seed << ": ticket " << a.ticket << " got " << taken
                                                << " bytes still in flight");
      flying.push_back({a.ticket, {a.offset, bytes}});
    }
    BOOST_TEST(r.outstanding() == flying.size());
  }
}

BOOST_AUTO_TEST_SUITE_END()
