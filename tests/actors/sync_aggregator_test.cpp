// Tests of actors/sync_aggregator against a real shard on the test coordinator: a step is applied
// once with the average, late gradients get a stale answer, a dead worker releases the step, and
// ssp holds a worker that runs ahead.
#include "actors/sync_aggregator.hpp"

#include "control/placement.hpp"
#include "tests/support/actor_fixture.hpp"

#include <caf/event_based_actor.hpp>
#include <cmath>
#include <caf/stateful_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

using namespace actorps;
using namespace actorps::test;

namespace {

using replies = std::shared_ptr<std::vector<push_reply>>;
using failures = std::shared_ptr<std::vector<caf::error>>;

// A stand-in worker: forwards each push_request it is sent to the aggregator, keeps the replies
// and the errors.
caf::behavior pusher(caf::event_based_actor* self, parameter_shard_actor agg, replies got, failures failed) {
  return {
    [=](push_request& req) {
      self->request(agg, caf::infinite, push_atom_v, std::move(req))
        .then([=](push_reply& r) { got->push_back(std::move(r)); },
              [=](caf::error& err) { failed->push_back(std::move(err)); });
    },
  };
}

// A shard that takes every request and never answers (a frozen process).
caf::behavior mute_shard(caf::event_based_actor* self) {
  auto held = std::make_shared<std::vector<caf::response_promise>>();
  self->set_default_handler([held](caf::scheduled_actor* me, caf::message_view&) -> caf::result<caf::message> {
    held->push_back(me->make_response_promise());
    return caf::delegated<caf::message>{};
  });
  return {[](int) {}};
}

struct aggregator_fixture : actor_fixture {
  parameter_shard_actor shard = keep(make_parameter_shard(*sys, {0}));
  std::vector<caf::actor> workers;
  std::vector<replies> got;
  std::vector<failures> failed;

  parameter_shard_actor start(sync_aggregator_config cfg) {
    return start(cfg, {0, {"round-robin", 1, {{"w", 1, 2}}, {{0, 0, 1, 0}}}, {"sgd", 1.0f}, cfg.workers,
                       {{0, 0, {{10.0f, 20.0f}}}}});
  }

  parameter_shard_actor start(sync_aggregator_config cfg, const shard_setup& setup) {
    auto agg = keep(make_sync_aggregator(*sys, cfg, shard));
    BOOST_REQUIRE(ask<setup_reply>(agg, init_atom_v, setup));
    for (uint32_t w = 0; w < cfg.workers; ++w) {
      got.push_back(std::make_shared<std::vector<push_reply>>());
      failed.push_back(std::make_shared<std::vector<caf::error>>());
      workers.push_back(keep(sys->spawn(pusher, agg, got.back(), failed.back())));
    }
    return agg;
  }

  // The shard holds a table of 4 rows of 2 (variable 0, rows 0-3 = 1, 2, ... 8) and w (variable 1: 10, 20).
  parameter_shard_actor start_table(sync_aggregator_config cfg) {
    variable_spec table{"embedding0/weights", 4, 2};
    table.table = true;
    shard_setup setup;
    setup.plan = make_placement({table, {"w", 1, 2}}, 1, placement_strategy::round_robin);
    setup.optimizer = {"sgd", 1.0f};
    setup.workers = cfg.workers;
    setup.initial = {{0, 0, {{1.0f, 2.0f, 3.0f, 4.0f, 5.0f, 6.0f, 7.0f, 8.0f}}}, {1, 0, {{10.0f, 20.0f}}}};
    return start(cfg, setup);
  }

