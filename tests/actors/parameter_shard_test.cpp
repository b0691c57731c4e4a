// Tests of actors/parameter_shard (and parameter_store beneath it): each handler's happy path and
// bad input with the exact error, state untouched by rejected messages.
#include "actors/parameter_shard.hpp"

#include "control/placement.hpp"
#include "control/slicing.hpp"
#include "control/parameter_store.hpp"
#include "model/init.hpp"
#include "model/model_spec.hpp"
#include "tests/support/actor_fixture.hpp"

#include <cmath>
#include <limits>

using namespace actorps;
using namespace actorps::test;

namespace {

// Two shards, four variables of a tiny model; shard 1 holds variables 1 and 3.
struct shard_fixture : actor_fixture {
  placement_plan plan = make_placement({{"layer0/weights", 2, 3}, {"layer0/bias", 1, 3},
                                        {"logits/weights", 3, 2}, {"logits/bias", 1, 2}},
                                       2, placement_strategy::round_robin);
  parameter_shard_actor shard = keep(make_parameter_shard(*sys, {1}));

  shard_setup setup_for_shard1() {
    shard_setup s;
    s.shard = 1;
    s.plan = plan;
    s.optimizer = {"sgd", 0.5f};
    s.workers = 2;
    s.initial = {{1, 0, {{1.0f, 2.0f, 3.0f}}}, {3, 0, {{4.0f, 5.0f}}}};
    return s;
  }

  void init() { BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, setup_for_shard1())); }

  std::vector<float> values_of(uint32_t var, uint32_t count) {
    auto r = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{var, 0, count}}});
    BOOST_REQUIRE_MESSAGE(r, error_text(r));
    return r->slices.at(0).data.to_vector();
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(parameter_shard, shard_fixture)

BOOST_AUTO_TEST_CASE(a_shard_restored_from_its_snapshot_goes_on_identically) {
  auto setup = setup_for_shard1();
  setup.optimizer = {"adam", 0.1f, 0.9f, 0.9f, 0.999f, 1e-8f};
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, setup));
  push_request push{0, 1, {{1, 0, {{1.0f, -2.0f, 0.5f}}}, {3, 0, {{0.25f, 3.0f}}}}};
  for (int i = 0; i < 3; ++i)
    BOOST_REQUIRE(ask<push_reply>(shard, push_atom_v, push));
  auto snap = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_REQUIRE_MESSAGE(snap, error_text(snap));
  BOOST_TEST(snap->version == 3u);
  BOOST_TEST(snap->values.size() == 2u);
  BOOST_TEST(snap->slot1.size() == 2u); // Adam keeps two slots
  // a new shard set up from the snapshot (what the chief does from a checkpoint)
  auto restored = keep(make_parameter_shard(*sys, {1}));
  auto from = setup;
  from.initial = snap->values;
  from.slot0 = snap->slot0;
  from.slot1 = snap->slot1;
  from.version = snap->version;
  BOOST_REQUIRE(ask<setup_reply>(restored, init_atom_v, from));
  auto a = ask<push_reply>(shard, push_atom_v, push);
  auto b = ask<push_reply>(restored, push_atom_v, push);
  BOOST_REQUIRE(a && b);
  BOOST_TEST(a->version == b->version); // 4: Adam's bias correction continues from the version
  auto again = ask<shard_snapshot>(restored, save_atom_v);
  auto original = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_TEST((again->values == original->values)); // bit for bit
  BOOST_TEST((again->slot0 == original->slot0));
  BOOST_TEST((again->slot1 == original->slot1));
  // a slot of the wrong size is refused before anything changes
  auto bad = setup;
  bad.slot0 = {{1, 0, {{1.0f}}}};
  auto fresh = keep(make_parameter_shard(*sys, {1}));
  auto refused = ask<setup_reply>(fresh, init_atom_v, bad);
  BOOST_TEST(refused.error() == errc::shape_mismatch);
  BOOST_TEST(ask<shard_snapshot>(fresh, save_atom_v).error() == errc::not_initialized);
}

BOOST_AUTO_TEST_CASE(a_kept_snapshot_is_read_a_piece_at_a_time_while_pushes_go_on) {
  auto setup = setup_for_shard1();
  setup.optimizer = {"adam", 0.1f, 0.9f, 0.9f, 0.999f, 1e-8f};
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, setup));
  push_request push{0, 1, {{1, 0, {{1.0f, -2.0f, 0.5f}}}, {3, 0, {{0.25f, 3.0f}}}}};
  for (int i = 0; i < 2; ++i)
    BOOST_REQUIRE(ask<push_reply>(shard, push_atom_v, push));
  auto whole = ask<shard_snapshot>(shard, save_atom_v);
  auto layout = ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::hold, 7});
  BOOST_REQUIRE_MESSAGE(layout, error_text(layout));
  BOOST_TEST(layout->version == 2u);
  BOOST_REQUIRE_EQUAL(layout->values.size(), 2u);
  BOOST_REQUIRE_EQUAL(layout->slot1.size(), 2u);
  BOOST_REQUIRE(ask<push_reply>(shard, push_atom_v, push)); // (the kept snapshot stays as it was)
  for (uint32_t which = 0; which < 3; ++which) {
    const auto& ranges = which == 0 ? layout->values : which == 1 ? layout->slot0 : layout->slot1;
    const auto& want = which == 0 ? whole->values : which == 1 ? whole->slot0 : whole->slot1;
    for (size_t j = 0; j < ranges.size(); ++j) {
      auto r = ranges[j];
      BOOST_TEST(r.count == want[j].data.values.size());
      r.offset += 1; // the range's last values
      r.count -= 1;
      auto got = ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::read, 7, which, r});
      BOOST_REQUIRE_MESSAGE(got, error_text(got));
      auto values = got->piece.data.to_vector();
      BOOST_TEST(values == std::vector<float>(want[j].data.values.begin() + 1, want[j].data.values.end()));
    }
  }
  auto beyond = layout->values[0];
  beyond.count += 1;
  BOOST_TEST(ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::read, 7, 0, beyond}).error()
             == errc::unknown_variable);
  // the next save's hold (the pushes since in it) releases the one kept: a ps node holds its
  // part twice at most, whatever happened to the save before
  auto later = ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::hold, 8});
  BOOST_REQUIRE(later);
  BOOST_TEST(later->version == 3u);
  auto read = [&](uint64_t id) {
    return ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::read, id, 0, layout->values[0]});
  };
  BOOST_TEST(read(7).error() == errc::protocol_error);
  BOOST_TEST(static_cast<bool>(read(8)));
  BOOST_REQUIRE(ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::drop, 7})); // (not kept: nothing)
  BOOST_TEST(static_cast<bool>(read(8)));
  BOOST_REQUIRE(ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::drop, 8}));
  BOOST_TEST(read(8).error() == errc::protocol_error);
}

