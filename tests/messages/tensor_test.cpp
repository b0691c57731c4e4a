// Tensor frames: round trips at every precision, dense and sparse, at boundary sizes; frames
// that are truncated, oversized or garbled are refused with a named error before anything is
// allocated.
#include "messages/tensor.hpp"

#include "wire/precision.hpp"

#include <caf/actor_system.hpp>
#include <caf/actor_system_config.hpp>
#include <caf/binary_deserializer.hpp>
#include <caf/binary_serializer.hpp>

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <random>

using namespace actorps;

namespace {

struct fixture {
  caf::actor_system_config cfg;
  caf::actor_system sys{cfg};

  std::vector<char> save(tensor_buffer x) {
    std::vector<char> buf;
    caf::binary_serializer sink{sys, buf};
    BOOST_REQUIRE(!inspect(static_cast<caf::serializer&>(sink), x));
    return buf;
  }

  caf::error load(const std::vector<char>& buf, tensor_buffer& out) {
    caf::binary_deserializer source{sys, buf};
    return inspect(static_cast<caf::deserializer&>(source), out);
  }

  tensor_buffer round_trip(const tensor_buffer& x) {
    tensor_buffer out;
    auto err = load(save(x), out);
    BOOST_REQUIRE_MESSAGE(!err, caf::to_string(err));
    return out;
  }
};

tensor_buffer random_tensor(size_t n, wire_precision p, bool sparse, unsigned seed) {
  std::mt19937 rng{seed};
  std::normal_distribution<float> d;
  tensor_buffer t;
  t.values.resize(n);
  for (size_t i = 0; i < n; ++i)
    t.values[i] = sparse && i % 7 != 3 ? 0.0f : d(rng);
  round_to_precision(p, t.values.data(), n);
  t.precision = p;
  t.sparse = sparse;
  return t;
}

std::string message_of(const caf::error& err) {
  return caf::to_string(err);
}

} // namespace

BOOST_FIXTURE_TEST_SUITE(tensor, fixture)

// A copy (constructed or assigned, of itself too) holds the same values, precision and layout in
// storage of its own; a moved-from tensor's values go along.
BOOST_AUTO_TEST_CASE(a_copy_is_the_same_tensor_in_storage_of_its_own) {
  tensor_buffer a{std::vector<float>{1.0f, -2.5f, 3.0f}};
  a.precision = wire_precision::bf16;
  a.sparse = true;
  tensor_buffer b{a};
  BOOST_TEST(b.values == a.values);
  BOOST_TEST((b.precision == wire_precision::bf16));
  BOOST_TEST(b.sparse);
  BOOST_TEST(b.values.data() != a.values.data());
  b.values[0] = 9.0f;
  BOOST_TEST(a.values[0] == 1.0f);
  tensor_buffer c;
  c = a;
  BOOST_TEST(c.values == a.values);
  BOOST_TEST(c.sparse);
  c = c; // (itself: unchanged)
  BOOST_TEST(c.values == a.values);
  tensor_buffer empty_copy{tensor_buffer{}};
  BOOST_TEST(empty_copy.values.empty());
  const float* where = a.values.data();
  tensor_buffer moved{std::move(a)};
  BOOST_TEST(moved.values.data() == where);
}

BOOST_AUTO_TEST_CASE(every_precision_and_layout_round_trips_at_boundary_sizes) {
  for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16})
    for (bool sparse : {false, true})
      for (size_t n : {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{127}, size_t{128}, size_t{65536}, size_t{262145}}) {
        auto t = random_tensor(n, p, sparse, static_cast<unsigned>(n));
        auto back = round_trip(t);
        BOOST_TEST_REQUIRE(back.values.size() == n);
        BOOST_TEST_REQUIRE((back == t), to_string(p) << (sparse ? " sparse " : " dense ") << n);
        BOOST_TEST((back.precision == p));
        BOOST_TEST(back.sparse == sparse);
      }
}

// 16-bit values are encoded straight into a binary serializer's buffer and decoded straight
// from a binary deserializer's, wherever the tensor starts in the message; any other serializer
// goes through a scratch copy. Both write the same bytes.
BOOST_AUTO_TEST_CASE(sixteen_bit_values_written_in_place_at_any_offset_equal_the_copied_ones) {
  for (auto p : {wire_precision::bf16, wire_precision::fp16})
    for (bool sparse : {false, true})
      for (size_t prefix = 0; prefix < 4; ++prefix) {
        auto t = random_tensor(1027, p, sparse, static_cast<unsigned>(prefix + 11));
        std::vector<char> in_place(prefix, 'p');
        caf::binary_serializer direct{sys, in_place};
        BOOST_REQUIRE(!inspect(static_cast<caf::serializer&>(direct), t));
        std::vector<caf::byte> copied(prefix, caf::byte{'p'});
        caf::serializer_impl<std::vector<caf::byte>> other{sys, copied}; // not a binary_serializer
        BOOST_REQUIRE(!inspect(static_cast<caf::serializer&>(other), t));
        BOOST_TEST_REQUIRE(in_place.size() == copied.size());
        BOOST_TEST_REQUIRE(std::memcmp(in_place.data(), copied.data(), copied.size()) == 0,
                           to_string(p) << " after " << prefix << " bytes");
        caf::binary_deserializer source{sys, in_place};
        source.skip(prefix);
        tensor_buffer back;
        BOOST_REQUIRE(!inspect(static_cast<caf::deserializer&>(source), back));
        BOOST_TEST(source.remaining() == 0u);
        BOOST_TEST_REQUIRE((back == t), to_string(p) << (sparse ? " sparse" : " dense") << " after " << prefix);
      }
}

