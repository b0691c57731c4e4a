// Every message type crosses a real loopback TCP connection between two actor systems: the
// shard protocol against a published shard, the chief protocol against a published stub chief.
#include "actors/interfaces.hpp"
#include "actors/parameter_shard.hpp"
#include "messages/register.hpp"
#include "tests/support/helpers.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/io/middleman.hpp>
#include <caf/scoped_actor.hpp>
#include <caf/typed_event_based_actor.hpp>

#include <boost/test/unit_test.hpp>

#include <atomic>
#include <thread>

using namespace actorps;

namespace {

struct node_config : caf::actor_system_config {
  node_config() {
    load<caf::io::middleman>();
    register_types(*this);
    set("logger.verbosity", caf::atom("quiet"));
  }
};

std::shared_ptr<std::atomic<int64_t>> reported = std::make_shared<std::atomic<int64_t>>(0);

chief_actor::behavior_type echo_chief(chief_actor::pointer) {
  return {
    [](register_atom, const worker_hello& hello) -> caf::result<worker_welcome> {
      placement_plan plan{"round-robin", 1, {{hello.host, 1, 2}}, {{0, 0, 1, 0}}};
      return worker_welcome{plan, hello.worker};
    },
    [](join_atom, const worker_hello&) -> caf::result<worker_welcome> { return caf::make_error(errc::unknown_worker); },
    [](lease_atom, const lease_request&) -> caf::result<data_lease> { return data_lease{}; },
    [](leave_atom, const lease_request&) -> caf::result<data_lease> { return data_lease{}; },
    [](progress_atom, const progress_report& rep) { *reported += rep.steps; },
    [](tick_atom) {},
    [](stall_atom) {},
    [](step_atom) {},
    [](stop_atom) {},
    [](stop_atom, uint32_t) {},
  };
}

struct loopback_fixture {
  node_config server_cfg, client_cfg;
  caf::actor_system server{server_cfg};
  caf::actor_system client{client_cfg};
  std::chrono::seconds timeout{10};

  template <class Handle>
  Handle connect(const Handle& hdl) {
    auto port = server.middleman().publish(hdl, 0, "127.0.0.1");
    BOOST_REQUIRE_MESSAGE(port, actorps::test::error_text(port));
    auto remote = client.middleman().remote_actor<Handle>("127.0.0.1", *port);
    BOOST_REQUIRE_MESSAGE(remote, actorps::test::error_text(remote));
    return *remote;
  }

  template <class T, class Handle, class... Ts>
  caf::expected<T> ask(const Handle& hdl, Ts&&... xs) {
    caf::scoped_actor self{client};
    caf::expected<T> out{caf::error{}};
    self->request(hdl, timeout, std::forward<Ts>(xs)...)
      .receive([&](T& x) { out = std::move(x); }, [&](caf::error& err) { out = std::move(err); });
    return out;
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(loopback, loopback_fixture)

BOOST_AUTO_TEST_CASE(shard_protocol_over_tcp) {
  auto local = make_parameter_shard(server, {0});
  auto shard = connect(local);
  shard_setup setup{0, {"round-robin", 1, {{"w", 512, 512}}, {{0, 0, 512, 0}}}, {"sgd", 0.5f}, 1,
                    {{0, 0, {actorps::test::random_values(512 * 512, 1)}}}};
  auto init = ask<setup_reply>(shard, init_atom_v, setup);
  BOOST_REQUIRE_MESSAGE(init, actorps::test::error_text(init));
  BOOST_TEST(!init->already_initialized);
  auto pulled = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{0, 0, 512 * 512}}});
  BOOST_REQUIRE(pulled);
  BOOST_TEST((pulled->slices[0].data == setup.initial[0].data)); // 1 MiB, bit for bit
  push_request push{0, 1, {{0, 0, {std::vector<float>(512 * 512, 2.0f)}}}};
  auto ack = ask<push_reply>(shard, push_atom_v, push);
  BOOST_REQUIRE(ack);
  BOOST_TEST(ack->version == 1u);
  pulled = ask<pull_reply>(shard, pull_atom_v, pull_request{0, {{0, 5, 1}}});
  BOOST_TEST(pulled->slices[0].data.values[0] == setup.initial[0].data.values[5] - 1.0f);
  // errors travel as actorps errors with their text
  auto bad = ask<pull_reply>(shard, pull_atom_v, pull_request{7, {{0, 0, 1}}});
  BOOST_REQUIRE(!bad);
  BOOST_TEST(bad.error() == errc::unknown_worker);
  caf::anon_send(local, stop_atom_v);
}

BOOST_AUTO_TEST_CASE(chief_protocol_over_tcp) {
  auto local = server.spawn(echo_chief);
  auto chief = connect(local);
  auto welcome = ask<worker_welcome>(chief, register_atom_v, worker_hello{3, "host-a", {{byte_order_probe_value}}});
  BOOST_REQUIRE_MESSAGE(welcome, actorps::test::error_text(welcome));
  BOOST_TEST(welcome->workers == 3u);
  BOOST_TEST(welcome->plan.variables[0].name == "host-a");
  caf::anon_send(chief, progress_atom_v, progress_report{0, 42, 2100, 12.5, false});
  for (int i = 0; i < 100 && *reported < 42; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  BOOST_TEST(*reported == 42);
  caf::anon_send_exit(local, caf::exit_reason::user_shutdown);
}

BOOST_AUTO_TEST_SUITE_END()
