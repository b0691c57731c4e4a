// Tests of control/tensor_stream: frames round-trip at every precision and at boundary sizes
// (empty, one value, odd 16-bit counts, 1 MiB + 2 bytes) straight into the announced
// destinations; oversized, undersized, garbled, unannounced, repeated and out-of-range frames and
// a payload without its header are refused by name with nothing written and the ledger unchanged;
// a connection cut mid-payload or mid-transfer names what it cut; random headers never pass;
// message frames pass without announcement, checked for their kind and size.
#include "control/tensor_stream.hpp"

#include "common/errc.hpp"
#include "messages/stream_protocol.hpp"
#include "tests/support/helpers.hpp"
#include "wire/precision.hpp"

#include <boost/test/unit_test.hpp>

#include <cstring>
#include <random>
#include <vector>

using namespace actorps;

namespace {

// What a socket would do: the header's bytes to the receiver, then the payload's into the slot.
caf::expected<std::optional<uint64_t>> deliver(stream_receiver& r, const stream_frame& f) {
  auto fate = r.on_header(f.header.data());
  if (!fate)
    return fate.error();
  BOOST_REQUIRE(fate->what == frame_fate::kind::store);
  std::memcpy(fate->slot.data, f.data, f.bytes);
  return r.on_payload();
}

std::vector<uint8_t> bytes_of(const std::vector<float>& xs, wire_precision p) {
  std::vector<uint8_t> out(xs.size() * bytes_per_value(p));
  if (p == wire_precision::fp32)
    std::memcpy(out.data(), xs.data(), out.size());
  else
    encode_halves(p, xs.data(), xs.size(), reinterpret_cast<uint16_t*>(out.data()));
  return out;
}

bool says(const caf::error& err, const std::string& text) {
  return err && describe(err).find(text) != std::string::npos;
}

} // namespace

BOOST_AUTO_TEST_SUITE(tensor_stream)

BOOST_AUTO_TEST_CASE(headers_round_trip_and_garbled_ones_are_named) {
  uint8_t raw[stream_header_bytes];
  encode_stream_header({0x0102030405060708ull, 7, 4096}, raw);
  BOOST_TEST(raw[0] == 'A');
  BOOST_TEST(raw[3] == 'S'); // "APTS"
  auto h = decode_stream_header(raw);
  BOOST_REQUIRE(h);
  BOOST_TEST(h->transfer == 0x0102030405060708ull);
  BOOST_TEST(h->index == 7u);
  BOOST_TEST(h->bytes == 4096u);
  uint8_t bad[stream_header_bytes];
  std::memcpy(bad, raw, sizeof raw);
  bad[0] ^= 1;
  BOOST_TEST(says(decode_stream_header(bad).error(), "bad magic"));
  std::memcpy(bad, raw, sizeof raw);
  bad[4] = 2;
  BOOST_TEST(says(decode_stream_header(bad).error(), "version 2, this node speaks 1"));
  std::memcpy(bad, raw, sizeof raw);
  bad[6] = 2; // (1: a message frame)
  BOOST_TEST(says(decode_stream_header(bad).error(), "unknown flags 2"));
}

BOOST_AUTO_TEST_CASE(tensors_round_trip_at_every_precision_and_boundary_size) {
  for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16}) {
    BOOST_TEST_CONTEXT(to_string(p)) {
      const size_t counts[] = {0, 1, 3, 262'144 + 1}; // empty, one value, odd, 1 MiB (fp32) + one
      std::vector<std::vector<uint8_t>> sent, got;
      for (size_t i = 0; i < std::size(counts); ++i) {
        sent.push_back(bytes_of(test::random_values(counts[i], static_cast<uint32_t>(i + 1)), p));
        got.emplace_back(sent.back().size(), uint8_t{0xEE});
      }
      stream_receiver r{"worker 1", 8u << 20};
      std::vector<stream_slot> slots;
      for (auto& g : got)
        slots.push_back({g.data(), static_cast<uint32_t>(g.size())});
      BOOST_REQUIRE(!r.announce(42, slots));
      // frames in any order; the last one completes the transfer
      const size_t order[] = {2, 0, 3, 1};
      for (size_t n = 0; n < std::size(order); ++n) {
        const size_t i = order[n];
        auto done = deliver(r, make_stream_frame(42, static_cast<uint32_t>(i), sent[i].data(),
                                                 static_cast<uint32_t>(sent[i].size())));
        BOOST_REQUIRE(done);
        BOOST_TEST((*done == (n + 1 == std::size(order) ? std::optional<uint64_t>{42} : std::nullopt)));
      }
      BOOST_TEST((got == sent));
      BOOST_TEST(r.pending() == 0u);
      BOOST_TEST(!r.on_close()); // nothing was pending
    }
  }
}

