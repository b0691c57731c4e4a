// Tests of actors/shard_core: the store that a shard and the node's stream sessions share. A push
// applies whole before any pull sees it, whichever threads call; rejections are counted; the
// directory hands out a scope's core with whether its pushes may go straight to it. Replies in
// place: a pull's or push's dense values are handed over as views of the store while the core's
// lock is held (no push lands meanwhile), at 16 bits with their precision, a table's rows
// gathered where they are copied out; top-k replies travel as copies, a refused request hands
// over nothing.
#include "actors/shard_core.hpp"

#include "control/placement.hpp"
#include "wire/precision.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <atomic>
#include <limits>
#include <random>
#include <string>
#include <thread>

using namespace actorps;

namespace {

constexpr uint32_t n = 1 << 18; // (a push takes long enough for a torn read to show)

shard_setup one_variable() {
  shard_setup s;
  s.plan = make_placement({{"w", 1, static_cast<int>(n)}}, 1, placement_strategy::round_robin);
  s.optimizer = {"sgd", 1.0f};
  s.workers = 2;
  s.initial = {{0, 0, {std::vector<float>(n, 0.0f)}}};
  return s;
}

} // namespace

BOOST_AUTO_TEST_SUITE(shard_core)

BOOST_AUTO_TEST_CASE(a_push_applies_whole_before_any_pull_sees_it) {
  actorps::shard_core core{0, nullptr, {}};
  BOOST_REQUIRE(core.init(one_variable()));
  constexpr int pushes = 200;
  std::atomic<bool> done{false};
  std::atomic<int> refused{0};
  std::thread pusher{[&] { // (Boost.Test's checks are for the main thread only)
    for (int k = 0; k < pushes; ++k) { // each push lowers every value by 1
      push_request req{static_cast<uint32_t>(k % 2), 0, {}};
      req.grads.push_back({0, 0, tensor_buffer{float_vector(n, 1.0f)}});
      refused += core.push(req, {}) ? 0 : 1;
    }
    done = true;
  }};
  int pulls = 0, torn = 0;
  while (!done || pulls == 0) {
    auto r = core.pull(pull_request{1, {{0, 0, n}}});
    if (!r)
      break;
    auto v = r->slices.at(0).data.to_vector();
    torn += v.front() != v.back() || v[n / 2] != v.front();
    BOOST_TEST(r->version == static_cast<uint64_t>(-v.front())); // the values of exactly `version` pushes
    ++pulls;
  }
  pusher.join();
  BOOST_TEST(refused == 0);
  BOOST_TEST(pulls > 0);
  BOOST_TEST(torn == 0, torn << " of " << pulls << " pulls saw a push half applied");
  BOOST_TEST(core.stats({}).version == static_cast<uint64_t>(pushes));
}

BOOST_AUTO_TEST_CASE(rejections_are_counted_and_push_ages_kept) {
  actorps::shard_core core{0, nullptr, {}};
  BOOST_TEST(!core.pull(pull_request{0, {{0, 0, 1}}})); // not initialised yet
  BOOST_REQUIRE(core.init(one_variable()));
  BOOST_TEST(core.init(one_variable())->already_initialized); // keeps its values
  push_request wrong{0, 0, {}};
  wrong.grads.push_back({0, n - 1, tensor_buffer{float_vector(3, 1.0f)}}); // past the end
  BOOST_TEST(!core.push(wrong, {}));
  push_request right{1, 0, {}};
  right.grads.push_back({0, 0, tensor_buffer{float_vector(n, 1.0f)}});
  BOOST_REQUIRE(core.push(right, actorps::shard_core::time_point{} + std::chrono::seconds(1)));
  auto stats = core.stats(actorps::shard_core::time_point{} + std::chrono::seconds(3));
  BOOST_REQUIRE_EQUAL(stats.push_age_ms.size(), 2u);
  BOOST_TEST(stats.push_age_ms[1] == 2000);
  BOOST_TEST(core.stopping_line() == "stopping at version 1 (2 rejected messages)");
}

