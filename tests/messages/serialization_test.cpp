// Every registered message type round-trips through CAF's binary serializer using the production
// registration; tensors travel as raw copies.
#include "messages/register.hpp"
#include "messages/type_ids.hpp"

#include "tests/support/helpers.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>
#include <caf/event_based_actor.hpp>
#include <caf/message.hpp>
#include <caf/send.hpp>

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  std::unique_ptr<caf::actor_system> sys;

  fixture() {
    register_types(cfg);
    sys = std::make_unique<caf::actor_system>(cfg);
  }

  // Serialises x inside a caf::message (as the middleman does) and reads it back.
  template <class T>
  T round_trip(const T& x) {
    auto msg = caf::make_message(x);
    std::vector<char> buf;
    caf::binary_serializer sink{*sys, buf};
    BOOST_REQUIRE(!sink(msg));
    caf::message out;
    caf::binary_deserializer source{*sys, buf};
    BOOST_REQUIRE(!source(out));
    BOOST_REQUIRE(out.match_elements<T>());
    return out.get_as<T>(0);
  }
};

placement_plan sample_plan() {
  return {"round-robin", 2, {{"layer0/weights", 784, 160}, {"layer0/bias", 1, 160}}, {{0, 0, 392, 0}, {0, 392, 392, 1}, {1, 0, 1, 1}}, "fixed:2"};
}

