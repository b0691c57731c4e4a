// Tests of control/stream_transfer: slices' tensors detached, "sent" through their frames' bytes
// into the receiver's destinations and attached again come back equal at every precision, dense
// and sparse, at boundary sizes; a description that does not fit is refused by name before
// anything is allocated; a garbled encoding is named.
#include "control/stream_transfer.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <array>
#include <cstring>
#include <random>

using namespace actorps;

namespace {

std::vector<variable_slice> slices_of(const std::vector<size_t>& sizes, wire_precision p, bool sparse, uint32_t seed) {
  std::mt19937 gen{seed};
  std::normal_distribution<float> dist;
  std::vector<variable_slice> out;
  for (size_t i = 0; i < sizes.size(); ++i) {
    float_vector v(sizes[i]);
    for (auto& x : v)
      x = (sparse && gen() % 3 != 0) ? 0.0f : dist(gen);
    variable_slice s{static_cast<uint32_t>(i), static_cast<uint32_t>(7 * i), {std::move(v)}, i % 2 == 1};
    round_to_precision(p, s.data.values.data(), s.data.values.size());
    s.data.precision = p;
    s.data.sparse = sparse;
    out.push_back(std::move(s));
  }
  return out;
}

// What the stream does: copies every frame's bytes into the announced slot.
std::vector<variable_slice> round_trip(std::vector<variable_slice> sent) {
  auto out = outgoing_tensors::detach(sent);
  BOOST_REQUIRE(out);
  for (auto& s : sent)
    BOOST_TEST(s.data.values.empty()); // (the typed message goes without values)
  auto in = incoming_tensors::prepare(out->tensors(), sent.size(), uint64_t{1} << 30, "worker 3");
  BOOST_REQUIRE(in);
  auto pieces = out->pieces();
  auto slots = in->slots();
  BOOST_REQUIRE_EQUAL(pieces.size(), slots.size());
  for (size_t i = 0; i < pieces.size(); ++i) {
    BOOST_REQUIRE_EQUAL(pieces[i].bytes, slots[i].bytes);
    if (pieces[i].bytes > 0)
      std::memcpy(slots[i].data, pieces[i].data, pieces[i].bytes);
  }
  auto received = sent; // (the typed message: variables, offsets, flags)
  BOOST_REQUIRE(!in->attach(received, "worker 3"));
  return received;
}

} // namespace

BOOST_AUTO_TEST_SUITE(stream_transfer)

BOOST_AUTO_TEST_CASE(tensors_come_back_equal_at_every_precision_and_size) {
  const std::vector<size_t> sizes{0, 1, 7, 1000, (1u << 18) + 3};
  for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16})
    for (bool sparse : {false, true}) {
      auto sent = slices_of(sizes, p, sparse, 11);
      auto got = round_trip(sent);
      BOOST_REQUIRE_EQUAL(got.size(), sent.size());
      for (size_t i = 0; i < sent.size(); ++i) {
        BOOST_TEST(got[i].variable == sent[i].variable);
        BOOST_TEST(got[i].offset == sent[i].offset);
        BOOST_TEST(got[i].delta == sent[i].delta);
        BOOST_TEST((got[i].data == sent[i].data), "precision " << to_string(p) << " sparse " << sparse << " slice " << i);
      }
    }
}

BOOST_AUTO_TEST_CASE(fp32_dense_tensors_travel_raw_and_others_encoded) {
  auto a = slices_of({5}, wire_precision::fp32, false, 1);
  auto b = slices_of({5}, wire_precision::bf16, false, 1);
  auto c = slices_of({500}, wire_precision::fp32, true, 1);
  auto oa = outgoing_tensors::detach(a);
  auto ob = outgoing_tensors::detach(b);
  auto oc = outgoing_tensors::detach(c);
  BOOST_TEST((oa->tensors()[0] == stream_tensor{stream_encoding::raw_fp32, 5, 20}));
  BOOST_TEST((ob->tensors()[0].encoding == stream_encoding::encoded));
  BOOST_TEST(ob->bytes() < 20u); // (16-bit values)
  BOOST_TEST((oc->tensors()[0].encoding == stream_encoding::encoded));
  BOOST_TEST(oc->bytes() < 500u * 4u); // (a third of the values, with their indices)
}

BOOST_AUTO_TEST_CASE(descriptions_that_do_not_fit_are_refused_by_name) {
  auto refused = [](const std::vector<stream_tensor>& t, size_t slices, uint64_t cap, const std::string& what) {
    auto in = incoming_tensors::prepare(t, slices, cap, "worker 3");
    BOOST_REQUIRE(!in);
    BOOST_TEST((in.error() == errc::protocol_error));
    BOOST_TEST(describe(in.error()) == "protocol_error: tensor stream from worker 3: transfer refused: " + what);
  };
  const stream_tensor ok{stream_encoding::raw_fp32, 4, 16};
  refused({ok, ok}, 3, 1000, "2 tensors described for 3 slices");
  refused({ok, {stream_encoding::raw_fp32, 4, 17}}, 2, 1000, "tensor 1 announces 17 bytes for 4 fp32 values");
  refused({{static_cast<stream_encoding>(7), 0, 4}}, 1, 1000, "tensor 0 has unknown encoding 7");
  refused({{stream_encoding::raw_fp32, static_cast<uint32_t>(max_tensor_floats + 1), 0}}, 1, uint64_t{1} << 40,
          "tensor 0 has 268435457 values, more than 268435456");
  refused({ok, ok, ok}, 3, 40, "more than 40 bytes in one transfer");
  auto none = incoming_tensors::prepare({}, 0, 0, "worker 3");
  BOOST_REQUIRE(none);
  BOOST_TEST(none->empty());
}