BOOST_AUTO_TEST_CASE(a_reply_in_place_is_the_store_held_still_while_it_is_read) {
  actorps::shard_core core{0, nullptr, {}};
  BOOST_REQUIRE(core.init(one_variable()));
  auto req = push_request::of(0, 0, {{0, 0, tensor_buffer{float_vector(n, 1.0f)}}});
  req.return_values = true;
  std::atomic<bool> landed{false};
  std::thread other;
  int sent = 0;
  auto err = core.push_in_place(req, {}, [&](push_reply& reply, const std::vector<store_view>& views) {
    ++sent;
    BOOST_TEST(reply.version == 1u);
    BOOST_REQUIRE_EQUAL(reply.values.size(), 1u);
    BOOST_TEST(reply.values[0].data.values.empty()); // (no copy: the view is the values)
    BOOST_REQUIRE_EQUAL(views.size(), 1u);
    BOOST_TEST(views[0].slice == 0u);
    BOOST_REQUIRE_EQUAL(views[0].floats, static_cast<size_t>(n));
    other = std::thread{[&] { // another worker's push waits for the lock
      core.push(push_request::of(1, 0, {{0, 0, tensor_buffer{float_vector(n, 1.0f)}}}), {});
      landed = true;
    }};
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    BOOST_TEST(!landed);
    BOOST_TEST(views[0].data[0] == -1.0f);
    BOOST_TEST(views[0].data[n - 1] == -1.0f);
  });
  other.join();
  BOOST_TEST(!err, describe(err));
  BOOST_TEST(sent == 1);
  BOOST_TEST(landed);
  // a pull in place: its range viewed where the store holds it
  err = core.pull_in_place(pull_request{1, {{0, 8, 16}}}, [&](pull_reply& reply, const std::vector<store_view>& views) {
    ++sent;
    BOOST_TEST(reply.version == 2u);
    BOOST_REQUIRE_EQUAL(views.size(), 1u);
    BOOST_TEST(views[0].floats == 16u);
    BOOST_TEST(views[0].data[15] == -2.0f);
    BOOST_TEST(reply.slices.at(0).data.values.empty());
  });
  BOOST_TEST(!err, describe(err));
  BOOST_TEST(sent == 2);
}

// A reply at 16 bits is a view too, named with its precision: whoever copies it out rounds it
// (into a same-host worker's shared heap, or into an encoded copy). A top-k reply is picked from
// copies.
BOOST_AUTO_TEST_CASE(sixteen_bit_replies_are_views_with_their_precision_top_k_ones_copies_and_refusals_hand_over_nothing) {
  actorps::shard_core core{0, nullptr, {}};
  BOOST_REQUIRE(core.init(one_variable()));
  auto req = push_request::of(0, 0, {{0, 0, tensor_buffer{float_vector(n, 0.1f)}}});
  req.return_values = true;
  req.reply_precision = wire_precision::bf16;
  int sent = 0;
  auto err = core.push_in_place(req, {}, [&](push_reply& reply, const std::vector<store_view>& views) {
    ++sent;
    BOOST_REQUIRE_EQUAL(views.size(), 1u);
    BOOST_TEST((views[0].precision == wire_precision::bf16));
    BOOST_TEST(views[0].data[0] == -0.1f); // (the store's floats: rounded where they are copied)
    BOOST_REQUIRE_EQUAL(reply.values.size(), 1u);
    BOOST_TEST(reply.values[0].data.values.empty());
    BOOST_TEST((reply.values[0].data.precision == wire_precision::bf16));
  });
  BOOST_TEST(!err, describe(err));
  BOOST_TEST(sent == 1);
  req.step = 1;
  req.reply_precision = wire_precision::fp32;
  req.reply_topk = 0.5;
  err = core.push_in_place(req, {}, [&](push_reply& reply, const std::vector<store_view>& views) {
    ++sent;
    BOOST_TEST(views.empty());
    BOOST_REQUIRE_EQUAL(reply.values.size(), 1u);
    BOOST_TEST(reply.values[0].data.values.size() == static_cast<size_t>(n)); // (a copy, its top-k picked)
  });
  BOOST_TEST(!err, describe(err));
  BOOST_TEST(sent == 2);
  auto wrong = push_request::of(0, 1, {{0, n - 1, tensor_buffer{float_vector(3, 1.0f)}}}); // past the end
  err = core.push_in_place(wrong, {}, [&](push_reply&, const std::vector<store_view>&) { ++sent; });
  BOOST_TEST(static_cast<bool>(err));
  err = core.pull_in_place(pull_request{0, {{0, n, 1}}}, [&](pull_reply&, const std::vector<store_view>&) { ++sent; });
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(sent == 2);
  BOOST_TEST(core.stats({}).version == 2u);
}