variable_slice sample_slice(uint32_t var, size_t n) {
  return {var, 7, {actorps::test::random_values(n, var)}};
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(serialization, fixture)

BOOST_AUTO_TEST_CASE(every_registered_type_round_trips) {
  shard_setup setup{1, sample_plan(), {"adam", 0.001f, 0.9f, 0.8f, 0.99f, 1e-7f, 0.5f, 100}, 3,
                    {sample_slice(1, 160)}};
  setup.plan.scope = "problem_1";
  setup.session = {session_kind::sync, 2, 0, 1500};
  BOOST_TEST((round_trip(setup) == setup));
  setup_reply sr{true, 42};
  BOOST_TEST((round_trip(sr) == sr));
  pull_request pr{2, {{0, 0, 125440}, {1, 0, 160}}, true, "problem_1"};
  BOOST_TEST((round_trip(pr) == pr));
  pull_reply prep{9, {sample_slice(0, 1000), sample_slice(1, 0)}};
  BOOST_TEST((round_trip(prep) == prep));
  push_request push{1, 77, {sample_slice(0, 262144)}, true, 76};
  push.scope = "problem_2";
  BOOST_TEST((round_trip(push) == push));
  push_reply pa{78, {sample_slice(3, 50)}, 78, true};
  BOOST_TEST((round_trip(pa) == pa));
  worker_hello hello{3, "127.0.0.1", {{byte_order_probe_value}}};
  hello.devices = {"/job:worker/task:3/device:GPU:0", "/job:worker/task:3/device:GPU:1"};
  BOOST_TEST((round_trip(hello) == hello));
  worker_welcome welcome{sample_plan(), 4, 123};
  BOOST_TEST((round_trip(welcome) == welcome));
  progress_report rep{2, 50, 2500, 1234.5, true, 7, 100, 200, 3, 4, {uint64_t{1} << 33, 12345}};
  BOOST_TEST((round_trip(rep) == rep));
  shard_stats stats{100, 3, {1, 0, 7}, {5, 4, 0, 1}, {2}, {15, -1, 3}};
  BOOST_TEST((round_trip(stats) == stats));
  auto peer = sys->spawn([] { return caf::behavior{[](int) {}}; });
  slice_group group{2, {caf::actor_cast<caf::strong_actor_ptr>(peer), nullptr}};
  BOOST_TEST((round_trip(group) == group));
  caf::anon_send_exit(peer, caf::exit_reason::user_shutdown);
  layer_part part{1, 5, 3, true, {actorps::test::random_values(50 * 54, 4)}};
  BOOST_TEST((round_trip(part) == part));
  shard_snapshot snap{17, {sample_slice(0, 20)}, {sample_slice(0, 20)}, {}};
  BOOST_TEST((round_trip(snap) == snap));
  snapshot_read read{snapshot_op::read, 42, 2, {1, 16, 4}};
  BOOST_TEST((round_trip(read) == read));
  snapshot_piece piece{17, {{0, 0, 20}}, {{0, 0, 20}}, {}, sample_slice(0, 4)};
  BOOST_TEST((round_trip(piece) == piece));
  setup_piece restored{1, sample_slice(2, 8), false};
  BOOST_TEST((round_trip(restored) == restored));
  layer_part stop{2, 6, layer_part::stop_marker, false, {}};
  BOOST_TEST((round_trip(stop) == stop));
  std::vector<scope_info> scopes{{"problem_1", "kept", 9, 460800, 300}, {"", "in session", 3, 40, 2}};
  BOOST_TEST((round_trip(scopes) == scopes));
  gradient_request greq{4, 1, {7, 0, 54999}, 99};
  BOOST_TEST((round_trip(greq) == greq));
  gradient_reply grep{4, 1, 3, 1.5, {sample_slice(2, 5)}};
  BOOST_TEST((round_trip(grep) == grep));
  lease_request lreq{3, {{11, 500}, {12, 17}}};
  BOOST_TEST((round_trip(lreq) == lreq));
  data_lease lease{12, 4, {9, 59999, 0}, 1234567, 0};
  BOOST_TEST((round_trip(lease) == lease));
  worker_hello joiner{joining_worker, "h", {{1.5f}}, "dense0/weights 784x160", "balanced", 2};
  BOOST_TEST((round_trip(joiner) == joiner));
  // the tensor stream's typed half: slices without values, the frames described
  push_request bare{1, 77, {{0, 7, {}}}, true, 76};
  bare.reply_precision = wire_precision::bf16;
  const std::vector<stream_tensor> tensors{{stream_encoding::raw_fp32, 262144, 1048576},
                                           {stream_encoding::encoded, 0, 77},
                                           {stream_encoding::shared_fp32, 160, 0, 0x123456789c0ull}};
  stream_push sp{0x1234567890abcdefull, 5, bare, tensors};
  BOOST_TEST((round_trip(sp) == sp));
  stream_push_reply spr{{78, {{0, 7, {}}}, 78, false}, tensors};
  BOOST_TEST((round_trip(spr) == spr));
  stream_pull spl{42, 6, pr};
  BOOST_TEST((round_trip(spl) == spl));
  stream_pull_reply splr{{9, {{0, 0, {}}}}, tensors};
  BOOST_TEST((round_trip(splr) == splr));
  auto session = sys->spawn([] { return caf::behavior{[](int) {}}; });
  stream_offer offer{40001, 99, caf::actor_cast<caf::actor>(session), "actorps-stream-00000000000000ab"};
  auto offered = round_trip(offer);
  BOOST_TEST(offered.port == 40001);
  BOOST_TEST(offered.local == offer.local);
  BOOST_TEST(offered.token == 99u);
  BOOST_TEST((offered.session == offer.session));
  caf::anon_send_exit(session, caf::exit_reason::user_shutdown);
  shared_heap_offer heap{99, 7, uint64_t{1} << 30};
  BOOST_TEST((round_trip(heap) == heap));
  stream_note note{stream_note::kind::closed, 3, 4, caf::make_error(errc::peer_unreachable, "gone")};
  auto noted = round_trip(note);
  BOOST_TEST((noted.what == note.what && noted.link == 3u && noted.transfer == 4u && noted.error == note.error));
}

BOOST_AUTO_TEST_CASE(every_type_in_the_block_is_registered_under_its_name) {
  auto check = [&](const std::type_info& ti, const std::string& name) {
    BOOST_TEST(sys->types().portable_name(0, &ti) == name);
  };
  check(typeid(shard_setup), "actorps::shard_setup");
  check(typeid(setup_reply), "actorps::setup_reply");
  check(typeid(pull_request), "actorps::pull_request");
  check(typeid(pull_reply), "actorps::pull_reply");
  check(typeid(push_request), "actorps::push_request");
  check(typeid(push_reply), "actorps::push_reply");
  check(typeid(worker_hello), "actorps::worker_hello");
  check(typeid(worker_welcome), "actorps::worker_welcome");
  check(typeid(progress_report), "actorps::progress_report");
  check(typeid(shard_stats), "actorps::shard_stats");
  check(typeid(slice_group), "actorps::slice_group");
  check(typeid(layer_part), "actorps::layer_part");
  check(typeid(shard_snapshot), "actorps::shard_snapshot");
  check(typeid(snapshot_read), "actorps::snapshot_read");
  check(typeid(snapshot_piece), "actorps::snapshot_piece");
  check(typeid(setup_piece), "actorps::setup_piece");
  check(typeid(scope_info), "actorps::scope_info");
  check(typeid(gradient_request), "actorps::gradient_request");
  check(typeid(gradient_reply), "actorps::gradient_reply");
  check(typeid(stream_offer), "actorps::stream_offer");
  check(typeid(stream_push), "actorps::stream_push");
  check(typeid(stream_push_reply), "actorps::stream_push_reply");
  check(typeid(stream_pull), "actorps::stream_pull");
  check(typeid(stream_pull_reply), "actorps::stream_pull_reply");
  check(typeid(stream_note), "actorps::stream_note");
  check(typeid(shared_heap_offer), "actorps::shared_heap_offer");
  BOOST_TEST(caf::id_block::actorps::end - caf::id_block::actorps::begin == 29);
}

BOOST_AUTO_TEST_CASE(tensors_are_copied_raw) {
  // 1 MiB of floats costs 1 MiB plus a small header on the wire, not a varint per element.
  push_request push{0, 1, {sample_slice(0, 262144)}};
  std::vector<char> buf;
  caf::binary_serializer sink{*sys, buf};
  BOOST_REQUIRE(!sink(push));
  BOOST_TEST(buf.size() >= 262144u * 4);
  BOOST_TEST(buf.size() < 262144u * 4 + 64);
}

BOOST_AUTO_TEST_CASE(row_slices_carry_their_rows_raw) {
  // a table's row slice: rows and values round-trip; the rows cost 4 bytes each, no varints
  variable_slice rows{0, 4096, {actorps::test::random_values(3 * 32, 5)}, false, row_ids{{7, 4100, 1u << 25}}};
  pull_request pr{1, {{0, 4096, 96, row_ids{{7, 4100, 1u << 25}}}}, false, "s"};
  BOOST_TEST((round_trip(pr) == pr));
  push_request push{1, 3, {rows, sample_slice(2, 10)}};
  BOOST_TEST((round_trip(push) == push));
  BOOST_TEST(round_trip(push).grads[0].by_rows());
  BOOST_TEST(!round_trip(push).grads[1].by_rows());
  variable_slice many{0, 0, {float_vector(20000 * 16, 1.0f)}, false, row_ids{std::vector<uint32_t>(20000, 1u << 30)}};
  std::vector<char> buf;
  caf::binary_serializer sink{*sys, buf};
  BOOST_REQUIRE(!sink(many));
  BOOST_TEST(buf.size() >= 20000u * 17 * 4);
  BOOST_TEST(buf.size() < 20000u * 17 * 4 + 64);
  // a count that announces more rows than the message holds is refused before allocating
  buf.resize(buf.size() - 100); // (the rows come last)
  caf::binary_deserializer source{*sys, buf};
  variable_slice back;
  auto err = source(back);
  BOOST_TEST(static_cast<bool>(err));
  BOOST_TEST(describe(err).find("announces 80000 bytes") != std::string::npos, describe(err));
}

// Refused frames (oversized, truncated, garbled): tests/messages/tensor_test.cpp.

BOOST_AUTO_TEST_SUITE_END()