BOOST_AUTO_TEST_CASE(bad_frames_are_refused_by_name_with_nothing_written) {
  std::vector<uint8_t> dest(8, 0xEE), other(4, 0xEE);
  stream_receiver r{"worker 3", 1024};
  BOOST_REQUIRE(!r.announce(5, {{dest.data(), 8}, {other.data(), 4}}));
  const std::vector<uint8_t> payload(16, 0x11);
  auto refused = [&](const stream_frame& f, const std::string& text) {
    auto fate = r.on_header(f.header.data());
    BOOST_TEST(!fate, text);
    if (!fate) {
      BOOST_TEST(says(fate.error(), "tensor stream from worker 3: " + text), describe(fate.error()));
      BOOST_TEST((fate.error() == errc::protocol_error));
    }
  };
  refused(make_stream_frame(5, 0, payload.data(), 16), "frame of 16 bytes for tensor 0 of transfer 5, announced 8");
  refused(make_stream_frame(5, 0, payload.data(), 4), "frame of 4 bytes for tensor 0 of transfer 5, announced 8");
  refused(make_stream_frame(6, 0, payload.data(), 8), "frame of unannounced transfer 6");
  refused(make_stream_frame(5, 2, payload.data(), 8), "frame for tensor 2 of transfer 5, which has 2");
  auto garbled = make_stream_frame(5, 0, payload.data(), 8);
  garbled.header[1] = 'X';
  refused(garbled, "stream frame: bad magic");
  auto without = r.on_payload();
  BOOST_TEST(says(without.error(), "a payload without its header"));
  BOOST_TEST((dest == std::vector<uint8_t>(8, 0xEE)));
  BOOST_TEST((other == std::vector<uint8_t>(4, 0xEE)));
  BOOST_TEST(r.pending() == 1u); // the ledger as it was: the right frames still go through
  BOOST_REQUIRE(deliver(r, make_stream_frame(5, 0, payload.data(), 8)));
  refused(make_stream_frame(5, 0, payload.data(), 8), "second frame for tensor 0 of transfer 5");
  auto done = deliver(r, make_stream_frame(5, 1, payload.data(), 4));
  BOOST_REQUIRE(done);
  BOOST_TEST((*done == std::optional<uint64_t>{5}));
  BOOST_TEST((dest == std::vector<uint8_t>(8, 0x11)));
}

// Holding: a frame that comes before its transfer's announcement waits for it (reading nothing
// more), then goes where the announcement says; a held frame still meets every other check.
BOOST_AUTO_TEST_CASE(a_frame_ahead_of_its_announcement_is_held_until_it_comes) {
  std::vector<uint8_t> dest(8, 0xEE);
  const std::vector<uint8_t> payload(8, 0x33);
  stream_receiver r{"worker 4", 1024, unannounced_frames::hold};
  auto frame = make_stream_frame(4, 0, payload.data(), 8);
  auto fate = r.on_header(frame.header.data());
  BOOST_REQUIRE(fate);
  BOOST_TEST((fate->what == frame_fate::kind::hold));
  BOOST_TEST((r.held() == std::optional<uint64_t>{4}));
  BOOST_TEST(says(r.on_header(frame.header.data()).error(), "a header while a frame of transfer 4 was held"));
  BOOST_REQUIRE(!r.announce(4, {{dest.data(), 8}}));
  auto slot = r.resume();
  BOOST_REQUIRE(slot);
  BOOST_TEST(slot->data == dest.data());
  std::memcpy(slot->data, payload.data(), 8);
  auto done = r.on_payload();
  BOOST_REQUIRE(done);
  BOOST_TEST((*done == std::optional<uint64_t>{4}));
  BOOST_TEST((dest == payload));
  BOOST_TEST(!r.held().has_value());
  // held, then announced with another size: refused on resume
  auto big = make_stream_frame(5, 0, payload.data(), 8);
  BOOST_REQUIRE(r.on_header(big.header.data()));
  BOOST_REQUIRE(!r.announce(5, {{dest.data(), 4}}));
  BOOST_TEST(says(r.resume().error(), "frame of 8 bytes for tensor 0 of transfer 5, announced 4"));
  BOOST_TEST(says(r.on_close(), "cutting short a frame of transfer 5 held for its announcement"));
}

