// Tests of control/sync_rules: exact averaging in worker order, stale drops, backup cut-off,
// SSP blocking and release, and a lost worker releasing a step.
#include "control/sync_rules.hpp"

#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

std::vector<variable_slice> grads(std::vector<float> a, std::vector<float> b) {
  return {{0, 0, {a}}, {3, 2, {b}}};
}

} // namespace

BOOST_AUTO_TEST_SUITE(sync_rules)

BOOST_AUTO_TEST_CASE(averages_every_worker_in_worker_order) {
  sync_rule rule{3, 3};
  BOOST_TEST((*rule.offer(2, 0, grads({3.0f, 0.0f}, {1.0f})) == sync_rule::verdict::accepted));
  BOOST_TEST(!rule.ready());
  BOOST_TEST(rule.missing() == std::vector<uint32_t>({0, 1}));
  BOOST_TEST((*rule.offer(0, 0, grads({1.0f, 1.0f}, {2.0f})) == sync_rule::verdict::accepted));
  BOOST_TEST((*rule.offer(1, 0, grads({2.0f, 5.0f}, {3.0f})) == sync_rule::verdict::accepted));
  BOOST_REQUIRE(rule.ready());
  auto done = rule.complete();
  BOOST_TEST(done.step == 0u);
  BOOST_TEST(done.released == std::vector<uint32_t>({0, 1, 2}));
  BOOST_TEST(done.waited_on == 1u);
  BOOST_TEST((done.average[0].data == std::vector<float>({2.0f, 2.0f})));
  BOOST_TEST((done.average[1].data == std::vector<float>({2.0f})));
  BOOST_TEST(done.average[1].variable == 3u);
  BOOST_TEST(done.average[1].offset == 2u);
  BOOST_TEST(rule.step() == 1u);
}

// A table's row slices: each worker names its own rows; a row both touched gets their sum, the
// others their one gradient, all divided by the contributions' count (the dense average's rows).
BOOST_AUTO_TEST_CASE(row_slices_are_summed_by_row) {
  sync_rule rule{2, 2};
  auto push = [](std::vector<uint32_t> rows, std::vector<float> values) {
    return std::vector<variable_slice>{{3, 2, {{1.0f}}}, {0, 8, {values}, false, row_ids{std::move(rows)}}};
  };
  BOOST_TEST((*rule.offer(1, 0, push({9, 5}, {1.0f, 2.0f, 3.0f, 4.0f})) == sync_rule::verdict::accepted));
  BOOST_TEST((*rule.offer(0, 0, push({5, 4, 7}, {10.0f, 20.0f, 30.0f, 40.0f, 50.0f, 60.0f}))
              == sync_rule::verdict::accepted)); // (other rows, other sizes: the layout still matches)
  BOOST_REQUIRE(rule.ready());
  auto done = rule.complete();
  BOOST_REQUIRE_EQUAL(done.average.size(), 2u);
  BOOST_TEST((done.average[0].data == std::vector<float>({1.0f})));
  auto& rows = done.average[1];
  BOOST_TEST(rows.variable == 0u);
  BOOST_TEST(rows.offset == 8u);
  BOOST_TEST(rows.rows.ids == std::vector<uint32_t>({5, 4, 7, 9})); // worker 0's first, then the new ones
  BOOST_TEST((rows.data == std::vector<float>({6.5f, 12.0f, 15.0f, 20.0f, 25.0f, 30.0f, 0.5f, 1.0f})));
  // a push whose ranges differ from the step's first is still refused
  BOOST_REQUIRE(rule.offer(1, 1, push({1}, {1.0f, 1.0f})));
  BOOST_TEST(!rule.offer(0, 1, {{3, 2, {{1.0f, 2.0f}}}}));
}

BOOST_AUTO_TEST_CASE(the_sum_does_not_depend_on_arrival_order) {
  // Values whose float sum depends on the order: (1e8 - 1e8) + 1 = 1, but (1 + 1e8) - 1e8 = 0.
  auto run = [](std::vector<uint32_t> order) {
    sync_rule rule{3, 3};
    std::vector<float> v = {1e8f, -1e8f, 1.0f};
    for (auto w : order)
      BOOST_REQUIRE(rule.offer(w, 0, {{0, 0, {{v[w]}}}}));
    return rule.complete().average[0].data.values[0];
  };
  BOOST_TEST(run({0, 1, 2}) == 1.0f / 3.0f);
  BOOST_TEST(run({2, 0, 1}) == 1.0f / 3.0f);
  BOOST_TEST(run({1, 2, 0}) == 1.0f / 3.0f);
}