// A restore too large for one message: the setup announces pieces, which fill the parts in order;
// until the last one the shard serves nothing, and a piece out of place changes nothing.
BOOST_AUTO_TEST_CASE(a_restore_in_pieces_serves_once_its_last_piece_is_in) {
  auto setup = setup_for_shard1();
  setup.optimizer = {"momentum", 0.5f, 0.9f};
  setup.initial.clear();
  setup.pieces = true;
  setup.version = 12;
  auto reply = ask<setup_reply>(shard, init_atom_v, setup);
  BOOST_REQUIRE_MESSAGE(reply, error_text(reply));
  BOOST_TEST(reply->version == 12u);
  BOOST_TEST(!reply->already_initialized);
  auto pull = [&] { return ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{1, 0, 3}}}); };
  BOOST_TEST(pull().error() == errc::not_initialized);
  auto piece = [&](uint32_t which, uint32_t var, uint32_t offset, std::vector<float> v) {
    return ask<setup_reply>(shard, init_atom_v, setup_piece{which, {var, offset, {std::move(v)}}, false});
  };
  auto last = [&] { return ask<setup_reply>(shard, init_atom_v, setup_piece{0, {}, true}); };
  BOOST_REQUIRE(piece(0, 1, 0, {1.0f, 2.0f}));                              // layer0/bias, its first two
  BOOST_TEST(piece(0, 1, 0, {9.0f}).error() == errc::shape_mismatch);        // (again from its start: out of order)
  BOOST_TEST(piece(0, 1, 2, {9.0f, 9.0f}).error() == errc::shape_mismatch); // (past the part's end)
  BOOST_TEST(piece(0, 0, 0, {9.0f}).error() == errc::unknown_variable);     // (a variable shard 0 holds)
  BOOST_TEST(piece(1, 1, 0, {std::nanf("")}).error() == errc::non_finite);
  BOOST_REQUIRE(piece(0, 1, 2, {3.0f}));
  BOOST_REQUIRE(piece(1, 1, 0, {0.5f, 0.5f, 0.5f}));                        // its momentum
  BOOST_TEST(last().error() == errc::shape_mismatch); // logits/bias's values have not come
  BOOST_TEST(pull().error() == errc::not_initialized);
  BOOST_REQUIRE(piece(0, 3, 0, {4.0f, 5.0f}));
  BOOST_REQUIRE(last());
  auto values = pull();
  BOOST_REQUIRE_MESSAGE(values, error_text(values));
  BOOST_TEST(values->slices.at(0).data.to_vector() == std::vector<float>({1.0f, 2.0f, 3.0f}));
  auto snap = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_REQUIRE(snap);
  BOOST_TEST(snap->version == 12u);
  BOOST_TEST(snap->slot0.at(0).data.to_vector() == std::vector<float>({0.5f, 0.5f, 0.5f}));
  BOOST_TEST(snap->slot0.at(1).data.to_vector() == std::vector<float>({0.0f, 0.0f})); // (not sent: its start)
  BOOST_TEST(last().error() == errc::not_initialized); // (no restore under way)
}

BOOST_AUTO_TEST_CASE(init_once_then_keeps_its_values) {
  auto first = ask<setup_reply>(shard, init_atom_v, setup_for_shard1());
  BOOST_REQUIRE(first);
  BOOST_TEST(!first->already_initialized);
  BOOST_REQUIRE(ask<push_reply>(shard, push_atom_v, push_request{0, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}}));
  auto again = setup_for_shard1();
  again.initial[0].data.values = {9.0f, 9.0f, 9.0f};
  auto second = ask<setup_reply>(shard, init_atom_v, again);
  BOOST_REQUIRE(second);
  BOOST_TEST(second->already_initialized);
  BOOST_TEST(second->version == 1u);
  BOOST_TEST(values_of(1, 3) == std::vector<float>({0.5f, 1.5f, 2.5f}));
}

BOOST_AUTO_TEST_CASE(init_rejects_a_value_for_another_shards_variable) {
  auto s = setup_for_shard1();
  s.initial.push_back({0, 0, {std::vector<float>(6, 0.0f)}});
  auto r = ask<setup_reply>(shard, init_atom_v, s);
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error() == errc::unknown_variable);
  BOOST_TEST(describe(r.error()) == "unknown_variable: shard 1: initial value for variable 0 at offset 0, which this shard does not hold");
  // still uninitialised: a later correct setup works
  BOOST_TEST(!ask<setup_reply>(shard, init_atom_v, setup_for_shard1())->already_initialized);
}