  // Worker w's push of `step`: gradient g for each of w's values and each value of `rows`,
  // asking back the rows `reads` (cluster.rows-with-push).
  void push_rows(uint32_t w, uint64_t step, float g, std::vector<uint32_t> rows, std::vector<uint32_t> reads) {
    const auto n = static_cast<uint32_t>(rows.size());
    push_request req{w, step, {{1, 0, {{g, g}}}, {0, 0, {float_vector(2 * n, g)}, false, row_ids{std::move(rows)}}}, true, 0};
    if (!reads.empty())
      req.reads = {{0, 0, static_cast<uint32_t>(2 * reads.size()), row_ids{std::move(reads)}}};
    caf::anon_send(workers[w], std::move(req));
    sched->run();
  }

  void push(uint32_t w, uint64_t step, float g0, float g1) {
    caf::anon_send(workers[w], push_request{w, step, {{0, 0, {{g0, g1}}}}, true, 0});
    sched->run();
  }

  // Part `part` of 2 of worker w's push: the gradient g of w[offset] alone (cluster.push-bucket-bytes).
  static push_request part_of(uint32_t w, uint64_t step, uint32_t part, uint32_t offset, float g) {
    push_request req{w, step, {{0, offset, {{g}}}}, true, 0};
    req.part = part;
    req.parts = 2;
    return req;
  }

  void push_part(uint32_t w, uint64_t step, uint32_t part, uint32_t offset, float g) {
    caf::anon_send(workers[w], part_of(w, step, part, offset, g));
    sched->run();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(sync_aggregator, aggregator_fixture)

BOOST_AUTO_TEST_CASE(sync_applies_the_average_once_and_releases_everyone) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  push(1, 0, 4.0f, 2.0f);
  BOOST_TEST(got[1]->empty()); // held until the step is complete
  push(0, 0, 2.0f, 0.0f);
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u);
  for (auto& g : got) {
    auto& r = g->front();
    BOOST_TEST(r.version == 1u); // one update for the step
    BOOST_TEST(r.next_step == 1u);
    BOOST_TEST(!r.stale);
    BOOST_TEST((r.values[0].data == std::vector<float>({7.0f, 19.0f}))); // 10 - 3, 20 - 1
  }
  auto stats = ask<shard_stats>(agg, stats_atom_v);
  BOOST_TEST(stats->version == 1u);
  BOOST_TEST(stats->waited_on == std::vector<uint64_t>({1, 0}));
}

// Wait-free backprop: workers push a step in parts, last layers first. The step waits for every
// part of every worker, applies the same average as whole pushes would, and answers each part
// with the values of its own ranges.
BOOST_AUTO_TEST_CASE(a_push_in_parts_counts_once_all_its_parts_are_in) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  push_part(0, 0, 0, 1, 0.0f); // worker 0: w[1] first, then w[0]
  push_part(1, 0, 0, 1, 2.0f);
  push_part(1, 0, 1, 0, 4.0f); // worker 1 complete
  BOOST_TEST(got[0]->empty());
  BOOST_TEST(got[1]->empty());
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 0u); // nothing applied yet
  push_part(0, 0, 1, 0, 2.0f);
  for (auto& g : got) {
    BOOST_REQUIRE_EQUAL(g->size(), 2u);
    BOOST_REQUIRE_EQUAL((*g)[0].values.size(), 1u);
    BOOST_TEST((*g)[0].values[0].offset == 1u); // part 0: w[1] after the step
    BOOST_TEST(((*g)[0].values[0].data == std::vector<float>({19.0f})));
    BOOST_TEST((*g)[1].values[0].offset == 0u);
    BOOST_TEST(((*g)[1].values[0].data == std::vector<float>({7.0f}))); // as in the whole-push case above
    BOOST_TEST((*g)[1].version == 1u);
    BOOST_TEST((*g)[1].next_step == 1u);
  }
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 1u);
}

