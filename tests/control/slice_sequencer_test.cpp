// Tests of control/slice_sequencer: K slices wired through a message queue finish a step whatever
// the order the parts arrive in, with the same gradients bit for bit; a slice that stops makes
// the others drop the step; bad parts are refused; a host without compute (the simulator's)
// sees the same messages in the same order as a real slice.
#include "control/slice_sequencer.hpp"

#include "control/placement.hpp"
#include "control/slicing.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/cpu_backend.hpp"
#include "model/init.hpp"
#include "model/mlp_slice.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <deque>
#include <random>
#include <string>

using namespace actorps;

namespace {

struct message {
  uint32_t to;
  layer_part part;
};

// A group of K slices on the CPU, one batch loaded, the same weights as one unsplit model.
struct group {
  mlp_spec spec;
  int slices;
  std::vector<std::unique_ptr<backend>> backends;
  std::vector<std::unique_ptr<mlp_slice>> nets;
  std::vector<std::unique_ptr<mlp_slice_host>> hosts;
  std::vector<std::unique_ptr<slice_sequencer>> exchanges;
  std::deque<message> queue;
  placement_plan plan;

  group(int k, int rows) : slices(k) {
    spec.input_size = 12;
    spec.hidden = {9, 7};
    spec.classes = 5;
    plan = make_placement(spec.variables(), 1, placement_strategy::round_robin);
    auto params = initial_values(spec.to_model(), {init_scheme::he, 0.0, 0.0, ""}, 3);
    auto images = test::random_values(static_cast<size_t>(rows) * spec.input_size, 8, 0.0f, 1.0f);
    std::vector<float> labels(rows);
    for (int r = 0; r < rows; ++r)
      labels[r] = static_cast<float>(r % spec.classes);
    for (int s = 0; s < k; ++s) {
      backends.push_back(make_cpu_backend(1));
      auto net = actorps::mlp_slice::make(*backends.back(), spec, s, k, rows);
      BOOST_REQUIRE(net);
      nets.push_back(std::move(*net));
      for (auto& r : held_ranges(plan, 0, s, k))
        BOOST_REQUIRE(!nets.back()->upload_parameter(r.variable, r.offset, params[r.variable].data() + r.offset, r.count));
      nets.back()->load_batch(images.data(), labels.data(), rows);
      hosts.push_back(std::make_unique<mlp_slice_host>(*nets.back(), [this](uint32_t to, layer_part part) {
        queue.push_back({to, std::move(part)});
      }));
      exchanges.push_back(std::make_unique<slice_sequencer>(hosts.back()->sequencer()));
    }
  }

  // Delivers queued messages, picking the next one at random when shuffle is set.
  void deliver(std::mt19937* shuffle) {
    while (!queue.empty()) {
      size_t i = shuffle ? std::uniform_int_distribution<size_t>(0, queue.size() - 1)(*shuffle) : 0;
      auto msg = std::move(queue[i]);
      queue.erase(queue.begin() + static_cast<long>(i));
      BOOST_REQUIRE(!exchanges[msg.to]->receive(std::move(msg.part)));
    }
  }

  // Every slice's gradients, in held-range order.
  std::vector<float> gradients() {
    std::vector<float> out;
    for (int s = 0; s < slices; ++s)
      for (auto& r : held_ranges(plan, 0, s, slices)) {
        std::vector<float> g(r.count);
        BOOST_REQUIRE(!nets[s]->download_gradient(r.variable, r.offset, g.data(), r.count));
        out.insert(out.end(), g.begin(), g.end());
      }
    return out;
  }
};

std::vector<float> one_step(int k, std::mt19937* shuffle) {
  group g{k, 6};
  for (auto& ex : g.exchanges) // the slices start in reverse order: early parts wait in inboxes
    BOOST_REQUIRE(!ex->begin_step());
  g.deliver(shuffle);
  for (auto& ex : g.exchanges) {
    BOOST_TEST((ex->status() == slice_sequencer::state::ready));
    ex->end_step();
    BOOST_TEST(ex->step() == 1u);
  }
  return g.gradients();
}

} // namespace

BOOST_AUTO_TEST_SUITE(slice_sequencer)