BOOST_AUTO_TEST_CASE(init_rejects_wrong_sizes_and_missing_values) {
  auto s = setup_for_shard1();
  s.initial[1].data.values.push_back(6.0f);
  auto r = ask<setup_reply>(shard, init_atom_v, s);
  BOOST_TEST(describe(r.error()) == "shape_mismatch: shard 1: initial value of logits/bias has 3 floats, expected 2");
  s = setup_for_shard1();
  s.initial.pop_back();
  r = ask<setup_reply>(shard, init_atom_v, s);
  BOOST_TEST(describe(r.error()) == "invalid_argument: shard 1: no initial value for logits/bias");
  s = setup_for_shard1();
  s.shard = 0;
  r = ask<setup_reply>(shard, init_atom_v, s);
  BOOST_TEST(describe(r.error()) == "invalid_argument: setup for shard 0 sent to shard 1");
}

BOOST_AUTO_TEST_CASE(pull_returns_ranges_and_version) {
  init();
  auto r = ask<pull_reply>(shard, pull_atom_v, pull_request{1, {{3, 1, 1}, {1, 0, 3}}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->version == 0u);
  BOOST_REQUIRE_EQUAL(r->slices.size(), 2u);
  BOOST_TEST(r->slices[0].variable == 3u);
  BOOST_TEST(r->slices[0].offset == 1u);
  BOOST_TEST(r->slices[0].data.values == std::vector<float>({5.0f}));
  BOOST_TEST(r->slices[1].data.values == std::vector<float>({1.0f, 2.0f, 3.0f}));
}

BOOST_AUTO_TEST_CASE(pull_bad_input_is_named) {
  auto r = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{1, 0, 3}}});
  BOOST_TEST(describe(r.error()) == "not_initialized: shard 1 is not initialised yet");
  init();
  r = ask<pull_reply>(shard, pull_atom_v, pull_request{2, {{1, 0, 3}}});
  BOOST_TEST(describe(r.error()) == "unknown_worker: shard 1: worker 2 is not in the cluster (2 workers)");
  r = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{0, 0, 6}}});
  BOOST_TEST(describe(r.error()) == "unknown_variable: shard 1 does not hold variable 0");
  r = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{1, 2, 2}}});
  BOOST_TEST(describe(r.error()) == "shape_mismatch: shard 1: layer0/bias range [2, 4) is outside the values held here: [0, 3)");
}

// Issue 32, item 8: a pull of 1,000 ranges was answered with ~478 MiB in one reply. One pull may
// ask for each value the shard holds at most once in all.
BOOST_AUTO_TEST_CASE(a_pull_may_not_ask_for_more_than_the_shard_holds) {
  init();
  auto r = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{1, 0, 3}, {3, 0, 2}}}); // everything: fine
  BOOST_TEST(static_cast<bool>(r));
  r = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{1, 0, 3}, {1, 0, 3}}});
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error())
             == "invalid_argument: shard 1: worker 0 asks for 6 floats in one pull; the shard holds 5");
}

// Issue 32, item 8: a reply precision outside the enum was applied but never answered, and a
// top-k share of -5 or NaN was accepted. Refused, state untouched.
BOOST_AUTO_TEST_CASE(a_push_with_bad_reply_options_is_refused) {
  init();
  push_request bad{0, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}, true};
  bad.reply_precision = static_cast<wire_precision>(7);
  auto r = ask<push_reply>(shard, push_atom_v, bad);
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error()) == "protocol_error: shard 1: worker 0 asked for reply precision 7 (0 fp32, 1 bf16, 2 fp16)");
  for (double topk : {-5.0, std::nan(""), 1.5}) {
    push_request odd{0, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}, true};
    odd.reply_topk = topk;
    r = ask<push_reply>(shard, push_atom_v, odd);
    BOOST_REQUIRE(!r);
    BOOST_TEST(r.error() == errc::invalid_argument);
  }
  BOOST_TEST(values_of(1, 3) == std::vector<float>({1.0f, 2.0f, 3.0f}));
  BOOST_TEST(ask<shard_stats>(shard, stats_atom_v)->version == 0u);
}

BOOST_AUTO_TEST_CASE(a_shard_holds_parts_of_a_partitioned_variable_by_their_offsets) {
  // a 5x2 variable in parts of rows [0, 2), [2, 4), [4, 5) on 2 shards: shard 1 holds rows
  // [2, 4) -- the values at offsets [4, 8) of the whole variable -- and the bias
  auto split = make_placement({{"w", 5, 2}, {"b", 1, 2}}, 2, placement_strategy::round_robin, {partitioner::rule::fixed, 3});
  BOOST_REQUIRE_EQUAL(split.parts.size(), 4u);
  BOOST_REQUIRE(parts_of(split, 1) == std::vector<uint32_t>({1, 3}));
  shard_setup s;
  s.shard = 1;
  s.plan = split;
  s.optimizer = {"sgd", 0.5f};
  s.workers = 1;
  s.initial = {{0, 4, {{1.0f, 2.0f, 3.0f, 4.0f}}}, {1, 0, {{5.0f, 6.0f}}}};
  auto missing = s;
  missing.initial.pop_back();
  auto r = ask<setup_reply>(shard, init_atom_v, missing);
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error()) == "invalid_argument: shard 1: no initial value for b");
  auto elsewhere = s; // rows [0, 2) are shard 0's
  elsewhere.initial[0].offset = 0;
  r = ask<setup_reply>(shard, init_atom_v, elsewhere);
  BOOST_REQUIRE(!r);
  BOOST_TEST(r.error() == errc::unknown_variable);
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  // pulls and pushes address the whole variable's offsets
  auto pulled = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{0, 5, 2}}});
  BOOST_REQUIRE_MESSAGE(pulled, error_text(pulled));
  BOOST_TEST(pulled->slices.at(0).data.to_vector() == std::vector<float>({2.0f, 3.0f}));
  auto outside = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{0, 6, 4}}});
  BOOST_REQUIRE(!outside);
  BOOST_TEST(describe(outside.error()) == "shape_mismatch: shard 1: w/part_1 range [6, 10) is outside the values held here: [4, 8)");
  auto pushed = ask<push_reply>(shard, push_atom_v, push_request{0, 0, {{0, 4, {{2.0f, 2.0f, 2.0f, 2.0f}}}}, true});
  BOOST_REQUIRE_MESSAGE(pushed, error_text(pushed));
  BOOST_TEST(pushed->values.at(0).offset == 4u);
  BOOST_TEST(pushed->values.at(0).data.to_vector() == std::vector<float>({0.0f, 1.0f, 2.0f, 3.0f}));
  auto snap = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_REQUIRE_MESSAGE(snap, error_text(snap));
  BOOST_REQUIRE_EQUAL(snap->values.size(), 2u);
  BOOST_TEST(snap->values[0].variable == 0u);
  BOOST_TEST(snap->values[0].offset == 4u);
  BOOST_TEST(snap->values[1].variable == 1u);
}