// Issue 32, item 5: a push of the wrong size (or a variable the shard does not hold, or a
// non-finite value) for the current step was held as that worker's gradient; the step then
// failed and the honest workers' pushes were dropped. It is refused before it counts, in sync
// and in ssp alike, and the step goes on with the honest pushes.
BOOST_AUTO_TEST_CASE(a_malformed_push_is_refused_before_it_counts) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  caf::anon_send(workers[0], push_request{0, 0, {{0, 0, {{1.0f, 2.0f, 3.0f}}}}, true, 0}); // 3 floats, w has 2
  sched->run();
  BOOST_REQUIRE_EQUAL(failed[0]->size(), 1u);
  BOOST_TEST(failed[0]->front() == errc::shape_mismatch);
  caf::anon_send(workers[0], push_request{0, 0, {{7, 0, {{1.0f}}}}, true, 0}); // a variable nobody holds
  sched->run();
  BOOST_REQUIRE_EQUAL(failed[0]->size(), 2u);
  BOOST_TEST(failed[0]->back() == errc::unknown_variable);
  caf::anon_send(workers[0], push_request{0, 0, {{0, 0, {{std::nanf(""), 1.0f}}}}, true, 0});
  sched->run();
  BOOST_REQUIRE_EQUAL(failed[0]->size(), 3u);
  BOOST_TEST(failed[0]->back() == errc::non_finite);
  push(1, 0, 4.0f, 2.0f);
  push(0, 0, 2.0f, 0.0f); // the honest push of worker 0 still counts for step 0
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u);
  BOOST_TEST(!got[0]->front().stale);
  BOOST_TEST((got[0]->front().values[0].data == std::vector<float>({7.0f, 19.0f})));
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 1u);
}

BOOST_AUTO_TEST_CASE(a_malformed_part_is_refused_before_the_assembly_holds_it) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  auto bad = part_of(0, 0, 0, 1, 0.0f);
  bad.grads[0].data = tensor_copy(std::vector<float>{1.0f, 2.0f}.data(), 2); // w[1..3) is past the end
  caf::anon_send(workers[0], bad);
  sched->run();
  BOOST_REQUIRE_EQUAL(failed[0]->size(), 1u);
  BOOST_TEST(failed[0]->front() == errc::shape_mismatch);
  push_part(0, 0, 0, 1, 0.0f); // the honest parts still make up worker 0's push of step 0
  push_part(0, 0, 1, 0, 2.0f);
  push_part(1, 0, 0, 1, 2.0f);
  push_part(1, 0, 1, 0, 4.0f);
  BOOST_TEST(got[0]->size() == 2u);
  BOOST_TEST(failed[1]->empty());
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 1u);
}

BOOST_AUTO_TEST_CASE(the_parts_of_a_push_too_late_for_its_step_are_answered_stale) {
  auto agg = start({0, train_mode::sync, 2, 1, 0, std::chrono::seconds(30)});
  push_part(1, 0, 0, 1, 100.0f); // worker 1 is slow: one part in
  push(0, 0, 2.0f, 2.0f);        // R = 1: worker 0 completes step 0 alone
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u); // the held part is answered stale at once
  BOOST_TEST(got[1]->front().stale);
  BOOST_TEST(got[1]->front().next_step == 1u);
  BOOST_TEST((got[1]->front().values[0].data == std::vector<float>({18.0f}))); // w[1], untouched by it
  push_part(1, 0, 1, 0, 100.0f); // and its last part too
  BOOST_REQUIRE_EQUAL(got[1]->size(), 2u);
  BOOST_TEST(got[1]->back().stale);
  BOOST_TEST((got[1]->back().values[0].data == std::vector<float>({8.0f})));
  auto stats = ask<shard_stats>(agg, stats_atom_v);
  BOOST_TEST(stats->version == 1u);
  BOOST_TEST(stats->stale_dropped == 1u); // one push dropped, in two parts
}