// A table's rows, asked back with a push or pulled, are views too: scattered over the table,
// gathered where they are copied out (into a same-host worker's heap: no copy of them first),
// as they are after the push's update; each view names its own slice of the reply.
BOOST_AUTO_TEST_CASE(rows_asked_back_or_pulled_are_views_gathered_where_they_are_copied) {
  actorps::shard_core core{0, nullptr, {}};
  variable_spec table{"embedding0/weights", 10, 4};
  table.table = true;
  shard_setup s;
  s.plan = make_placement({{"b", 1, 3}, table}, 1, placement_strategy::round_robin);
  s.optimizer = {"sgd", 1.0f};
  s.workers = 1;
  std::vector<float> rows(40);
  for (size_t i = 0; i < rows.size(); ++i)
    rows[i] = static_cast<float>(i); // (row r: 4r .. 4r + 3)
  s.initial = {{0, 0, {{1.0f, 2.0f, 3.0f}}}, {1, 0, {rows}}};
  BOOST_REQUIRE(core.init(s));
  push_request req{0, 0, {{0, 0, {{0.5f, 0.5f, 0.5f}}}, {1, 0, {{1.0f, 1.0f, 1.0f, 1.0f}}, false, row_ids{{2}}}}, true};
  req.reads = {{1, 0, 8, row_ids{{9, 2}}}};
  auto gathered = [](const store_view& v) {
    std::vector<float> out(v.floats);
    v.copy_to(out.data());
    return out;
  };
  int sent = 0;
  auto err = core.push_in_place(req, {}, [&](push_reply& reply, const std::vector<store_view>& views) {
    ++sent;
    BOOST_REQUIRE_EQUAL(reply.values.size(), 2u); // (b's values, then the rows asked back)
    BOOST_REQUIRE_EQUAL(views.size(), 2u);
    BOOST_TEST((views[0].slice == 0u && views[0].contiguous()));
    BOOST_TEST((views[1].slice == 1u && !views[1].contiguous()));
    BOOST_TEST(reply.values[1].data.values.empty());
    BOOST_TEST(reply.values[1].rows.ids == std::vector<uint32_t>({9, 2}));
    BOOST_TEST((gathered(views[0]) == std::vector<float>{0.5f, 1.5f, 2.5f}));
    BOOST_TEST((gathered(views[1]) == std::vector<float>{36.0f, 37.0f, 38.0f, 39.0f, 7.0f, 8.0f, 9.0f, 10.0f}));
  });
  BOOST_TEST(!err, describe(err));
  err = core.pull_in_place(pull_request{0, {{1, 0, 4, row_ids{{2}}}}}, [&](pull_reply& reply, const std::vector<store_view>& views) {
    ++sent;
    BOOST_REQUIRE_EQUAL(views.size(), 1u);
    BOOST_TEST(reply.slices.at(0).data.values.empty());
    BOOST_TEST((gathered(views[0]) == std::vector<float>{7.0f, 8.0f, 9.0f, 10.0f}));
  });
  BOOST_TEST(!err, describe(err));
  BOOST_TEST(sent == 2);
}

