// Tests of control/stream_calls: every typed message of the stream round-trips through a message
// frame's bytes (values inside, or none where they travel as frames); bytes that are not the
// message named, or carry bytes after it, are refused by name; refusals keep an error's code and
// category, ours and CAF's.
#include "control/stream_calls.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <caf/sec.hpp>

#include <boost/test/unit_test.hpp>

using namespace actorps;

namespace {

template <class T>
T round_trip(const T& x) {
  auto bytes = encode_call(x);
  BOOST_REQUIRE(bytes);
  auto back = decode_call<T>(*bytes, "worker 3", 17);
  BOOST_REQUIRE_MESSAGE(back, test::error_text(back));
  return *back;
}

} // namespace

BOOST_AUTO_TEST_SUITE(stream_calls)

BOOST_AUTO_TEST_CASE(every_message_round_trips) {
  push_request push = push_request::of(2, 41, {{0, 0, {{1.0f, -2.0f, 3.5f}}}, {1, 8, {float_vector{}}}});
  push.return_values = true;
  push.scope = "tower";
  push.part = 1;
  push.parts = 2;
  const stream_push sp{0xfeedull, 17, push, {{stream_encoding::raw_fp32, 4, 16}, {stream_encoding::encoded, 0, 9}}, 18};
  BOOST_TEST((round_trip(sp) == sp));
  const stream_pull pl{0xfeedull, 17, pull_request::of(2, {{0, 0, 3}, {1, 8, 4}}, "tower")};
  BOOST_TEST((round_trip(pl) == pl));
  const stream_pull_reply pr{pull_reply{7, {{0, 0, {{1.0f, 2.0f}}}}}, {}};
  BOOST_TEST((round_trip(pr) == pr));
  const stream_push_reply ps{push_reply{8, {}}, {{stream_encoding::raw_fp32, 3, 12}}};
  BOOST_TEST((round_trip(ps) == ps));
  const stream_refusal rf{true, static_cast<uint8_t>(errc::unknown_variable), "shard 0: variable 7"};
  BOOST_TEST((round_trip(rf) == rf));
  BOOST_TEST((call_of(&sp) == stream_call::push));
  BOOST_TEST((call_of(&pr) == stream_call::pull_reply));
  BOOST_TEST(call_name(static_cast<uint32_t>(stream_call::push_reply)) == "push reply");
  BOOST_TEST(call_name(9) == "message kind 9");
}

BOOST_AUTO_TEST_CASE(bytes_that_are_not_the_message_are_refused_by_name) {
  auto bytes = encode_call(stream_pull{1, 2, pull_request::of(0, {{0, 0, 3}})});
  BOOST_REQUIRE(bytes);
  auto longer = *bytes;
  longer.push_back('x');
  auto extra = decode_call<stream_pull>(longer, "worker 3", 2);
  BOOST_REQUIRE(!extra);
  BOOST_TEST(describe(extra.error()).find("tensor stream from worker 3: the message of transfer 2 is not a pull: ")
               != std::string::npos, describe(extra.error()));
  BOOST_TEST(describe(extra.error()).find("1 bytes after it") != std::string::npos, describe(extra.error()));
  auto shorter = *bytes;
  shorter.resize(shorter.size() / 2);
  BOOST_TEST(!decode_call<stream_pull>(shorter, "worker 3", 2));
  const std::vector<char> junk(64, '\x7f');
  auto as_push = decode_call<stream_push>(junk, "worker 3", 5);
  BOOST_REQUIRE(!as_push);
  BOOST_TEST((code_of(as_push.error()) == errc::protocol_error));
}

BOOST_AUTO_TEST_CASE(refusals_keep_the_code_and_category) {
  const auto ours = caf::make_error(errc::unknown_variable, "shard 0: no variable 7");
  auto back = error_of(refusal_of(ours));
  BOOST_TEST((back == errc::unknown_variable));
  BOOST_TEST(describe(back) == describe(ours));
  const auto theirs = caf::make_error(caf::sec::request_timeout);
  auto back2 = error_of(refusal_of(theirs));
  BOOST_TEST((back2.category() == theirs.category()));
  BOOST_TEST(back2.code() == theirs.code());
  BOOST_TEST((back2.category() != caf::atom("actorps"))); // (the link ends on these, as before)
}

BOOST_AUTO_TEST_SUITE_END()