// cluster.rows-with-push in sync: a push asks back its worker's next batch's rows. They are read
// after the step's update (so they hold every contributor's rows, summed) and come after the
// values of the push's ranges, each worker its own; a push too late for its step gets the rows as
// they are. Reads that name no rows, or rows the shard does not hold, refuse the push before it
// counts: the step goes on with the honest pushes.
BOOST_AUTO_TEST_CASE(a_push_answers_with_the_rows_it_asks_back_read_after_the_steps_update) {
  auto agg = start_table({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  push_rows(0, 0, 2.0f, {1}, {1, 3});
  BOOST_TEST(got[0]->empty()); // held until the step is complete
  caf::anon_send(workers[1], [] {
    push_request bad{1, 0, {{1, 0, {{1.0f, 1.0f}}}}, true, 0};
    bad.reads = {{1, 0, 2}}; // (w's values: no rows)
    return bad;
  }());
  sched->run();
  caf::anon_send(workers[1], [] {
    push_request bad{1, 0, {{1, 0, {{1.0f, 1.0f}}}}, true, 0};
    bad.reads = {{0, 0, 2, row_ids{{4}}}}; // (past the table's 4 rows)
    return bad;
  }());
  sched->run();
  BOOST_REQUIRE_EQUAL(failed[1]->size(), 2u);
  BOOST_TEST(failed[1]->front() == errc::protocol_error);
  BOOST_TEST(failed[1]->back() == errc::shape_mismatch);
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 0u);
  push_rows(1, 0, 4.0f, {1, 2}, {0, 1});
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u);
  for (auto& g : got) {
    auto& r = g->front();
    BOOST_TEST(!r.stale);
    BOOST_TEST(r.next_step == 1u);
    BOOST_REQUIRE_EQUAL(r.values.size(), 2u);
    BOOST_TEST((r.values[0].data == std::vector<float>({7.0f, 17.0f}))); // w: 10 - 3, 20 - 3
    BOOST_TEST(r.values[1].by_rows());
  }
  // row 1 (3, 4) moved by the sum (2 + 4) / 2, row 2 (5, 6) by 4 / 2; rows 0 and 3 untouched
  BOOST_TEST(got[0]->front().values[1].rows.ids == std::vector<uint32_t>({1, 3}));
  BOOST_TEST((got[0]->front().values[1].data == std::vector<float>({0.0f, 1.0f, 7.0f, 8.0f})));
  BOOST_TEST(got[1]->front().values[1].rows.ids == std::vector<uint32_t>({0, 1}));
  BOOST_TEST((got[1]->front().values[1].data == std::vector<float>({1.0f, 2.0f, 0.0f, 1.0f})));
}

BOOST_AUTO_TEST_CASE(a_push_too_late_for_its_step_gets_the_rows_it_asks_back_as_they_are) {
  auto agg = start_table({0, train_mode::sync, 2, 1, 0, std::chrono::seconds(30)});
  push_rows(0, 0, 2.0f, {2}, {});    // R = 1: applied at once
  push_rows(1, 0, 100.0f, {2}, {2, 0}); // too late for step 0
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u);
  auto& r = got[1]->front();
  BOOST_TEST(r.stale);
  BOOST_REQUIRE_EQUAL(r.values.size(), 2u);
  BOOST_TEST((r.values[0].data == std::vector<float>({8.0f, 18.0f}))); // the dropped push changed nothing
  BOOST_TEST(r.values[1].rows.ids == std::vector<uint32_t>({2, 0}));
  BOOST_TEST((r.values[1].data == std::vector<float>({3.0f, 4.0f, 1.0f, 2.0f}))); // row 2 after step 0's 2
}

BOOST_AUTO_TEST_CASE(a_part_twice_or_outside_its_count_is_refused) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  BOOST_TEST(!ask<push_reply>(agg, push_atom_v, part_of(0, 0, 2, 0, 1.0f))); // part 2 of 2
  push_part(0, 0, 0, 1, 1.0f);
  push_part(0, 0, 0, 1, 1.0f); // the same part again, from worker 0 itself
  BOOST_REQUIRE_EQUAL(failed[0]->size(), 1u);
  BOOST_TEST(failed[0]->back() == errc::protocol_error);
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 0u);
}