BOOST_AUTO_TEST_CASE(backup_workers_are_cut_off_and_late_gradients_are_stale) {
  sync_rule rule{3, 2}; // one backup worker
  BOOST_REQUIRE(rule.offer(1, 0, grads({1.0f, 1.0f}, {1.0f})));
  BOOST_REQUIRE(rule.offer(2, 0, grads({3.0f, 3.0f}, {3.0f})));
  BOOST_REQUIRE(rule.ready());
  auto done = rule.complete();
  BOOST_TEST(done.released == std::vector<uint32_t>({1, 2}));
  BOOST_TEST((done.average[0].data == std::vector<float>({2.0f, 2.0f})));
  BOOST_TEST((*rule.offer(0, 0, grads({9.0f, 9.0f}, {9.0f})) == sync_rule::verdict::stale));
  BOOST_TEST(!rule.ready());
}

BOOST_AUTO_TEST_CASE(bad_offers_are_named) {
  sync_rule rule{2, 2};
  BOOST_TEST(rule.offer(2, 0, {}).error() == errc::unknown_worker);
  BOOST_TEST(describe(rule.offer(0, 1, {}).error()) == "protocol_error: worker 0 pushed step 1 but the current step is 0");
  BOOST_REQUIRE(rule.offer(0, 0, grads({1.0f, 1.0f}, {1.0f})));
  BOOST_TEST(describe(rule.offer(0, 0, {}).error()) == "protocol_error: worker 0 pushed step 0 twice");
  BOOST_TEST(rule.offer(1, 0, grads({1.0f}, {1.0f})).error() == errc::protocol_error); // other layout
  BOOST_TEST(!rule.ready());
}

// Found by the simulator (sync, shard crashes, seed 364 with --shard-crashes): a chief
// restarted while shard 0 was down set it up from its checkpoint at step 16 while shard 1 had kept
// step 23, and went on at 23; shard 0 refused every push of step 23 as ahead of it, failing the
// workers. A rule resumed from a checkpoint follows the first push ahead of it, once, before it
// holds any gradient; after its first step it is strict again.
BOOST_AUTO_TEST_CASE(a_rule_resumed_from_a_checkpoint_catches_up_with_the_cluster_once) {
  sync_rule rule{2, 2};
  BOOST_REQUIRE(rule.resume_at(16));
  BOOST_REQUIRE(rule.offer(0, 23, grads({1.0f}, {1.0f})));
  BOOST_TEST(rule.step() == 23u);
  BOOST_TEST((*rule.offer(1, 22, grads({1.0f}, {1.0f})) == sync_rule::verdict::stale));
  BOOST_REQUIRE(rule.offer(1, 23, grads({3.0f}, {3.0f})));
  BOOST_REQUIRE(rule.ready());
  BOOST_TEST(rule.complete().step == 23u);
  BOOST_TEST(rule.offer(0, 30, {}).error() == errc::protocol_error); // strict again
  sync_rule fresh{2, 2}; // never resumed: a push ahead is a protocol error
  BOOST_TEST(fresh.offer(0, 5, {}).error() == errc::protocol_error);
}

BOOST_AUTO_TEST_CASE(a_lost_worker_releases_the_step_and_counts_again_when_it_pushes) {
  sync_rule rule{3, 3};
  BOOST_REQUIRE(rule.offer(0, 0, grads({1.0f, 1.0f}, {1.0f})));
  BOOST_REQUIRE(rule.offer(1, 0, grads({3.0f, 3.0f}, {3.0f})));
  BOOST_TEST(rule.lose(2)); // the step no longer waits for worker 2
  auto done = rule.complete();
  BOOST_TEST((done.average[0].data == std::vector<float>({2.0f, 2.0f})));
  BOOST_TEST(rule.live_workers() == 2u);
  // worker 2 restarts at step 0: stale, and live again
  BOOST_TEST((*rule.offer(2, 0, grads({1.0f, 1.0f}, {1.0f})) == sync_rule::verdict::stale));
  BOOST_TEST(rule.live_workers() == 3u);
  BOOST_REQUIRE(rule.offer(0, 1, grads({1.0f, 1.0f}, {1.0f})));
  BOOST_REQUIRE(rule.offer(1, 1, grads({1.0f, 1.0f}, {1.0f})));
  BOOST_TEST(!rule.ready()); // waits for the rejoined worker 2 again
}