BOOST_AUTO_TEST_CASE(a_garbled_encoding_is_named) {
  auto sent = slices_of({9}, wire_precision::bf16, false, 5);
  auto out = outgoing_tensors::detach(sent);
  auto in = incoming_tensors::prepare(out->tensors(), 1, 1000, "shard 1");
  BOOST_REQUIRE(in);
  auto slot = in->slots().at(0);
  std::memset(slot.data, 0xff, slot.bytes); // an unknown encoding byte
  auto err = in->attach(sent, "shard 1");
  BOOST_TEST((err == errc::protocol_error));
  BOOST_TEST(describe(err).find("tensor stream from shard 1: tensor 0 of variable 0: ") != std::string::npos, describe(err));
}

// The stream's ordering rule, seeded: a push's frames and its typed request travel on two
// connections, so either may come first. The receiver holds a frame whose transfer is not yet
// announced (reading nothing further) until the typed request announces it; whatever the
// interleaving, every transfer arrives whole, exactly once, in its own destinations.
BOOST_AUTO_TEST_CASE(seeded_interleavings_of_frames_and_announcements_deliver_every_transfer) {
  for (uint32_t seed = 1; seed <= 200; ++seed) {
    std::mt19937 gen{seed};
    const size_t transfers = 1 + gen() % 6;
    // the sender's side: each transfer's tensors, as frames in order on the stream
    std::vector<std::vector<variable_slice>> sent(transfers);
    std::vector<outgoing_tensors> out(transfers);
    struct wire_frame {
      std::array<uint8_t, stream_header_bytes> header;
      std::vector<uint8_t> payload;
    };
    std::vector<wire_frame> stream;
    for (size_t t = 0; t < transfers; ++t) {
      std::vector<size_t> sizes;
      for (size_t k = 1 + gen() % 3; k > 0; --k)
        sizes.push_back(gen() % 300);
      sent[t] = slices_of(sizes, gen() % 2 ? wire_precision::fp32 : wire_precision::bf16, gen() % 4 == 0, seed * 10 + t);
      auto copy = sent[t];
      out[t] = *outgoing_tensors::detach(copy);
      auto pieces = out[t].pieces();
      for (uint32_t i = 0; i < pieces.size(); ++i) {
        auto f = make_stream_frame(t + 1, i, pieces[i].data, pieces[i].bytes);
        const auto* p = static_cast<const uint8_t*>(pieces[i].data);
        stream.push_back({f.header, std::vector<uint8_t>(p, p + pieces[i].bytes)});
      }
    }
    // the receiver: announcements (the typed requests, in order) interleaved at random with frames
    stream_receiver rx{"worker 1", 1 << 24, unannounced_frames::hold};
    std::vector<incoming_tensors> in(transfers);
    std::vector<int> completed(transfers, 0);
    size_t next_frame = 0, next_announce = 0;
    bool holding = false;
    auto read_frame = [&]() -> bool { // false: held
      auto fate = rx.on_header(stream[next_frame].header.data());
      BOOST_REQUIRE_MESSAGE(fate, test::error_text(fate));
      if (fate->what == frame_fate::kind::hold)
        return false;
      auto& payload = stream[next_frame].payload;
      BOOST_REQUIRE_EQUAL(fate->slot.bytes, payload.size());
      std::copy(payload.begin(), payload.end(), fate->slot.data);
      auto done = rx.on_payload();
      BOOST_REQUIRE(done);
      if (*done)
        ++completed[**done - 1];
      ++next_frame;
      return true;
    };
    while (next_frame < stream.size() || next_announce < transfers) {
      const bool announce = next_announce < transfers && (holding || next_frame == stream.size() || gen() % 2 == 0);
      if (announce) {
        const size_t t = next_announce++;
        auto copy = sent[t];
        in[t] = *incoming_tensors::prepare(out[t].tensors(), copy.size(), 1 << 24, "worker 1");
        BOOST_REQUIRE(!rx.announce(t + 1, in[t].slots()));
        if (holding && rx.held() == t + 1) { // the held frame's turn: read it on
          auto slot = rx.resume();
          BOOST_REQUIRE(slot);
          auto& payload = stream[next_frame].payload;
          std::copy(payload.begin(), payload.end(), slot->data);
          auto done = rx.on_payload();
          BOOST_REQUIRE(done);
          if (*done)
            ++completed[**done - 1];
          ++next_frame;
          holding = false;
        }
      } else if (!holding) {
        holding = !read_frame();
      }
    }
    for (size_t t = 0; t < transfers; ++t) {
      BOOST_TEST_CONTEXT("seed " << seed << " transfer " << t) {
        BOOST_TEST(completed[t] == (out[t].tensors().empty() ? 0 : 1));
        auto got = sent[t];
        for (auto& s : got)
          s.data.values = float_vector{};
        BOOST_REQUIRE(!in[t].attach(got, "worker 1"));
        for (size_t i = 0; i < got.size(); ++i)
          BOOST_TEST((got[i].data == sent[t][i].data));
      }
    }
    BOOST_TEST(rx.pending() == 0u);
  }
}