// A push in parts that the sync rule refuses as a whole (here: the worker's second push of the
// step) answers every part with the error, not only the last: a part left unanswered would hold
// the worker until its request timeout.
BOOST_AUTO_TEST_CASE(a_refused_push_in_parts_answers_every_part_with_the_error) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  push(0, 0, 1.0f, 1.0f); // worker 0's push of step 0 (the step waits for worker 1)
  push_part(0, 0, 0, 1, 1.0f);
  push_part(0, 0, 1, 0, 1.0f); // step 0 again, in two parts: refused once both are in
  BOOST_TEST(got[0]->empty());
  BOOST_REQUIRE_EQUAL(failed[0]->size(), 2u);
  for (auto& err : *failed[0])
    BOOST_TEST(err.code() == static_cast<uint8_t>(errc::protocol_error));
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 0u);
}

BOOST_AUTO_TEST_CASE(a_backup_workers_late_gradients_are_dropped_and_it_is_told) {
  auto agg = start({0, train_mode::sync, 2, 1, 0, std::chrono::seconds(30)});
  push(0, 0, 2.0f, 2.0f); // R = 1: applied at once
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  push(1, 0, 100.0f, 100.0f); // too late for step 0
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u);
  auto& r = got[1]->front();
  BOOST_TEST(r.stale);
  BOOST_TEST(r.next_step == 1u);
  BOOST_TEST((r.values[0].data == std::vector<float>({8.0f, 18.0f}))); // the dropped push changed nothing
  auto stats = ask<shard_stats>(agg, stats_atom_v);
  BOOST_TEST(stats->stale_dropped == 1u);
  BOOST_TEST(stats->version == 1u);
}

// Issue 50, item 16: a stranger's push in a worker's name (a frozen ps node took it before the
// workers' own) made the sync rule close a step with it, and both workers' pushes were dropped
// as stale. A worker id belongs to the actor that pushed as it first until that actor goes down;
// a push as it from anyone else, or from no one, is refused and changes nothing.
BOOST_AUTO_TEST_CASE(a_strangers_push_in_a_workers_name_is_refused_and_changes_nothing) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  push(0, 0, 2.0f, 0.0f);
  push(1, 0, 4.0f, 2.0f); // step 0 applied: 7, 19
  auto stranger_got = std::make_shared<std::vector<push_reply>>();
  auto stranger_failed = std::make_shared<std::vector<caf::error>>();
  auto stranger = keep(sys->spawn(pusher, agg, stranger_got, stranger_failed));
  for (uint64_t step : {1, 5}) // the current step and one ahead of it, in both workers' names
    for (uint32_t w = 0; w < 2; ++w) {
      caf::anon_send(stranger, push_request{w, step, {{0, 0, {{100.0f, 100.0f}}}}, true, 0});
      sched->run();
    }
  caf::anon_send(agg, push_atom_v, push_request{0, 1, {{0, 0, {{100.0f, 100.0f}}}}, true, 0}); // no sender at all
  sched->run();
  BOOST_TEST(stranger_got->empty());
  BOOST_REQUIRE_EQUAL(stranger_failed->size(), 4u);
  for (auto& err : *stranger_failed)
    BOOST_TEST(err == errc::unknown_worker);
  BOOST_TEST(describe(stranger_failed->front()).find("is not worker 0") != std::string::npos,
             describe(stranger_failed->front()));
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 1u); // nothing applied
  push(0, 1, 2.0f, 2.0f);
  push(1, 1, 0.0f, 2.0f);
  for (uint32_t w = 0; w < 2; ++w) {
    BOOST_TEST(failed[w]->empty());
    BOOST_REQUIRE_EQUAL(got[w]->size(), 2u);
    BOOST_TEST(!got[w]->back().stale);
    BOOST_TEST((got[w]->back().values[0].data == std::vector<float>({6.0f, 17.0f}))); // 7 - 1, 19 - 2
  }
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->stale_dropped == 0u);
}