BOOST_AUTO_TEST_CASE(any_arrival_order_gives_the_same_gradients) {
  for (int k : {1, 2, 3}) {
    auto in_order = one_step(k, nullptr);
    BOOST_TEST(std::all_of(in_order.begin(), in_order.end(), [](float x) { return std::isfinite(x); }));
    for (unsigned seed : {1u, 2u, 3u}) {
      std::mt19937 rng{seed};
      BOOST_TEST((one_step(k, &rng) == in_order), "K=" << k << " seed " << seed);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_slice_that_stops_makes_the_group_drop_the_step) {
  group g{3, 4};
  BOOST_REQUIRE(!g.exchanges[0]->begin_step());
  BOOST_REQUIRE(!g.exchanges[1]->begin_step());
  g.exchanges[2]->announce_stop(); // slice 2 stops before step 0
  g.deliver(nullptr);
  BOOST_TEST((g.exchanges[0]->status() == actorps::slice_sequencer::state::stopped));
  BOOST_TEST((g.exchanges[1]->status() == actorps::slice_sequencer::state::stopped));
}

BOOST_AUTO_TEST_CASE(a_stop_before_a_later_step_lets_the_current_one_finish) {
  group g{2, 4};
  BOOST_REQUIRE(!g.exchanges[0]->begin_step());
  g.exchanges[1]->announce_stop(); // idle at step 0 ...
  g.queue.back().part.step = 1;     // ... as if it had finished step 0 already
  g.deliver(nullptr);
  BOOST_TEST((g.exchanges[0]->status() == actorps::slice_sequencer::state::waiting));
  BOOST_REQUIRE(!g.exchanges[1]->begin_step());
  g.deliver(nullptr);
  BOOST_TEST((g.exchanges[0]->status() == actorps::slice_sequencer::state::ready));
  g.exchanges[0]->end_step();
  BOOST_REQUIRE(!g.exchanges[0]->begin_step());
  BOOST_TEST((g.exchanges[0]->status() == actorps::slice_sequencer::state::stopped));
}

BOOST_AUTO_TEST_CASE(bad_parts_are_refused) {
  group g{2, 4};
  auto& ex = *g.exchanges[0];
  BOOST_TEST(ex.receive(layer_part{0, 0, 0, false, {1.0f}}) == errc::protocol_error); // from itself
  BOOST_TEST(ex.receive(layer_part{5, 0, 0, false, {1.0f}}) == errc::protocol_error); // unknown slice
  BOOST_REQUIRE(!ex.receive(layer_part{1, 0, 0, false, {1.0f}}));
  BOOST_TEST(ex.receive(layer_part{1, 0, 0, false, {1.0f}}) == errc::protocol_error); // twice
  // a layer outside the stack (it would wait in the inbox for ever)
  BOOST_TEST(ex.receive(layer_part{1, 0, 3, false, {1.0f}}) == errc::protocol_error);
  BOOST_TEST(ex.receive(layer_part{1, 0, -2, true, {1.0f}}) == errc::protocol_error);
  // a part of the wrong size fails when the step uses it, naming the layer and slice
  auto err = ex.begin_step();
  BOOST_TEST(err == errc::shape_mismatch);
}

// A host that computes nothing (as the simulator's): the sequencer still sends each layer's
// parts forward and backward in order, and its step is ready after the last backward.
struct bare_host final : slice_host {
  uint32_t slices;
  std::vector<std::string> calls;
  std::deque<message>* queue;
  bare_host(uint32_t k, std::deque<message>& q) : slices(k), queue(&q) {}
  caf::error forward(int l, std::vector<float>& part) override {
    calls.push_back(cat("forward ", l));
    part.clear();
    return caf::none;
  }
  caf::error accept(int l, bool backward, uint32_t from, const float*, size_t) override {
    calls.push_back(cat(backward ? "partial " : "part ", l, " from ", from));
    return caf::none;
  }
  caf::error begin_backward() override {
    calls.push_back("begin backward");
    return caf::none;
  }
  caf::error backward(int l, std::vector<std::vector<float>>& partials) override {
    calls.push_back(cat("backward ", l));
    partials.assign(slices, {});
    return caf::none;
  }
  void finish_partials(int l) override { calls.push_back(cat("finish ", l)); }
  void send(uint32_t to, layer_part part) override { queue->push_back({to, std::move(part)}); }
};

BOOST_AUTO_TEST_CASE(a_host_without_compute_follows_the_same_order) {
  std::deque<message> queue;
  bare_host h0{2, queue}, h1{2, queue};
  actorps::slice_sequencer s0{0, 2, 3, h0}, s1{1, 2, 3, h1};
  BOOST_REQUIRE(!s0.begin_step());
  BOOST_REQUIRE(!s1.begin_step());
  actorps::slice_sequencer* by_slice[] = {&s0, &s1};
  size_t messages = 0;
  while (!queue.empty()) {
    auto msg = std::move(queue.front());
    queue.pop_front();
    ++messages;
    BOOST_REQUIRE(!by_slice[msg.to]->receive(std::move(msg.part)));
  }
  BOOST_TEST((s0.status() == actorps::slice_sequencer::state::ready));
  BOOST_TEST((s1.status() == actorps::slice_sequencer::state::ready));
  BOOST_TEST(messages == 2u * (3 + 2)); // each slice: 3 forward parts, 2 backward
  const std::vector<std::string> expected{"forward 0", "part 0 from 1", "forward 1", "part 1 from 1", "forward 2",
                                          "part 2 from 1", "begin backward", "backward 2", "partial 1 from 1",
                                          "finish 1", "backward 1", "partial 0 from 1", "finish 0", "backward 0"};
  BOOST_TEST(h0.calls == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_stop_reaches_a_slice_that_has_not_begun) {
  std::deque<message> queue;
  bare_host h0{2, queue}, h1{2, queue};
  actorps::slice_sequencer s0{0, 2, 2, h0}, s1{1, 2, 2, h1};
  s1.announce_stop();
  BOOST_REQUIRE_EQUAL(queue.size(), 1u);
  BOOST_REQUIRE(!s0.receive(std::move(queue.front().part)));
  BOOST_TEST((s0.status() == actorps::slice_sequencer::state::idle));
  BOOST_REQUIRE(!s0.begin_step());
  BOOST_TEST((s0.status() == actorps::slice_sequencer::state::stopped));
  BOOST_TEST(h0.calls.empty()); // nothing computed for a step the group drops
}

BOOST_AUTO_TEST_SUITE_END()
