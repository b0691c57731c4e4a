// Tests of actors/shard_reads: the chief's reads of the model from two shards. An evaluation by an
// embedding table's rows reads exactly the rows its sets name, by local row, as a whole pull has
// them (the table split by mod, in runs of one row), and every other variable as the whole pull
// does; a table read a chunk at a time is the table, and a chunk its reader refuses ends the read.
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
  std::vector<float> local(named.distinct() * named.cols(), -1.0f);
  auto asks = row_reads_of(named, 2); // (runs of one row)
  BOOST_REQUIRE_EQUAL(run([&](auto* self, auto done, auto failed) {
                        pull_every_variable(
                          self, shards, plan, 1 << 20, std::chrono::seconds(10), *by_rows,
                          [&, self, done, failed] {
                            pull_rows(self, shards, plan, std::chrono::seconds(10), named, asks, 2, local.data(), done, failed);
                          },
                          failed, false);
                      }),
                      "");
  std::vector<std::vector<float>> want, got;
  BOOST_REQUIRE(!whole->get_parameters(want));
  BOOST_REQUIRE(!by_rows->get_parameters(got));
  for (size_t k = 1; k < want.size(); ++k)
    BOOST_TEST(got[k] == want[k]); // every other variable, whole
  BOOST_REQUIRE_EQUAL(named.table_rows().size(), 4u); // rows 1, 5, 9, 14 by local row
  for (size_t l = 0; l < 4; ++l) {
    const size_t row = named.table_rows()[l];
    BOOST_TEST(std::equal(local.begin() + 2 * l, local.begin() + 2 * l + 2, want[0].begin() + 2 * row),
               "table row " << row << " at local row " << l);
  }
}

BOOST_FIXTURE_TEST_CASE(a_table_read_a_chunk_at_a_time_is_the_table_a_whole_pull_reads, reads_fixture) {
  auto whole = fresh_net();
  BOOST_REQUIRE_EQUAL(run([&](auto* self, auto done, auto failed) {
                        pull_every_variable(self, shards, plan, 1 << 20, std::chrono::seconds(10), *whole, done, failed);
                      }),
                      "");
  std::vector<std::vector<float>> want;
  BOOST_REQUIRE(!whole->get_parameters(want));
  std::vector<float> swept;
  std::vector<size_t> firsts;
  BOOST_REQUIRE_EQUAL(run([&](auto* self, auto done, auto failed) {
                        table_sweep sweep{plan, 0, 6}; // chunks of 3 rows from both parts (mod)
                        sweep_table(self, shards, plan, std::chrono::seconds(10), sweep,
                                    [&, sweep](size_t i, const float* chunk) {
                                      firsts.push_back(sweep.first_row(i));
                                      swept.insert(swept.end(), chunk, chunk + sweep.rows_of(i) * 2);
                                      return caf::error{};
                                    },
                                    done, failed);
                      }),
                      "");
  BOOST_TEST(firsts == std::vector<size_t>({0, 3, 6, 9, 12, 15}));
  BOOST_TEST(swept == want[0]);
}

BOOST_FIXTURE_TEST_CASE(a_chunk_its_reader_refuses_ends_the_read_named, reads_fixture) {
  size_t chunks = 0;
  auto failure = run([&](auto* self, auto done, auto failed) {
    sweep_table(self, shards, plan, std::chrono::seconds(10), table_sweep{plan, 0, 6},
                [&](size_t, const float*) {
                  return ++chunks == 2 ? caf::make_error(errc::file_error, "model/best: no space left on device")
                                       : caf::error{};
                },
                done, failed);
  });
  BOOST_TEST(chunks == 2u); // no chunk read after the failure
  BOOST_TEST(failure.find("no space left on device") != std::string::npos, failure);
}

BOOST_AUTO_TEST_SUITE_END()