BOOST_AUTO_TEST_CASE(a_dead_worker_no_longer_holds_the_step) {
  auto agg = start({0, train_mode::sync, 3, 3, 0, std::chrono::seconds(30)});
  // The aggregator learns a worker's actor from its pushes: worker 1 takes part in step 0 and
  // dies before step 1.
  push(0, 0, 3.0f, 3.0f);
  push(2, 0, 1.0f, 1.0f);
  push(1, 0, 2.0f, 2.0f);
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u); // step 0 done with all three
  push(0, 1, 1.0f, 1.0f);
  push(2, 1, 3.0f, 3.0f);
  BOOST_TEST(got[0]->size() == 1u); // step 1 waits for worker 1
  caf::anon_send_exit(workers[1], caf::exit_reason::kill);
  sched->run();
  BOOST_REQUIRE_EQUAL(got[0]->size(), 2u);
  BOOST_TEST((got[0]->back().values[0].data == std::vector<float>({6.0f, 16.0f}))); // 8 - 2, 18 - 2
  BOOST_TEST(got[0]->back().next_step == 2u);
}

BOOST_AUTO_TEST_CASE(ssp_counts_a_step_in_parts_at_its_last_part) {
  auto agg = start({0, train_mode::ssp, 2, 2, 0, std::chrono::seconds(30)});
  push_part(0, 0, 0, 1, 1.0f);
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u); // applied and answered at once: the step is not over
  push_part(0, 0, 1, 0, 1.0f);
  BOOST_TEST(got[0]->size() == 1u); // now worker 0 is a step ahead: held for worker 1
  BOOST_TEST(ask<shard_stats>(agg, stats_atom_v)->version == 1u);
  push(1, 0, 1.0f, 1.0f);
  BOOST_TEST(got[0]->size() == 2u);
  BOOST_TEST(got[1]->size() == 1u);
}

BOOST_AUTO_TEST_CASE(ssp_holds_a_worker_that_runs_ahead) {
  auto agg = start({0, train_mode::ssp, 2, 2, 0, std::chrono::seconds(30)});
  push(0, 0, 1.0f, 1.0f);
  BOOST_TEST(got[0]->empty()); // lock-step: waits for worker 1's step 0
  auto stats = ask<shard_stats>(agg, stats_atom_v);
  BOOST_TEST(stats->version == 1u); // but its gradients were applied at once
  BOOST_TEST(stats->waited_on == std::vector<uint64_t>({0, 1}));
  push(1, 0, 1.0f, 1.0f);
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u);
  BOOST_TEST(got[1]->front().version == 2u);
}

// cluster.rows-with-push in ssp: the rows a push asks back come with its answer, read when the
// answer goes -- after a wait for the slowest worker, so they hold the updates pushed meanwhile --
// not when the push is applied. They ride a push's last part: a part before it that asks rows
// back (ssp answers it at once) is refused.
BOOST_AUTO_TEST_CASE(ssp_reads_the_rows_a_held_push_asks_back_when_its_answer_goes) {
  auto agg = start_table({0, train_mode::ssp, 2, 2, 0, std::chrono::seconds(30)});
  push_rows(0, 0, 2.0f, {1}, {1, 2});
  BOOST_TEST(got[0]->empty()); // lock-step: waits for worker 1's step 0
  push_rows(1, 0, 4.0f, {2}, {});
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  auto& r = got[0]->front();
  BOOST_REQUIRE_EQUAL(r.values.size(), 2u);
  BOOST_TEST(r.values[1].rows.ids == std::vector<uint32_t>({1, 2}));
  // row 1 (3, 4) after worker 0's 2; row 2 (5, 6) after worker 1's 4, pushed while worker 0 waited
  BOOST_TEST((r.values[1].data == std::vector<float>({1.0f, 2.0f, 1.0f, 2.0f})));
  caf::anon_send(workers[1], [] {
    push_request early{1, 1, {{1, 0, {{1.0f, 1.0f}}}}, true, 0};
    early.parts = 2;
    early.reads = {{0, 0, 2, row_ids{{0}}}};
    return early;
  }());
  sched->run();
  BOOST_REQUIRE_EQUAL(failed[1]->size(), 1u);
  BOOST_TEST(describe(failed[1]->front())
             == "protocol_error: shard 0: worker 1 asks rows back with part 0 of 2; they ride a push's last part");
}