// A save's snapshot kept by copy-on-write, under random pushes of rows and of dense ranges
// (across its 16,384-float blocks) between random reads: every read equals the copy taken at
// the hold.
// A same-host worker's gradients read where they lie (gradient_spans): the store ends exactly as
// with the same gradients inside the slices; a push whose spans do not match its slices, or hold
// a NaN, or lie past its variable, is refused with the store unchanged.
BOOST_AUTO_TEST_CASE(gradients_read_in_place_apply_as_the_same_gradients_in_the_slices) {
  actorps::shard_core inside{0, nullptr, {}};
  actorps::shard_core in_place{0, nullptr, {}};
  BOOST_REQUIRE(inside.init(one_variable()));
  BOOST_REQUIRE(in_place.init(one_variable()));
  std::mt19937 gen{7};
  std::normal_distribution<float> dist;
  auto values = [](actorps::shard_core& c) { return c.pull(pull_request{0, {{0, 0, n}}})->slices.at(0).data.to_vector(); };
  for (int k = 0; k < 3; ++k) {
    float_vector g(n / 2);
    for (auto& x : g)
      x = dist(gen);
    push_request with{0, 0, {}};
    with.grads.push_back({0, n / 4, tensor_buffer{g}});
    with.return_values = true;
    push_request without = with;
    without.grads[0].data.values = float_vector{};
    const gradient_spans at{{g.data(), g.size()}};
    auto a = inside.push(with, {});
    BOOST_REQUIRE(a);
    std::vector<float> returned;
    auto err = in_place.push_in_place(without, {}, [&](push_reply& reply, const std::vector<store_view>& views) {
      BOOST_TEST(reply.version == a->version);
      BOOST_REQUIRE_EQUAL(views.size(), 1u);
      returned.assign(views[0].data, views[0].data + views[0].floats); // (the range the push named)
    }, &at);
    BOOST_REQUIRE(!err);
    BOOST_TEST((returned == a->values.at(0).data.to_vector()));
  }
  const auto after = values(in_place);
  BOOST_TEST((after == values(inside)));
  float_vector bad(n / 2, 1.0f);
  bad[17] = std::numeric_limits<float>::quiet_NaN();
  push_request named{0, 0, {}};
  named.grads.push_back({0, n / 4, {}});
  const gradient_spans two{{bad.data(), 10}, {bad.data(), 10}};
  const gradient_spans nan{{bad.data(), bad.size()}};
  const gradient_spans past{{bad.data(), n}}; // (n values from n / 4 on: past the variable's end)
  for (auto* spans : {&two, &nan, &past}) {
    int sent = 0;
    auto refused = in_place.push_in_place(named, {}, [&](push_reply&, const std::vector<store_view>&) { ++sent; }, spans);
    BOOST_TEST(static_cast<bool>(refused));
    BOOST_TEST(sent == 0);
  }
  BOOST_TEST((values(in_place) == after));
}