BOOST_AUTO_TEST_CASE(sixteen_bit_frames_take_half_the_bytes_and_sparse_ones_only_the_nonzeros) {
  const size_t n = 100000;
  auto dense32 = save(random_tensor(n, wire_precision::fp32, false, 1));
  auto dense16 = save(random_tensor(n, wire_precision::bf16, false, 1));
  BOOST_TEST(dense32.size() < n * 4 + 16);
  BOOST_TEST(dense16.size() < n * 2 + 16);
  BOOST_TEST(dense16.size() >= n * 2);
  auto t = random_tensor(n, wire_precision::bf16, true, 1);
  auto sparse16 = save(t);
  BOOST_TEST(sparse16.size() < nonzero_count(t) * 6 + 16);
  BOOST_TEST(payload_bytes(t) == nonzero_count(t) * 6);
  BOOST_TEST(payload_bytes(random_tensor(n, wire_precision::fp32, false, 1)) == n * 4);
}

BOOST_AUTO_TEST_CASE(special_values_travel_in_every_precision) {
  float inf = std::numeric_limits<float>::infinity();
  for (auto p : {wire_precision::fp32, wire_precision::bf16, wire_precision::fp16}) {
    tensor_buffer t{{inf, -inf, std::nanf(""), -0.0f, 0.5f}};
    t.precision = p;
    auto back = round_trip(t);
    BOOST_TEST(back.values[0] == inf);
    BOOST_TEST(back.values[1] == -inf);
    BOOST_TEST(std::isnan(back.values[2]));
    BOOST_TEST(std::signbit(back.values[3]));
    BOOST_TEST(back.values[4] == 0.5f);
  }
}

BOOST_AUTO_TEST_CASE(a_truncated_frame_is_refused_before_allocating) {
  for (auto p : {wire_precision::fp32, wire_precision::bf16})
    for (bool sparse : {false, true}) {
      auto buf = save(random_tensor(1000, p, sparse, 5));
      buf.resize(buf.size() - 3);
      tensor_buffer out;
      auto err = load(buf, out);
      BOOST_TEST_REQUIRE(static_cast<bool>(err));
      BOOST_TEST(message_of(err).find("tensor frame refused") != std::string::npos, message_of(err));
      BOOST_TEST(out.values.empty());
    }
}

BOOST_AUTO_TEST_CASE(an_oversized_count_is_refused_before_allocating) {
  std::vector<char> buf;
  caf::binary_serializer sink{sys, buf};
  uint8_t code = 1; // bf16 dense
  size_t huge = size_t{1} << 29;
  BOOST_REQUIRE(!sink(code));
  BOOST_REQUIRE(!sink.begin_sequence(huge));
  tensor_buffer out;
  auto err = load(buf, out);
  BOOST_TEST(message_of(err).find("more than") != std::string::npos, message_of(err));
  BOOST_TEST(out.values.empty());
  // a count within the limit that the message does not hold
  std::vector<char> buf2;
  caf::binary_serializer sink2{sys, buf2};
  size_t big = size_t{1} << 26;
  BOOST_REQUIRE(!sink2(code));
  BOOST_REQUIRE(!sink2.begin_sequence(big));
  err = load(buf2, out);
  BOOST_TEST(message_of(err).find("the message has 0 left") != std::string::npos, message_of(err));
  BOOST_TEST(out.values.capacity() == 0u);
}

BOOST_AUTO_TEST_CASE(garbled_frames_are_refused_by_name) {
  auto t = random_tensor(50, wire_precision::fp16, true, 9);
  auto buf = save(t);
  tensor_buffer out;
  { // an unknown encoding byte
    auto bad = buf;
    bad[0] = 0x07;
    BOOST_TEST(message_of(load(bad, out)).find("unknown encoding byte 7") != std::string::npos);
    bad[0] = 0x40;
    BOOST_TEST(message_of(load(bad, out)).find("unknown encoding byte 64") != std::string::npos);
  }
  { // sparse indices out of order: swap the first two
    auto bad = buf;
    // layout: code (1), dense size (4), count (varint, 1 byte for < 128), indices...
    std::swap_ranges(bad.begin() + 6, bad.begin() + 10, bad.begin() + 10);
    auto err = load(bad, out);
    BOOST_TEST(message_of(err).find("out of order") != std::string::npos, message_of(err));
  }
  { // an index outside the tensor
    auto bad = buf;
    uint32_t far = 5000;
    std::memcpy(bad.data() + 6 + 4 * (nonzero_count(t) - 1), &far, 4);
    auto err = load(bad, out);
    BOOST_TEST(message_of(err).find("outside 50 values") != std::string::npos, message_of(err));
  }
  { // more entries than values
    std::vector<char> bad;
    caf::binary_serializer sink{sys, bad};
    uint8_t code = 0x10;
    uint32_t dense = 4;
    size_t k = 5;
    BOOST_REQUIRE(!sink(code, dense));
    BOOST_REQUIRE(!sink.begin_sequence(k));
    BOOST_TEST(message_of(load(bad, out)).find("4 values with 5 entries") != std::string::npos);
  }
}

BOOST_AUTO_TEST_SUITE_END()
