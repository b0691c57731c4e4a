// Tests of actors/shard_reads: the chief's reads of the model from two shards. An evaluation by an
// embedding table's rows puts exactly the rows its sets name where a whole pull puts them (the
// table split by mod, in runs of one row), every other variable as the whole pull does, and
// leaves the rows it does not name alone.
#include "actors/shard_reads.hpp"

#include "compute/cpu_backend.hpp"
#include "model/model_spec.hpp"
#include "model/network.hpp"
#include "tests/support/actor_fixture.hpp"
#include "tests/support/table_shards.hpp"
#include "tests/support/token_slots.hpp"

#include <caf/event_based_actor.hpp>

using namespace actorps;
using namespace actorps::test;

namespace {

struct reads_fixture : actor_fixture {
  model_spec spec;
  placement_plan plan;
  std::vector<parameter_shard_actor> shards;
  std::unique_ptr<backend> be = make_cpu_backend(1);

  reads_fixture() {
    spec.input = {1, 4, 1};
    spec.layers = *parse_layers({"embedding 4 2 mean", "dense 2"}); // a 16 x 2 table
    plan = make_placement(spec.variables(), 2, placement_strategy::round_robin, {}, "mod");
    shards = table_shards(*this, spec, plan, "sgd", 5); // (the table made by the shards from the seed)
  }

  std::unique_ptr<network> fresh_net() {
    auto net = network::make(*be, spec, 8, 1);
    BOOST_REQUIRE(net);
    return std::move(*net);
  }

  // Runs read(self, done, failed) in an actor until it calls back; returns the failure, if any.
  std::string run(std::function<void(caf::event_based_actor*, std::function<void()>, failed_fn)> read) {
    bool done = false;
    std::string failure;
    sys->spawn([&](caf::event_based_actor* self) {
      read(self, [&] { done = true; }, [&](std::string why) { failure = std::move(why); });
    });
    sched->run();
    BOOST_TEST((done || !failure.empty()), "the read never called back");
    return failure;
  }
};

} // namespace

BOOST_AUTO_TEST_SUITE(shard_reads)

BOOST_FIXTURE_TEST_CASE(an_evaluation_by_rows_reads_the_rows_its_sets_name, reads_fixture) {
  auto whole = fresh_net(), by_rows = fresh_net();
  BOOST_REQUIRE_EQUAL(run([&](auto* self, auto done, auto failed) {
                        pull_every_variable(self, shards, plan, 1 << 20, std::chrono::seconds(10), *whole, done, failed);
                      }),
                      "");
  row_exchange named{plan, 0, 8};
  auto slots = slots_of({1, 5, 9, 1, /* example 2 */ 14, 5, -1, -1});
  named.renumber(slots.data(), 2, 4);
  BOOST_REQUIRE_EQUAL(run([&](auto* self, auto done, auto failed) {
                        pull_every_variable(
                          self, shards, plan, 1 << 20, std::chrono::seconds(10), *by_rows,
                          [&, self, done, failed] {
                            pull_rows(self, shards, plan, std::chrono::seconds(10), row_reads_of(named, 2), 0, named.cols(),
                                      *by_rows, done, failed);
                          },
                          failed, false);
                      }),
                      "");
  std::vector<std::vector<float>> want, got;
  BOOST_REQUIRE(!whole->get_parameters(want));
  BOOST_REQUIRE(!by_rows->get_parameters(got));
  for (size_t k = 1; k < want.size(); ++k)
    BOOST_TEST(got[k] == want[k]); // every other variable, whole
  for (size_t row = 0; row < 16; ++row) {
    const bool is_named = row == 1 || row == 5 || row == 9 || row == 14;
    const bool same = std::equal(got[0].begin() + 2 * row, got[0].begin() + 2 * row + 2, want[0].begin() + 2 * row);
    BOOST_TEST(same == is_named, "table row " << row << (is_named ? " was named" : " was not named"));
  }
}

BOOST_AUTO_TEST_SUITE_END()