namespace {

// An 8 x 2 embedding table and a 1 x 2 bias on 2 shards: the table in two parts of 4 rows each
// (rows [4, 8) -- offsets [8, 16) -- on shard 1), the bias on shard 0.
shard_setup table_setup(const std::string& optimizer) {
  variable_spec table{"embedding0/weights", 8, 2};
  table.table = true;
  shard_setup s;
  s.shard = 1;
  s.plan = make_placement({table, {"logits/bias", 1, 2}}, 2, placement_strategy::round_robin);
  s.optimizer = {optimizer, 0.5f};
  s.workers = 2;
  s.initial = {{0, 8, {{4.0f, 4.5f, 5.0f, 5.5f, 6.0f, 6.5f, 7.0f, 7.5f}}}};
  return s;
}

} // namespace

// A save's snapshot of a table is kept by copy-on-write: the rows pushed after the hold are read
// as they were at it, and only those rows (with their Adagrad slot) are kept beside the store.
BOOST_AUTO_TEST_CASE(a_held_table_keeps_the_rows_written_since_as_they_were) {
  auto s = table_setup("adagrad");
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  auto before = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_REQUIRE_MESSAGE(before, error_text(before));
  auto layout = ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::hold, 3});
  BOOST_REQUIRE_MESSAGE(layout, error_text(layout));
  BOOST_REQUIRE_EQUAL(layout->values.size(), 1u); // (rows [4, 8) of the table: floats [8, 16))
  BOOST_REQUIRE_EQUAL(layout->slot0.size(), 1u);
  for (int i = 0; i < 3; ++i) // rows 5 and 7, three times: kept once
    BOOST_REQUIRE(ask<push_reply>(shard, push_atom_v, push_request{0, 0, {{0, 8, {{2.0f, -2.0f, 1.0f, 1.0f}}, false,
                                                                             row_ids{{5, 7}}}}}));
  auto now = ask<pull_reply>(shard, pull_atom_v, pull_request{chief_worker_id, {{0, 8, 8}}});
  BOOST_REQUIRE(now);
  BOOST_TEST(now->slices.at(0).data.to_vector() != before->values.at(0).data.to_vector()); // (the rows moved)
  for (uint32_t which : {0u, 1u}) {
    const auto& range = which == 0 ? layout->values[0] : layout->slot0[0];
    auto got = ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::read, 3, which, range});
    BOOST_REQUIRE_MESSAGE(got, error_text(got));
    const auto& want = which == 0 ? before->values.at(0) : before->slot0.at(0);
    BOOST_TEST(got->piece.data.to_vector() == want.data.to_vector(), boost::test_tools::per_element());
    BOOST_TEST(got->version == 0u);
  }
  actorps::test::stderr_capture log;
  BOOST_REQUIRE(ask<snapshot_piece>(shard, save_atom_v, snapshot_read{snapshot_op::drop, 3}));
  // (2 rows of 2 values and their accumulator)
  BOOST_TEST(log.text().find("save 3's snapshot released (it had kept 32 bytes that pushes wrote during the save)")
             != std::string::npos, log.text());
}

BOOST_AUTO_TEST_CASE(a_table_is_pulled_and_pushed_by_rows) {
  auto s = table_setup("sgd");
  BOOST_REQUIRE_EQUAL(s.plan.parts.size(), 3u);
  BOOST_TEST(s.plan.parts[1].row_begin == 4);
  BOOST_TEST(s.plan.parts[1].shard == 1u);
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  // a row pulled is the row stored, in the order asked
  auto rows = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{0, 8, 4, row_ids{{6, 4}}}}});
  BOOST_REQUIRE_MESSAGE(rows, error_text(rows));
  BOOST_TEST(rows->slices.at(0).rows.ids == std::vector<uint32_t>({6, 4}));
  BOOST_TEST(rows->slices.at(0).data.to_vector() == std::vector<float>({6.0f, 6.5f, 4.0f, 4.5f}));
  // a push moves its rows alone, and is answered without values (the next batch names others)
  push_request push{0, 0, {{0, 8, {{2.0f, -2.0f}}, false, row_ids{{5}}}}, true};
  auto pushed = ask<push_reply>(shard, push_atom_v, push);
  BOOST_REQUIRE_MESSAGE(pushed, error_text(pushed));
  BOOST_TEST(pushed->values.empty());
  BOOST_TEST(pushed->version == 1u);
  auto whole = ask<pull_reply>(shard, pull_atom_v, pull_request{chief_worker_id, {{0, 8, 8}}});
  BOOST_REQUIRE_MESSAGE(whole, error_text(whole));
  BOOST_TEST(whole->slices.at(0).data.to_vector()
             == std::vector<float>({4.0f, 4.5f, 4.0f, 6.5f, 6.0f, 6.5f, 7.0f, 7.5f}));
}

