// Tests of control/stream_pairing: an exchange completes once its message and (where frames
// follow) its frames are in, in that order, and only once; frames ahead of their message and a
// second message are out of order; answers for ids not in flight are unknown; an exchange a
// deadline's ticks old is late; seeded runs of many exchanges, their events interleaved at random in the
// stream's order, complete each exactly once with its own payload.
#include "control/stream_pairing.hpp"

#include <boost/test/unit_test.hpp>

#include <map>
#include <random>
#include <set>
#include <string>

using namespace actorps;

BOOST_AUTO_TEST_SUITE(stream_pairing)

BOOST_AUTO_TEST_CASE(a_message_then_its_frames_complete_an_exchange_once) {
  actorps::stream_pairing<std::string> p;
  BOOST_REQUIRE(p.begin(1, "pull 1", 0));
  BOOST_TEST(!p.begin(1, "again", 0)); // (an id in use: nothing changes)
  BOOST_TEST(*p.find(1) == "pull 1");
  BOOST_TEST((p.on_frames(1) == pairing_outcome::out_of_order)); // frames ahead of the reply
  BOOST_TEST((p.on_message(1, true) == pairing_outcome::waiting));
  BOOST_TEST((p.phase(1) == pairing_phase::awaiting_frames));
  BOOST_TEST((p.on_message(1, true) == pairing_outcome::out_of_order)); // a second reply
  BOOST_TEST((p.on_frames(1) == pairing_outcome::complete));
  BOOST_TEST(*p.take(1) == "pull 1");
  BOOST_TEST((p.on_frames(1) == pairing_outcome::unknown)); // (taken: a late answer is ignored)
  BOOST_TEST((p.on_message(1, false) == pairing_outcome::unknown));
  BOOST_TEST(!p.take(1).has_value());
  BOOST_REQUIRE(p.begin(2, "push 2", 0));
  BOOST_TEST((p.on_message(2, false) == pairing_outcome::complete)); // values inside the reply
  BOOST_TEST(p.size() == 1u);
}

BOOST_AUTO_TEST_CASE(exchanges_two_ticks_old_are_late_and_a_closed_stream_ends_all) {
  actorps::stream_pairing<int> p;
  p.begin(1, 10, 0);
  p.begin(2, 20, 1);
  BOOST_TEST(!p.any_late(1));
  BOOST_TEST(p.any_late(2)); // exchange 1 has waited a whole interval (ticks 1 to 2)
  p.take(1);
  BOOST_TEST(!p.any_late(2));
  BOOST_TEST(p.any_late(3));
  p.begin(3, 30, 3);
  p.on_message(3, true);
  BOOST_TEST(p.count(pairing_phase::awaiting_message) == 1u);
  BOOST_TEST(p.count(pairing_phase::awaiting_frames) == 1u);
  int standing = 0;
  p.each(pairing_phase::awaiting_message, [&](uint64_t id, int v) { standing += static_cast<int>(id) * 100 + v; });
  BOOST_TEST(standing == 220);
  auto all = p.take_all();
  BOOST_TEST((all == std::vector<int>{20, 30}));
  BOOST_TEST(p.size() == 0u);
}

// Ticks a quarter of a deadline apart (a ShardLink's): an exchange is late once it has waited
// four whole intervals, so between one deadline and 1.25 of it after it began.
BOOST_AUTO_TEST_CASE(with_four_ticks_a_deadline_an_exchange_is_late_after_four_whole_intervals) {
  actorps::stream_pairing<int> p;
  p.begin(1, 10, 3); // (begun after tick 3)
  for (uint64_t t = 4; t <= 7; ++t)
    BOOST_TEST(!p.any_late(t, 4), "tick " << t);
  BOOST_TEST(p.any_late(8, 4)); // ticks 4 to 8: four whole intervals
  BOOST_TEST(!p.any_late(4)); // (one tick a deadline: late from tick 5)
  BOOST_TEST(p.any_late(5));
  p.take(1);
  BOOST_TEST(!p.any_late(8, 4));
}

// Seeded: 200 exchanges, begun in id order; each gets its message and, for some, frames behind
// it, as one stream delivers them (an exchange's frames never before its message), interleaved
// across exchanges at random; some are refused (taken without completing). Each completes
// exactly once, after its message and frames, and hands back its own payload.
BOOST_AUTO_TEST_CASE(seeded_interleavings_complete_each_exchange_exactly_once) {
  for (uint32_t seed = 1; seed <= 50; ++seed) {
    BOOST_TEST_CONTEXT("seed " << seed) {
      std::mt19937 gen{seed};
      actorps::stream_pairing<uint64_t> p;
      struct plan {
        bool frames;
        bool refused;
        int step = 0; // 0: message due; 1: frames due; 2: done
      };
      std::map<uint64_t, plan> plans;
      for (uint64_t id = 1; id <= 200; ++id) {
        BOOST_REQUIRE(p.begin(id, id * 7, 0));
        plans[id] = {gen() % 2 == 0, gen() % 10 == 0};
      }
      std::set<uint64_t> completed;
      std::vector<uint64_t> open;
      for (auto& [id, pl] : plans)
        open.push_back(id);
      while (!open.empty()) {
        const size_t k = gen() % open.size();
        const uint64_t id = open[k];
        auto& pl = plans[id];
        if (pl.refused) { // a refusal instead of a reply: no frames follow
          BOOST_TEST((p.take(id) == std::optional<uint64_t>{id * 7}));
          pl.step = 2;
        } else if (pl.step == 0) {
          const auto o = p.on_message(id, pl.frames);
          BOOST_TEST((o == (pl.frames ? pairing_outcome::waiting : pairing_outcome::complete)));
          if (o == pairing_outcome::complete) {
            BOOST_TEST(completed.insert(id).second);
            BOOST_TEST((p.take(id) == std::optional<uint64_t>{id * 7}));
            pl.step = 2;
          } else {
            pl.step = 1;
          }
        } else {
          BOOST_TEST((p.on_frames(id) == pairing_outcome::complete));
          BOOST_TEST(completed.insert(id).second);
          BOOST_TEST((p.take(id) == std::optional<uint64_t>{id * 7}));
          pl.step = 2;
        }
        if (pl.step == 2) {
          open.erase(open.begin() + static_cast<std::ptrdiff_t>(k));
          // a duplicate answer for a finished exchange changes nothing
          BOOST_TEST((p.on_message(id, true) == pairing_outcome::unknown));
          BOOST_TEST((p.on_frames(id) == pairing_outcome::unknown));
        }
      }
      size_t expected = 0;
      for (auto& [id, pl] : plans)
        expected += pl.refused ? 0 : 1;
      BOOST_TEST(completed.size() == expected);
      BOOST_TEST(p.size() == 0u);
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