// Issue 32, item 4: the step timer read the wall clock (steady_clock::now()), so no test could
// drive cluster.step-timeout. On the actor's clock: a worker silent for the step timeout while
// another waits no longer holds the step.
BOOST_AUTO_TEST_CASE(sync_goes_on_without_a_worker_silent_for_the_step_timeout) {
  auto agg = start({0, train_mode::sync, 2, 2, 0, std::chrono::seconds(30)});
  push(1, 0, 4.0f, 2.0f);
  sched->advance_time(std::chrono::seconds(20));
  sched->run();
  BOOST_TEST(got[1]->empty()); // not yet
  sched->advance_time(std::chrono::seconds(11));
  sched->run();
  BOOST_REQUIRE_EQUAL(got[1]->size(), 1u);
  BOOST_TEST(got[1]->front().version == 1u);
  BOOST_TEST((got[1]->front().values[0].data == std::vector<float>({6.0f, 18.0f}))); // worker 1's alone
  push(0, 0, 1.0f, 1.0f); // the silent worker comes back: stale, told the step
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  BOOST_TEST(got[0]->front().stale);
}

// Found by the simulator (seed 6868, ssp): a worker that never pushed -- it died first, or was
// restarted with no steps left -- is never seen going down by the aggregator and parked the
// others for good. The same step timeout applies: the silent slowest worker is let go.
BOOST_AUTO_TEST_CASE(ssp_lets_go_of_a_slowest_worker_silent_for_the_step_timeout) {
  auto agg = start({0, train_mode::ssp, 2, 0, 0, std::chrono::seconds(30)});
  push(0, 0, 1.0f, 1.0f);
  BOOST_TEST(got[0]->empty()); // waits for worker 1, which never pushes
  sched->advance_time(std::chrono::seconds(31));
  sched->run();
  BOOST_REQUIRE_EQUAL(got[0]->size(), 1u);
  push(0, 1, 1.0f, 1.0f);
  BOOST_TEST(got[0]->size() == 2u); // worker 1 no longer counts until it pushes
  push(1, 0, 1.0f, 1.0f); // it enters at the slowest count (2), its step on top: one ahead, held
  BOOST_TEST(got[1]->empty());
  push(0, 2, 1.0f, 1.0f); // lock-step again
  BOOST_TEST(got[0]->size() == 3u);
  BOOST_TEST(got[1]->size() == 1u);
}

// Issue 11, item 8: the aggregator asked its shard with caf::infinite; a frozen shard held every
// push, pull, setup and stats request forever.
BOOST_AUTO_TEST_CASE(requests_to_a_frozen_shard_fail_at_the_request_timeout) {
  sync_aggregator_config cfg{0, train_mode::sync, 1, 1, 0, std::chrono::seconds(30), std::chrono::seconds(5)};
  auto mute = keep(sys->spawn(mute_shard));
  auto agg = keep(make_sync_aggregator(*sys, cfg, caf::actor_cast<parameter_shard_actor>(mute)));
  auto failed = std::make_shared<caf::error>();
  keep(sys->spawn([agg, failed](caf::event_based_actor* me) {
    me->request(agg, caf::infinite, stats_atom_v).then([](shard_stats&) {}, [failed](caf::error& e) { *failed = e; });
  }));
  sched->run();
  BOOST_TEST(!*failed); // still waiting
  sched->advance_time(std::chrono::seconds(6));
  sched->run();
  BOOST_TEST((*failed == caf::sec::request_timeout), caf::to_string(*failed));
}

BOOST_AUTO_TEST_SUITE_END()