// The chief sends no table: a shard makes its part from the seed, the rows initial_values makes.
BOOST_AUTO_TEST_CASE(a_shard_makes_its_part_of_a_table_from_the_seed) {
  auto s = table_setup("sgd");
  s.initial.clear();
  BOOST_TEST(!ask<setup_reply>(shard, init_atom_v, s)); // (nothing to make it from)
  s.generated = {0};
  s.table_seed = 11;
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  std::vector<float> want(4 * 2);
  table_rows_initial(11, 4, 4, 2, want.data());
  auto whole = ask<pull_reply>(shard, pull_atom_v, pull_request{chief_worker_id, {{0, 8, 8}}});
  BOOST_REQUIRE_MESSAGE(whole, error_text(whole));
  BOOST_TEST(whole->slices.at(0).data.to_vector() == want);
}

// Split by mod, shard 1's part holds rows 1, 3, 5, 7: made from the seed, they are those rows.
BOOST_AUTO_TEST_CASE(a_part_split_by_mod_makes_every_other_row) {
  auto s = table_setup("sgd");
  variable_spec table{"embedding0/weights", 8, 2};
  table.table = true;
  s.plan = make_placement({table, {"logits/bias", 1, 2}}, 2, placement_strategy::round_robin, {}, "mod");
  s.initial.clear();
  s.generated = {0};
  s.table_seed = 3;
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  std::vector<float> all(8 * 2), want;
  table_rows_initial(3, 0, 8, 2, all.data());
  for (int r : {1, 3, 5, 7})
    want.insert(want.end(), all.begin() + 2 * r, all.begin() + 2 * r + 2);
  auto held = ask<pull_reply>(shard, pull_atom_v, pull_request{chief_worker_id, {{0, 8, 8}}});
  BOOST_REQUIRE_MESSAGE(held, error_text(held));
  BOOST_TEST(held->slices.at(0).data.to_vector() == want);
}

BOOST_AUTO_TEST_CASE(row_slices_outside_their_part_or_of_a_dense_variable_change_nothing) {
  auto s = table_setup("momentum");
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  auto before = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_REQUIRE(before);
  auto refused = [&](push_request req) {
    auto r = ask<push_reply>(shard, push_atom_v, req);
    BOOST_REQUIRE(!r);
    return describe(r.error());
  };
  // row 3 is shard 0's; the first slice is fine, so nothing of it may be applied either
  BOOST_TEST(refused({0, 0, {{0, 8, {{1.0f, 1.0f}}, false, row_ids{{4}}}, {0, 8, {{1.0f, 1.0f}}, false, row_ids{{3}}}}})
             == "shape_mismatch: shard 1: row 3 is outside embedding0/weights/part_1 (rows [4, 8))");
  BOOST_TEST(refused({0, 0, {{0, 8, {{1.0f, 1.0f, 1.0f}}, false, row_ids{{4}}}}})
             == "shape_mismatch: shard 1: 1 rows of embedding0/weights/part_1 with 3 values (2 per row)");
  BOOST_TEST(refused({0, 0, {{0, 0, {{1.0f, 1.0f}}, false, row_ids{{4}}}}})
             == "shape_mismatch: shard 1: no part of embedding0/weights/part_1 starts at offset 0");
  BOOST_TEST(refused({0, 0, {{1, 0, {{1.0f, 1.0f}}, false, row_ids{{0}}}}})
             == "unknown_variable: shard 1 does not hold variable 1");
  auto nan = std::numeric_limits<float>::quiet_NaN();
  BOOST_TEST(refused({0, 0, {{0, 8, {{nan, 1.0f}}, false, row_ids{{4}}}}})
             == "non_finite: shard 1: gradient of embedding0/weights/part_1 from worker 0 is not finite");
  auto pulled = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{0, 8, 2, row_ids{{9}}}}});
  BOOST_TEST(!pulled);
  auto after = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_TEST((after->values == before->values));
  BOOST_TEST((after->slot0 == before->slot0));
  BOOST_TEST(after->version == 0u);
  // rows of a variable that is not a table (shard 0 holds the bias)
  auto dense = keep(make_parameter_shard(*sys, {0}));
  auto s0 = s;
  s0.shard = 0;
  s0.initial = {{0, 0, {std::vector<float>(8, 1.0f)}}, {1, 0, {{1.0f, 2.0f}}}};
  BOOST_REQUIRE(ask<setup_reply>(dense, init_atom_v, s0));
  auto r = ask<push_reply>(dense, push_atom_v, push_request{0, 0, {{1, 0, {{1.0f, 1.0f}}, false, row_ids{{0}}}}});
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error())
             == "protocol_error: shard 0: logits/bias is not an embedding table; it is read and written by ranges");
}