// Message frames (the typed messages in band) need no announcement: their payload goes to the
// reader's own buffer and on_message() names their transfer and kind; an unknown kind, a message
// above the cap, or one cut short is refused by name, and the ledger stays as it was.
BOOST_AUTO_TEST_CASE(message_frames_pass_without_announcement_and_are_checked) {
  std::vector<uint8_t> dest(8, 0xEE);
  const std::vector<char> body(100, 'm');
  stream_receiver r{"worker 2", 1000, unannounced_frames::hold};
  BOOST_REQUIRE(!r.announce(3, {{dest.data(), 8}}));
  auto f = make_message_frame(9, static_cast<uint32_t>(stream_call::push), body.data(), 100);
  auto h = decode_stream_header(f.header.data());
  BOOST_REQUIRE(h);
  BOOST_TEST(h->message);
  auto fate = r.on_header(f.header.data());
  BOOST_REQUIRE(fate);
  BOOST_TEST((fate->what == frame_fate::kind::message));
  BOOST_TEST(fate->slot.bytes == 100u);
  BOOST_TEST(!r.on_payload()); // (a message is not a tensor's payload)
  auto done = r.on_message();
  BOOST_REQUIRE(done);
  BOOST_TEST(done->transfer == 9u);
  BOOST_TEST(done->call == static_cast<uint32_t>(stream_call::push));
  BOOST_TEST(!r.on_message()); // (none due now)
  BOOST_TEST(r.pending() == 1u);
  auto unknown = make_message_frame(9, 77, body.data(), 100);
  BOOST_TEST(says(r.on_header(unknown.header.data()).error(), "a message of unknown kind 77 for transfer 9"));
  auto big = make_message_frame(9, static_cast<uint32_t>(stream_call::pull), body.data(), 1001);
  BOOST_TEST(says(r.on_header(big.header.data()).error(), "a message of 1001 bytes for transfer 9, more than the cap of 1000"));
  BOOST_REQUIRE(r.on_header(f.header.data())); // ... and its payload never comes
  BOOST_TEST(says(r.on_close(), "cutting short a message of transfer 9 (100 bytes); transfer 3 (1 of 1 tensors missing)"));
  BOOST_TEST((dest == std::vector<uint8_t>(8, 0xEE)));
}

BOOST_AUTO_TEST_CASE(announcements_are_checked) {
  std::vector<uint8_t> a(600), b(600);
  stream_receiver r{"worker 0", 1000};
  BOOST_REQUIRE(!r.announce(1, {{a.data(), 600}}));
  BOOST_TEST(says(r.announce(1, {{b.data(), 10}}), "transfer 1 announced twice"));
  BOOST_TEST(says(r.announce(2, {}), "transfer 2 announced without tensors"));
  BOOST_TEST(says(r.announce(3, {{b.data(), 600}}), "would hold 1200 bytes pending, more than the cap of 1000"));
  BOOST_TEST(r.cancel(1));
  BOOST_TEST(!r.cancel(1));
  BOOST_TEST(!r.announce(3, {{b.data(), 600}})); // the cancelled transfer's bytes are free again
}

BOOST_AUTO_TEST_CASE(a_cut_connection_names_what_it_cut_short) {
  std::vector<uint8_t> a(8), b(8), c(4);
  stream_receiver r{"shard 0", 1024};
  BOOST_REQUIRE(!r.announce(7, {{a.data(), 8}, {b.data(), 8}}));
  BOOST_REQUIRE(!r.announce(9, {{c.data(), 4}}));
  const std::vector<uint8_t> payload(8, 1);
  BOOST_REQUIRE(deliver(r, make_stream_frame(7, 0, payload.data(), 8)));
  auto frame = make_stream_frame(7, 1, payload.data(), 8);
  BOOST_REQUIRE(r.on_header(frame.header.data())); // ... and the payload never comes
  BOOST_TEST(says(r.on_header(frame.header.data()).error(), "a header while the payload of tensor 1 of transfer 7 was due"));
  BOOST_TEST(!r.cancel(7)); // its destination is being written
  auto err = r.on_close();
  BOOST_TEST(says(err, "tensor stream from shard 0: connection closed, cutting short the payload of tensor 1 of "
                       "transfer 7 (8 bytes); transfer 7 (1 of 2 tensors missing); transfer 9 (1 of 1 tensors missing)"),
             describe(err));
  BOOST_TEST(r.pending() == 0u);
}

// The probe: headers of random bytes, and random bytes behind a valid magic, never hand out a
// destination.
BOOST_AUTO_TEST_CASE(random_headers_never_pass) {
  std::vector<uint8_t> dest(64, 0xEE);
  stream_receiver r{"a stranger", 1 << 20};
  BOOST_REQUIRE(!r.announce(1, {{dest.data(), 64}}));
  std::mt19937 gen{2026};
  int passed = 0;
  for (int i = 0; i < 20'000; ++i) {
    uint8_t header[stream_header_bytes];
    for (auto& x : header)
      x = static_cast<uint8_t>(gen());
    if (i % 2 == 0) {
      uint8_t good[stream_header_bytes];
      encode_stream_header({}, good);
      std::memcpy(header, good, 8); // magic, version and flags right, the rest random
    }
    if (r.on_header(header))
      ++passed;
  }
  BOOST_TEST(passed == 0);
  BOOST_TEST(r.pending() == 1u);
  BOOST_TEST((dest == std::vector<uint8_t>(64, 0xEE)));
}

BOOST_AUTO_TEST_SUITE_END()