// Found by the simulator (seed 12141, sync, 3 workers, 2 shards): a worker killed after its push
// of step t and restarted pushed step t again and was refused ("pushed step 4 twice"); its dead
// process's gradient held its place. A lost worker's held gradient leaves with it.
BOOST_AUTO_TEST_CASE(a_lost_workers_held_gradient_leaves_with_it) {
  sync_rule rule{3, 3};
  BOOST_REQUIRE(rule.offer(2, 0, grads({9.0f, 9.0f}, {9.0f})));
  BOOST_TEST(!rule.lose(2)); // workers 0 and 1 have not pushed: not ready
  BOOST_TEST(rule.missing() == std::vector<uint32_t>({0, 1}));
  auto again = rule.offer(2, 0, grads({3.0f, 3.0f}, {3.0f})); // its restart
  BOOST_REQUIRE(again);
  BOOST_TEST((*again == sync_rule::verdict::accepted));
  BOOST_REQUIRE(rule.offer(0, 0, grads({3.0f, 3.0f}, {3.0f})));
  BOOST_REQUIRE(rule.offer(1, 0, grads({3.0f, 3.0f}, {3.0f})));
  BOOST_REQUIRE(rule.ready());
  auto done = rule.complete();
  BOOST_TEST(done.released == std::vector<uint32_t>({0, 1, 2}));
  BOOST_TEST(done.average[0].data.values[0] == 3.0f); // the dead process's 9 is not in it
}

BOOST_AUTO_TEST_CASE(ssp_blocks_a_worker_too_far_ahead_and_releases_it) {
  ssp_rule rule{3, 1}; // at most one step ahead of the slowest
  BOOST_TEST(rule.finished(0, 0) == 1u);
  BOOST_TEST(rule.may_continue(0));
  rule.finished(0, 1);
  BOOST_TEST(!rule.may_continue(0)); // 2 steps done, the slowest none
  BOOST_TEST(rule.slowest() == std::vector<uint32_t>({1, 2}));
  rule.finished(1, 0);
  BOOST_TEST(!rule.may_continue(0));
  rule.finished(2, 0);
  BOOST_TEST(rule.may_continue(0)); // the slowest finished step 0
}

BOOST_AUTO_TEST_CASE(ssp_with_zero_staleness_is_lock_step_and_ignores_lost_workers) {
  ssp_rule rule{2, 0};
  rule.finished(0, 0);
  BOOST_TEST(!rule.may_continue(0));
  rule.lose(1);
  BOOST_TEST(rule.may_continue(0));
}

BOOST_AUTO_TEST_CASE(ssp_after_a_restore_counts_each_worker_from_its_next_push) {
  ssp_rule rule{3, 1};
  rule.resume();                            // restored mid-run: the workers are at steps 40..42
  BOOST_TEST(rule.finished(0, 42) == 0u);   // nobody else pushed yet: nobody to wait for
  BOOST_TEST(rule.may_continue(0));
  BOOST_TEST(rule.finished(1, 40) == 0u);   // worker 1 is now the slowest known
  BOOST_TEST(!rule.may_continue(0));        // 43 done vs 41: two ahead
  BOOST_TEST(rule.slowest() == std::vector<uint32_t>({1}));
  rule.finished(1, 41);
  BOOST_TEST(rule.may_continue(0));
  // worker 2 (stopped before the restore) never pushes and holds nobody back
  BOOST_TEST(rule.slowest() == std::vector<uint32_t>({1}));
}