// cluster.rows-with-push: a push asks back the rows of its worker's next batch; they come after
// the push's update (so they hold it), at fp32 after the pushed ranges' values. Reads that name
// no rows, rows of another part or of a dense variable refuse the whole push: nothing applies.
BOOST_AUTO_TEST_CASE(a_push_answers_with_the_rows_it_asks_back_read_after_its_update) {
  auto s = table_setup("sgd");
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  push_request push{0, 0, {{0, 8, {{2.0f, -2.0f}}, false, row_ids{{5}}}}, true};
  push.reply_precision = wire_precision::bf16; // (the pushed ranges' values only: rows come at fp32)
  push.reads = {{0, 8, 6, row_ids{{5, 7, 4}}}};
  auto pushed = ask<push_reply>(shard, push_atom_v, push);
  BOOST_REQUIRE_MESSAGE(pushed, error_text(pushed));
  BOOST_REQUIRE_EQUAL(pushed->values.size(), 1u);
  auto& rows = pushed->values[0];
  BOOST_TEST(rows.rows.ids == std::vector<uint32_t>({5, 7, 4}));
  BOOST_TEST((rows.data.precision == wire_precision::fp32));
  // row 5 after the update (5.0 - 0.5 * 2, 5.5 + 0.5 * 2), rows 7 and 4 as stored
  BOOST_TEST(rows.data.to_vector() == std::vector<float>({4.0f, 6.5f, 7.0f, 7.5f, 4.0f, 4.5f}));
  auto before = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_REQUIRE(before);
  auto refused = [&](std::vector<slice_ref> reads) {
    push_request bad{0, 0, {{0, 8, {{1.0f, 1.0f}}, false, row_ids{{4}}}}, true};
    bad.reads = std::move(reads);
    auto r = ask<push_reply>(shard, push_atom_v, bad);
    BOOST_REQUIRE(!r);
    return describe(r.error());
  };
  BOOST_TEST(refused({{0, 8, 2}}) == "protocol_error: worker 0's push asks back a range that names no rows (a push's "
                                     "reads are a table's rows)");
  BOOST_TEST(refused({{0, 8, 2, row_ids{{3}}}}) == "shape_mismatch: shard 1: row 3 is outside embedding0/weights/part_1 (rows [4, 8))");
  BOOST_TEST(refused({{0, 8, 2, row_ids{{4}}}, {1, 0, 2, row_ids{{0}}}}) == "unknown_variable: shard 1 does not hold variable 1");
  auto after = ask<shard_snapshot>(shard, save_atom_v);
  BOOST_TEST((after->values == before->values));
  BOOST_TEST(after->version == before->version);
}

// Sparse and dense updates agree on a table whose every row is touched; a row left out keeps its
// value and its slot (momentum decays lazily, as TF's sparse apply does).
BOOST_AUTO_TEST_CASE(sparse_updates_agree_with_dense_ones_on_the_rows_they_touch) {
  for (auto kind : {"sgd", "momentum", "adagrad", "adam"}) {
    auto s = table_setup(kind);
    auto by_rows = keep(make_parameter_shard(*sys, {1}));
    auto by_range = keep(make_parameter_shard(*sys, {1}));
    BOOST_REQUIRE(ask<setup_reply>(by_rows, init_atom_v, s));
    BOOST_REQUIRE(ask<setup_reply>(by_range, init_atom_v, s));
    const std::vector<float> g{0.5f, -1.0f, 0.25f, 2.0f, -0.75f, 1.5f, 1.0f, -0.5f}; // rows 4..7
    for (int step = 0; step < 3; ++step) {
      // the rows in another order, each with its own gradient row
      float_vector shuffled{g[6], g[7], g[0], g[1], g[4], g[5], g[2], g[3]};
      BOOST_REQUIRE(ask<push_reply>(by_rows, push_atom_v,
                                    push_request{0, 0, {{0, 8, {std::move(shuffled)}, false, row_ids{{7, 4, 6, 5}}}}}));
      BOOST_REQUIRE(ask<push_reply>(by_range, push_atom_v, push_request{0, 0, {{0, 8, {g}}}}));
    }
    auto a = ask<shard_snapshot>(by_rows, save_atom_v);
    auto b = ask<shard_snapshot>(by_range, save_atom_v);
    BOOST_TEST((a->values == b->values), kind);
    BOOST_TEST((a->slot0 == b->slot0), kind);
    BOOST_TEST((a->slot1 == b->slot1), kind);
  }
  auto s = table_setup("momentum");
  auto lazy = keep(make_parameter_shard(*sys, {1}));
  BOOST_REQUIRE(ask<setup_reply>(lazy, init_atom_v, s));
  BOOST_REQUIRE(ask<push_reply>(lazy, push_atom_v, push_request{0, 0, {{0, 8, {{1.0f, 1.0f}}, false, row_ids{{4}}}}}));
  BOOST_REQUIRE(ask<push_reply>(lazy, push_atom_v, push_request{0, 0, {{0, 8, {{1.0f, 1.0f}}, false, row_ids{{5}}}}}));
  auto snap = ask<shard_snapshot>(lazy, save_atom_v);
  // row 4's accumulator stays at 1 while row 5 is pushed (no decay without a touch), rows 6-7 at 0
  BOOST_TEST(snap->slot0.at(0).data.to_vector() == std::vector<float>({1.0f, 1.0f, 1.0f, 1.0f, 0.0f, 0.0f, 0.0f, 0.0f}));
  BOOST_TEST(snap->values.at(0).data.to_vector() == std::vector<float>({3.5f, 4.0f, 4.5f, 5.0f, 6.0f, 6.5f, 7.0f, 7.5f}));
}