// cluster.local-shared-memory: a push's tensors that all lie in the shared heap, dense at any
// precision (a 16-bit tensor's floats are already rounded to it; its slice keeps the precision),
// are named there (offsets, no frames); one outside it, or one sparse, leaves every tensor where
// it was, for frames.
BOOST_AUTO_TEST_CASE(tensors_in_the_shared_heap_are_named_there_without_frames) {
  auto heap = shared_heap::of_process(size_t{1} << 20);
  BOOST_REQUIRE(heap);
  std::vector<variable_slice> mixed, sparse;
  std::vector<std::vector<variable_slice>> dense; // (fp32, bf16, fp16)
  {
    shared_heap::scope in_heap;
    for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16})
      dense.push_back(slices_of({300, 5}, p, false, 2));
    mixed = slices_of({300}, wire_precision::fp32, false, 3);
    sparse = slices_of({300, 5}, wire_precision::fp32, true, 6);
  }
  mixed.push_back(slices_of({5}, wire_precision::fp32, false, 5).front()); // (made outside the scope)
  BOOST_REQUIRE((*heap)->owns(mixed[0].data.values.data()));
  BOOST_REQUIRE(!(*heap)->owns(mixed[1].data.values.data()));
  std::vector<stream_tensor> named_there;
  for (auto& slices : dense) {
    const auto sent = slices;
    const float* first = slices[0].data.values.data();
    auto out = outgoing_tensors::in_heap(slices, **heap);
    BOOST_REQUIRE(out);
    BOOST_TEST((out->tensors()[0] == stream_tensor{stream_encoding::shared_fp32, 300, 0, (*heap)->offset_of(first)}));
    BOOST_TEST((out->tensors()[1].encoding == stream_encoding::shared_fp32));
    BOOST_TEST(out->pieces().empty());
    BOOST_TEST(out->bytes() == 0u);
    for (size_t i = 0; i < slices.size(); ++i) {
      BOOST_TEST(slices[i].data.values.empty()); // (the typed message goes without values)
      BOOST_TEST((slices[i].data.precision == sent[i].data.precision));
    }
    // what the receiver reads there: the floats as they were, their precision the slice's
    BOOST_TEST((std::vector<float>(first, first + 300) == sent[0].data.to_vector())); // (held by out)
    named_there = out->tensors();
  }
  for (auto* slices : {&mixed, &sparse}) {
    const auto before = *slices;
    BOOST_TEST(!outgoing_tensors::in_heap(*slices, **heap));
    for (size_t i = 0; i < slices->size(); ++i)
      BOOST_TEST(((*slices)[i].data.values == before[i].data.values)); // (unchanged: for frames)
  }
  // destinations prepared in the heap's scope are described there, for the peer to write into;
  // prepared outside it, none
  const std::vector<stream_tensor> form{{stream_encoding::raw_fp32, 300, 1200}, {stream_encoding::raw_fp32, 5, 20}};
  caf::expected<incoming_tensors> aside{incoming_tensors{}};
  {
    shared_heap::scope in_heap;
    aside = incoming_tensors::prepare(form, 2, 1 << 20, "shard 0");
  }
  BOOST_REQUIRE(aside);
  auto named = aside->shared_in(**heap);
  BOOST_REQUIRE_EQUAL(named.size(), 2u);
  BOOST_TEST((named[0].encoding == stream_encoding::shared_fp32 && named[0].floats == 300u && named[0].bytes == 0u));
  auto slot = aside->slots()[0];
  BOOST_TEST(named[0].at == (*heap)->offset_of(slot.data));
  auto plain = incoming_tensors::prepare(form, 2, 1 << 20, "shard 0");
  BOOST_REQUIRE(plain);
  BOOST_TEST(plain->shared_in(**heap).empty());
  // a receiver that meets a shared tensor where frames are due refuses it by name
  auto in = incoming_tensors::prepare(named_there, 2, 1 << 20, "worker 3");
  BOOST_REQUIRE(!in);
  BOOST_TEST(describe(in.error()).find("tensor 0 names values in a shared heap where a frame is due") != std::string::npos, describe(in.error()));
}

BOOST_AUTO_TEST_SUITE_END()