BOOST_AUTO_TEST_CASE(a_held_snapshot_reads_as_the_copy_at_the_hold_under_random_pushes) {
  for (const char* optimizer : {"adagrad", "adam"}) {
    const bool rows = std::string{optimizer} == "adagrad"; // (row updates: SGD, momentum, Adagrad)
    variable_spec table{"embedding0/weights", 512, 8};
    table.table = rows;
    shard_setup s;
    s.plan = make_placement({table, {"dense0/weights", 1, 40000}}, 1, placement_strategy::round_robin);
    s.optimizer = {optimizer, 0.1f};
    s.workers = 1;
    std::mt19937 gen{11};
    std::uniform_real_distribution<float> u{-1.0f, 1.0f};
    std::vector<float> t(512 * 8), d(40000);
    for (auto& x : t)
      x = u(gen);
    for (auto& x : d)
      x = u(gen);
    s.initial = {{0, 0, {float_vector(t.begin(), t.end())}}, {1, 0, {float_vector(d.begin(), d.end())}}};
    actorps::shard_core core{0, nullptr, {}};
    BOOST_REQUIRE(core.init(s));
    for (int warm = 0; warm < 3; ++warm) // (slots away from their start)
      BOOST_REQUIRE(core.push(push_request::of(0, 0, {{1, 0, tensor_buffer{float_vector(40000, 0.5f)}}}), {}));
    auto at_hold = core.snapshot();
    BOOST_REQUIRE(at_hold);
    auto layout = core.hold(4);
    BOOST_REQUIRE(layout);
    size_t mismatches = 0;
    for (int i = 0; i < 300; ++i) {
      if (rows && gen() % 2 == 0) { // a few rows
        std::vector<uint32_t> ids;
        for (uint32_t k = 0, n = 1 + gen() % 6; k < n; ++k)
          ids.push_back(static_cast<uint32_t>(gen() % 512));
        std::sort(ids.begin(), ids.end());
        ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
        float_vector g(ids.size() * 8);
        for (auto& x : g)
          x = u(gen);
        BOOST_REQUIRE(core.push(push_request::of(0, 0, {{0, 0, tensor_buffer{std::move(g)}, false, row_ids{ids}}}), {}));
      } else { // a dense range of the big variable, or the whole table (as a range)
        const bool big = gen() % 4 != 0;
        const uint32_t size = big ? 40000 : 512 * 8;
        const uint32_t from = static_cast<uint32_t>(gen() % size), n = 1 + static_cast<uint32_t>(gen() % (size - from));
        float_vector g(n);
        for (auto& x : g)
          x = u(gen);
        BOOST_REQUIRE(core.push(push_request::of(0, 0, {{big ? 1u : 0u, from, tensor_buffer{std::move(g)}}}), {}));
      }
      const uint32_t which = static_cast<uint32_t>(gen() % 3);
      const auto& ranges = which == 0 ? layout->values : which == 1 ? layout->slot0 : layout->slot1;
      if (ranges.empty())
        continue;
      const auto& whole = ranges[gen() % ranges.size()];
      const uint32_t from = static_cast<uint32_t>(gen() % whole.count);
      const uint32_t n = 1 + static_cast<uint32_t>(gen() % (whole.count - from));
      auto got = core.read_held(4, which, {whole.variable, whole.offset + from, n});
      BOOST_REQUIRE(got);
      const auto& want = (which == 0 ? at_hold->values : which == 1 ? at_hold->slot0 : at_hold->slot1);
      auto it = std::find_if(want.begin(), want.end(), [&](const variable_slice& v) { return v.variable == whole.variable; });
      BOOST_REQUIRE(it != want.end());
      const auto& all = it->data.values;
      mismatches += !std::equal(all.begin() + from, all.begin() + from + n, got->piece.data.values.begin());
    }
    BOOST_TEST(mismatches == 0u, optimizer);
    BOOST_TEST(core.stats({}).version == 303u); // (every push applied)
  }
}

BOOST_AUTO_TEST_CASE(the_directory_says_which_scopes_take_pushes_in_place) {
  shard_directory dir;
  auto async_core = std::make_shared<actorps::shard_core>(0, nullptr, actorps::shard_core::time_point{});
  auto sync_core = std::make_shared<actorps::shard_core>(0, nullptr, actorps::shard_core::time_point{});
  dir.set("", {async_core, true});
  dir.set("tower", {sync_core, false});
  BOOST_TEST(dir.find("").core == async_core);
  BOOST_TEST(dir.find("").direct_pushes);
  BOOST_TEST(dir.find("tower").core == sync_core);
  BOOST_TEST(!dir.find("tower").direct_pushes); // its aggregator decides
  BOOST_TEST(!dir.find("other").core);
  dir.erase("tower");
  BOOST_TEST(!dir.find("tower").core);
}

BOOST_AUTO_TEST_SUITE_END()