// A batchnorm's moving statistics move by their layer's decay (model.layers' "batchnorm decay D"),
// not by the optimizer: a push of the batch's moments keeps D of the value and takes 1 - D.
BOOST_AUTO_TEST_CASE(moving_statistics_follow_their_layers_decay) {
  model_spec spec;
  spec.input = {1, 1, 2};
  spec.layers = *parse_layers({"batchnorm decay 0.75", "dense 2"});
  auto vars = spec.variables();
  shard_setup s;
  s.shard = 0;
  s.plan = make_placement(vars, 1, placement_strategy::round_robin);
  s.optimizer = {"sgd", 0.5f};
  s.workers = 1;
  for (uint32_t k = 0; k < vars.size(); ++k)
    s.initial.push_back({k, 0, {std::vector<float>(vars[k].size(), 1.0f)}});
  auto solo = keep(make_parameter_shard(*sys, {0}));
  BOOST_REQUIRE(ask<setup_reply>(solo, init_atom_v, s));
  // bn0/gamma (0) is trained by SGD; bn0/moving_mean (2) keeps 0.75 and takes 0.25 of 5
  auto r = ask<push_reply>(solo, push_atom_v, push_request{0, 1, {{0, 0, {{2.0f, 2.0f}}}, {2, 0, {{5.0f, 5.0f}}}}});
  BOOST_REQUIRE_MESSAGE(r, error_text(r));
  auto pulled = ask<pull_reply>(solo, pull_atom_v, pull_request{0, {{0, 0, 2}, {2, 0, 2}}});
  BOOST_REQUIRE_MESSAGE(pulled, error_text(pulled));
  BOOST_TEST(pulled->slices.at(0).data.to_vector() == std::vector<float>({0.0f, 0.0f}));
  BOOST_TEST(pulled->slices.at(1).data.to_vector() == std::vector<float>({2.0f, 2.0f}));
  // a plan whose moving statistic lost its decay is refused by the variable's name
  auto lost = s;
  lost.plan.variables[3].moving_decay = 0.0f;
  auto refused = ask<setup_reply>(keep(make_parameter_shard(*sys, {0})), init_atom_v, lost);
  BOOST_REQUIRE(!refused);
  BOOST_TEST(error_text(refused).find("bn0/moving_variance has moving decay 0") != std::string::npos, error_text(refused));
}

BOOST_AUTO_TEST_CASE(push_applies_the_optimizer_and_advances_the_version) {
  init();
  auto r = ask<push_reply>(shard, push_atom_v, push_request{1, 1, {{3, 0, {{2.0f, -2.0f}}}, {1, 2, {{4.0f}}}}});
  BOOST_REQUIRE(r);
  BOOST_TEST(r->version == 1u);
  BOOST_TEST(values_of(3, 2) == std::vector<float>({3.0f, 6.0f}));
  BOOST_TEST(values_of(1, 3) == std::vector<float>({1.0f, 2.0f, 1.0f}));
}

// Wait-free backprop sends a step in parts: each part is applied at once, all at the step count
// of the step (Adam's bias correction), and the version advances at the last part.
BOOST_AUTO_TEST_CASE(a_push_in_parts_applies_like_the_whole_push_and_counts_once) {
  auto setup = setup_for_shard1();
  setup.optimizer = {"adam", 0.1f, 0.9f, 0.9f, 0.999f, 1e-8f};
  auto whole = keep(make_parameter_shard(*sys, {1}));
  BOOST_REQUIRE(ask<setup_reply>(whole, init_atom_v, setup));
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, setup));
  for (uint64_t step = 1; step <= 2; ++step) {
    float g = static_cast<float>(step);
    BOOST_REQUIRE(ask<push_reply>(whole, push_atom_v, push_request{0, step, {{3, 0, {{g, -g}}}, {1, 0, {{g, g, g}}}}}));
    push_request last{0, step, {{3, 0, {{g, -g}}}}};
    last.parts = 2;
    push_request first = last;
    first.grads = {{1, 0, {{g, g, g}}}};
    last.part = 1;
    auto r = ask<push_reply>(shard, push_atom_v, first);
    BOOST_REQUIRE_MESSAGE(r, error_text(r));
    BOOST_TEST(r->version == step - 1); // not counted yet
    r = ask<push_reply>(shard, push_atom_v, last);
    BOOST_REQUIRE_MESSAGE(r, error_text(r));
    BOOST_TEST(r->version == step);
  }
  for (uint32_t var : {1u, 3u}) {
    auto a = ask<pull_reply>(whole, pull_atom_v, pull_request{0, {{var, 0, var == 1 ? 3u : 2u}}});
    auto b = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{var, 0, var == 1 ? 3u : 2u}}});
    BOOST_TEST((a->slices[0].data == b->slices[0].data.to_vector())); // bit for bit
  }
  push_request outside{0, 3, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}};
  outside.part = 2;
  outside.parts = 2;
  auto r = ask<push_reply>(shard, push_atom_v, outside);
  BOOST_REQUIRE(!r);
  BOOST_TEST(describe(r.error()) == "protocol_error: shard 1: worker 0 pushed part 2 of 2");
}

BOOST_AUTO_TEST_CASE(push_can_return_the_updated_values) {
  init();
  push_request req{0, 1, {{1, 1, {{2.0f, 2.0f}}}}, true};
  auto r = ask<push_reply>(shard, push_atom_v, req);
  BOOST_REQUIRE(r);
  BOOST_REQUIRE_EQUAL(r->values.size(), 1u);
  BOOST_TEST(r->values[0].variable == 1u);
  BOOST_TEST(r->values[0].offset == 1u);
  BOOST_TEST((r->values[0].data == std::vector<float>({1.0f, 2.0f})));
  req.return_values = false;
  BOOST_TEST(ask<push_reply>(shard, push_atom_v, req)->values.empty());
}