BOOST_AUTO_TEST_CASE(elastic_sync_aggregates_every_live_worker_and_a_joiner_counts_from_its_first_push) {
  sync_rule rule{6, 6, 2}; // ids 0..5, workers 0 and 1 configured, all live gradients averaged
  BOOST_TEST(rule.live_workers() == 2u);
  BOOST_TEST((*rule.offer(0, 0, grads({2.0f, 0.0f}, {0.0f})) == sync_rule::verdict::accepted));
  BOOST_TEST(!rule.ready());
  BOOST_TEST((*rule.offer(1, 0, grads({4.0f, 0.0f}, {0.0f})) == sync_rule::verdict::accepted));
  BOOST_TEST(rule.ready()); // the joiner-to-be (id 4) is not waited for before its first push
  rule.complete();
  BOOST_TEST((*rule.offer(4, 0, grads({1.0f, 0.0f}, {0.0f})) == sync_rule::verdict::stale)); // joins late
  BOOST_TEST(rule.live_workers() == 3u);
  rule.offer(0, 1, grads({3.0f, 0.0f}, {0.0f}));
  rule.offer(1, 1, grads({3.0f, 0.0f}, {0.0f}));
  BOOST_TEST(!rule.ready()); // now step 1 waits for the joiner too
  BOOST_TEST(rule.missing() == std::vector<uint32_t>({4}));
  rule.offer(4, 1, grads({6.0f, 0.0f}, {0.0f}));
  auto done = rule.complete();
  BOOST_TEST(done.average[0].data.values[0] == 4.0f); // (3 + 3 + 6) / 3
  BOOST_TEST(!rule.lose(1)); // worker 1 leaves: two live now
  rule.offer(0, 2, grads({1.0f, 0.0f}, {0.0f}));
  BOOST_TEST(!rule.ready());
  rule.offer(4, 2, grads({1.0f, 0.0f}, {0.0f}));
  BOOST_TEST(rule.ready());
}

BOOST_AUTO_TEST_CASE(elastic_sync_divides_the_sum_by_the_configured_workers) {
  sync_rule rule{6, 6, 2, 2}; // linear scaling: sum / 2 whatever the membership
  rule.offer(0, 0, grads({2.0f, 0.0f}, {0.0f}));
  BOOST_TEST(!rule.ready());
  rule.offer(1, 0, grads({4.0f, 0.0f}, {0.0f}));
  BOOST_TEST(rule.complete().average[0].data.values[0] == 3.0f); // two contributions: the average
  rule.offer(3, 1, grads({2.0f, 0.0f}, {0.0f})); // a joiner
  rule.offer(0, 1, grads({2.0f, 0.0f}, {0.0f}));
  rule.offer(1, 1, grads({2.0f, 0.0f}, {0.0f}));
  BOOST_TEST(rule.complete().average[0].data.values[0] == 3.0f); // three: 6 / 2, one and a half steps' worth
  rule.lose(1);
  rule.lose(3);
  rule.offer(0, 2, grads({2.0f, 0.0f}, {0.0f}));
  BOOST_TEST(rule.complete().average[0].data.values[0] == 1.0f); // one: 2 / 2, half a step
}

BOOST_AUTO_TEST_CASE(ssp_joiners_and_restarted_workers_enter_at_the_slowest_count) {
  ssp_rule rule{4, 1, 2}; // ids 0..3, workers 0 and 1 configured
  for (uint64_t s = 0; s < 50; ++s) {
    rule.finished(0, s);
    rule.finished(1, s);
  }
  BOOST_TEST(rule.finished(3, 0) == 1u); // a joiner's step 0 enters at 50 and counts 51, not 1
  BOOST_TEST(rule.may_continue(0));
  BOOST_TEST(rule.may_continue(3));
  rule.finished(3, 1);
  rule.finished(3, 2);                   // 53 on the rule's count: three ahead
  BOOST_TEST(!rule.may_continue(3));
  rule.lose(1);                          // worker 1 crashes; its restart counts from 0 again
  rule.finished(0, 50);                  // 51
  BOOST_TEST(rule.finished(1, 0) == 1u); // enters at the slowest live count (51) and counts 52
  BOOST_TEST(rule.slowest() == std::vector<uint32_t>({0}));
  BOOST_TEST(!rule.may_continue(3));     // 53 vs 51
  rule.finished(0, 51);
  BOOST_TEST(rule.may_continue(3));      // 53 vs 52
}

BOOST_AUTO_TEST_SUITE_END()