BOOST_AUTO_TEST_CASE(values_return_in_the_requested_precision_from_fp32_masters) {
  init();
  push_request req{0, 1, {{1, 0, {{0.1f, 0.2f, 0.3f}}}}, true, 0, wire_precision::bf16};
  auto r = ask<push_reply>(shard, push_atom_v, req);
  BOOST_REQUIRE(r);
  auto& sent = r->values[0].data;
  BOOST_TEST((sent.precision == wire_precision::bf16));
  auto held = values_of(1, 3); // the shard's own values stay fp32
  for (size_t i = 0; i < 3; ++i)
    BOOST_TEST(sent.values[i] == bf16_to_float(float_to_bf16(held[i])));
  BOOST_TEST((held != sent.to_vector()));
}

BOOST_AUTO_TEST_CASE(rejected_pushes_change_nothing) {
  init();
  auto nan = std::numeric_limits<float>::quiet_NaN();
  // the first slice is valid, the second is not: nothing may be applied
  auto r = ask<push_reply>(shard, push_atom_v, push_request{0, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}, {3, 0, {{nan, 0.0f}}}}});
  BOOST_TEST(describe(r.error()) == "non_finite: shard 1: gradient of logits/bias from worker 0 is not finite");
  r = ask<push_reply>(shard, push_atom_v, push_request{0, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}, {3, 0, {{1.0f, 1.0f, 1.0f}}}}});
  BOOST_TEST(r.error() == errc::shape_mismatch);
  r = ask<push_reply>(shard, push_atom_v, push_request{0, 1, {{2, 0, {std::vector<float>(6, 1.0f)}}}});
  BOOST_TEST(r.error() == errc::unknown_variable);
  r = ask<push_reply>(shard, push_atom_v, push_request{7, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}});
  BOOST_TEST(r.error() == errc::unknown_worker);
  BOOST_TEST(values_of(1, 3) == std::vector<float>({1.0f, 2.0f, 3.0f}));
  BOOST_TEST(values_of(3, 2) == std::vector<float>({4.0f, 5.0f}));
  auto v = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {}});
  BOOST_TEST(v->version == 0u);
}

// Between-graph, only workers push; in an in-graph session only the chief does (its average).
BOOST_AUTO_TEST_CASE(in_an_in_graph_session_only_the_chief_pushes) {
  init();
  push_request from_chief{chief_worker_id, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}};
  auto r = ask<push_reply>(shard, push_atom_v, from_chief);
  BOOST_REQUIRE(!r);
  BOOST_TEST((r.error() == errc::unknown_worker));
  auto in_graph = keep(make_parameter_shard(*sys, {1, std::chrono::milliseconds{0}}));
  auto setup = setup_for_shard1();
  setup.session.mode = session_kind::in_graph;
  BOOST_REQUIRE(ask<setup_reply>(in_graph, init_atom_v, setup));
  auto worker = ask<push_reply>(in_graph, push_atom_v, push_request{0, 1, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}});
  BOOST_REQUIRE(!worker);
  BOOST_TEST(describe(worker.error())
             == "protocol_error: shard 1: worker 0 pushed to an in-graph session, where only the chief pushes");
  auto applied = ask<push_reply>(in_graph, push_atom_v, from_chief);
  BOOST_REQUIRE_MESSAGE(applied, error_text(applied));
  BOOST_TEST(applied->version == 1u);
}

// Found by the simulator (sync, shard crashes, seed 364): a shard set up from a checkpoint at
// version 16 while the cluster had gone on to step 23 (its aggregator's rule catches up with the
// first push) counted its versions from 16, so "a sync shard's version is the steps applied"
// no longer held and its optimizer's step count lagged the other shards'. In a sync session a
// step's update sets the version to at least the step + 1.
BOOST_AUTO_TEST_CASE(a_sync_shard_behind_the_cluster_takes_the_steps_version) {
  auto sync = keep(make_parameter_shard(*sys, {1, std::chrono::milliseconds{0}}));
  auto setup = setup_for_shard1();
  setup.session.mode = session_kind::sync;
  setup.version = 16;
  BOOST_REQUIRE(ask<setup_reply>(sync, init_atom_v, setup));
  auto r = ask<push_reply>(sync, push_atom_v, push_request{0, 23, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}});
  BOOST_REQUIRE_MESSAGE(r, error_text(r));
  BOOST_TEST(r->version == 24u);
  init(); // an async session counts its pushes whatever step they name
  auto a = ask<push_reply>(shard, push_atom_v, push_request{0, 23, {{1, 0, {{1.0f, 1.0f, 1.0f}}}}});
  BOOST_REQUIRE(a);
  BOOST_TEST(a->version == 1u);
}

BOOST_AUTO_TEST_CASE(momentum_slots_follow_the_host_rule) {
  auto s = setup_for_shard1();
  s.optimizer = {"momentum", 0.1f, 0.9f};
  BOOST_REQUIRE(ask<setup_reply>(shard, init_atom_v, s));
  for (int i = 0; i < 2; ++i)
    BOOST_REQUIRE(ask<push_reply>(shard, push_atom_v, push_request{0, 1, {{3, 0, {{1.0f, 0.0f}}}}}));
  // a = 1, w = 4 - 0.1; a = 1.9, w = 3.9 - 0.19
  auto w = values_of(3, 2);
  BOOST_TEST(w[0] == 3.71f, boost::test_tools::tolerance(1e-6f));
  BOOST_TEST(w[1] == 5.0f);
}

BOOST_AUTO_TEST_CASE(stop_ends_the_shard) {
  (*self)->monitor(shard);
  (*self)->send(shard, stop_atom_v);
  sched->run();
  bool down = false;
  (*self)->receive([&](caf::down_msg&) { down = true; });
  BOOST_TEST(down);
}

BOOST_AUTO_TEST_SUITE_END()
