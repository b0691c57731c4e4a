// Tests of data/npz_file: round trips of float and text arrays, the .npy header as numpy
// writes it, the zip structure, and named errors for truncated, garbled or foreign files.
#include "data/npz_file.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstring>
#include <cstdlib>
#include <limits>
#include <map>

using namespace actorps;
using namespace actorps::test;

namespace {

std::vector<uint8_t> bytes_of(const std::string& s) {
  return {s.begin(), s.end()};
}

} // namespace

BOOST_AUTO_TEST_SUITE(npz_file)

BOOST_AUTO_TEST_CASE(arrays_and_text_round_trip_bit_for_bit) {
  temp_dir dir;
  auto odd = random_values(7 * 3, 5);
  odd[0] = -0.0f;
  odd[1] = std::numeric_limits<float>::denorm_min();
  odd[2] = std::numeric_limits<float>::infinity();
  std::vector<npy_array> arrays = {float_array("conv0/weights", {3, 3, 1, 2}, random_values(18, 1)),
                                   float_array("conv0/bias", {2}, {0.5f, -1.25f}),
                                   float_array("odd", {7, 3}, odd),
                                   text_array("model.json", "{\"model\": \"28x28x1: dense 10\", \"\xc3\xa9\": 1}")};
  BOOST_REQUIRE(!write_npz(arrays, dir.file("m.npz")));
  BOOST_TEST(looks_like_npz(dir.file("m.npz")));
  auto back = read_npz(dir.file("m.npz"));
  BOOST_REQUIRE_MESSAGE(back, error_text(back));
  BOOST_REQUIRE_EQUAL(back->size(), arrays.size());
  for (size_t i = 0; i < arrays.size(); ++i) {
    BOOST_TEST((*back)[i].name == arrays[i].name);
    BOOST_TEST((*back)[i].is_text == arrays[i].is_text);
    BOOST_TEST((*back)[i].shape == arrays[i].shape);
    BOOST_TEST((*back)[i].text == arrays[i].text);
    BOOST_REQUIRE_EQUAL((*back)[i].values.size(), arrays[i].values.size());
    BOOST_TEST(std::memcmp((*back)[i].values.data(), arrays[i].values.data(), arrays[i].values.size() * 4) == 0);
  }
}

BOOST_AUTO_TEST_CASE(entries_are_npy_files_as_numpy_writes_them) {
  temp_dir dir;
  BOOST_REQUIRE(!write_npz({float_array("w", {2, 3}, {1, 2, 3, 4, 5, 6})}, dir.file("m.npz")));
  auto raw = read_text(dir.file("m.npz"));
  // local header, the entry's name, then the .npy: magic, version 1.0, header length, header
  BOOST_TEST(raw.compare(0, 4, "PK\x03\x04") == 0);
  auto npy = raw.find("\x93NUMPY");
  BOOST_REQUIRE(npy != std::string::npos);
  BOOST_TEST(raw.substr(30, 5) == "w.npy");
  BOOST_TEST(raw[npy + 6] == '\x01');
  BOOST_TEST(raw[npy + 7] == '\x00');
  size_t header_len = static_cast<unsigned char>(raw[npy + 8]) | static_cast<unsigned char>(raw[npy + 9]) << 8;
  BOOST_TEST((10 + header_len) % 64 == 0u);
  auto header = raw.substr(npy + 10, header_len);
  BOOST_TEST(header.find("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }") == 0u);
  BOOST_TEST(header.back() == '\n');
  float first;
  std::memcpy(&first, raw.data() + npy + 10 + header_len, 4);
  BOOST_TEST(first == 1.0f);
  // the end record closes the archive
  BOOST_TEST(raw.compare(raw.size() - 22, 4, "PK\x05\x06") == 0);
}

BOOST_AUTO_TEST_CASE(broken_files_are_named_errors) {
  temp_dir dir;
  BOOST_REQUIRE(!write_npz({float_array("w", {4}, {1, 2, 3, 4}), text_array("t", "x")}, dir.file("m.npz")));
  auto raw = read_text(dir.file("m.npz"));
  auto check = [&](const std::string& name, const std::string& bytes, const std::string& want) {
    write_file(dir.file(name), bytes_of(bytes));
    auto r = read_npz(dir.file(name));
    BOOST_TEST_INFO(name);
    BOOST_TEST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::corrupt_data));
    BOOST_TEST(describe(r.error()).find(dir.file(name)) != std::string::npos, describe(r.error()));
    BOOST_TEST(describe(r.error()).find(want) != std::string::npos, describe(r.error()));
  };
  check("truncated.npz", raw.substr(0, raw.size() / 2), "truncated");
  check("foreign.npz", "just some text, not a zip archive at all........", "not an .npz");
  auto flipped = raw;
  flipped[raw.find("\x93NUMPY") + 130] ^= 0x55; // inside w's values (its header ends at +128)
  check("flipped.npz", flipped, "checksum mismatch");
  auto missing = read_npz(dir.file("absent.npz"));
  BOOST_REQUIRE(!missing);
  BOOST_TEST((missing.error() == errc::file_error));
}

// Issue 50, item 13: an .npz of 1,190 bytes declaring a 4 GB entry took 3,973 MiB and aborted; a
// 2 MB "zip bomb" whose entries share their deflated bytes ran a trainer to 10.6 GB. Sizes are
// checked against the file before anything is allocated.
BOOST_AUTO_TEST_CASE(crafted_sizes_are_refused_before_allocating) {
  temp_dir dir;
  run_python(dir, "import struct\n"
                  "np.savez_compressed(d + '/c.npz', w=np.zeros(1000, np.float32))\n"
                  "z = bytearray(open(d + '/c.npz', 'rb').read())\n"
                  "cd = z.index(b'PK\\x01\\x02')\n"
                  "big = bytearray(z); big[cd + 24:cd + 28] = struct.pack('<I', 4000000000)\n" // central usize
                  "open(d + '/big.npz', 'wb').write(bytes(big))\n"
                  "np.savez(d + '/s.npz', w=np.zeros(10, np.float32))\n"
                  "s = bytearray(open(d + '/s.npz', 'rb').read())\n"
                  "cd = s.index(b'PK\\x01\\x02')\n"
                  "s[cd + 24:cd + 28] = struct.pack('<I', 4000000000)\n"
                  "open(d + '/stored.npz', 'wb').write(bytes(s))\n"
                  // the same central entry twice (another name), both pointing at one local entry
                  "end = z.index(b'PK\\x05\\x06')\n"
                  "cd = z.index(b'PK\\x01\\x02')\n"
                  "entry = bytes(z[cd:end])\n"
                  "twin = entry.replace(b'w.npy', b'v.npy')\n"
                  "tail = bytearray(z[end:])\n"
                  "tail[8:10] = struct.pack('<H', 2); tail[10:12] = struct.pack('<H', 2)\n"
                  "tail[12:16] = struct.pack('<I', 2 * len(entry))\n"
                  "open(d + '/twins.npz', 'wb').write(bytes(z[:end]) + twin + bytes(tail))\n");
  auto check = [&](const std::string& name, const std::string& want) {
    auto r = read_npz(dir.file(name));
    BOOST_TEST_INFO(name);
    BOOST_TEST_REQUIRE(!r);
    BOOST_TEST((r.error() == errc::corrupt_data));
    BOOST_TEST(describe(r.error()).find(want) != std::string::npos, describe(r.error()));
  };
  check("big.npz", "entry w.npy: declares 4000000000 bytes from ");
  check("big.npz", "more than deflate can produce (1032:1)");
  check("stored.npz", "entry w.npy: stores ");
  check("stored.npz", " bytes but declares 4000000000");
  check("twins.npz", "entry v.npy: its bytes overlap another entry's (a crafted archive)");
  BOOST_TEST(static_cast<bool>(read_npz(dir.file("c.npz")))); // (the archive they were made from reads)
}

BOOST_AUTO_TEST_CASE(what_numpy_writes_for_a_data_set) {
  // numpy writes the file: uint8 images, int64 and int8 labels, a bool, a unicode array of names
  // (compressed), and an object array that is refused by name
  temp_dir dir;
  run_python(dir, "np.savez_compressed(d + 'd.npz', x=np.arange(24, dtype=np.uint8).reshape(2, 3, 4),\n"
                  "  y=np.array([-3, 70000], dtype=np.int64), s=np.array([-128, 127], dtype=np.int8),\n"
                  "  b=np.array([True, False]), names=np.array(['T-shirt/top', 'Ankle boot', 'é']))\n"
                  "np.savez(d + 'o.npz', names=np.array(['a', 'b'], dtype=object))\n");
  auto r = read_npz(dir.file("d.npz"));
  BOOST_REQUIRE(r);
  std::map<std::string, npy_array> by;
  for (auto& a : *r)
    by[a.name] = a;
  BOOST_TEST(by["x"].dtype == "u1");
  BOOST_TEST((by["x"].shape == std::vector<size_t>{2, 3, 4}));
  BOOST_TEST(by["x"].values[23] == 23.0f);
  BOOST_TEST(by["y"].dtype == "i8");
  BOOST_TEST((by["y"].values == std::vector<float>{-3.0f, 70000.0f}));
  BOOST_TEST((by["s"].values == std::vector<float>{-128.0f, 127.0f}));
  BOOST_TEST((by["b"].values == std::vector<float>{1.0f, 0.0f}));
  BOOST_TEST(by["names"].dtype == "U");
  BOOST_TEST((by["names"].texts == std::vector<std::string>{"T-shirt/top", "Ankle boot", "\xc3\xa9"}));
  BOOST_TEST(!by["names"].is_text);
  auto o = read_npz(dir.file("o.npz"));
  BOOST_REQUIRE(!o);
  BOOST_TEST(describe(o.error()).find("dtype object") != std::string::npos, describe(o.error()));
}

BOOST_AUTO_TEST_CASE(a_failed_write_leaves_nothing) {
  temp_dir dir;
  auto err = write_npz({float_array("w", {1}, {1})}, dir.file("no/such/dir/m.npz"));
  BOOST_REQUIRE(err);
  BOOST_TEST(describe(err).find("no/such/dir/m.npz") != std::string::npos);
  BOOST_TEST(!looks_like_npz(dir.file("no/such/dir/m.npz")));
}

// A fuzzer's damaged copies of a valid .npz (a model as actorps-export writes one: float arrays
// and a text entry; tests/support's damaged_copies): each is read or refused naming the file,
// none crashes or throws.
BOOST_AUTO_TEST_CASE(damaged_copies_are_read_or_refused_by_name) {
  temp_dir dir;
  BOOST_REQUIRE(!write_npz({float_array("dense0/weights", {16, 8}, random_values(128, 1)),
                            float_array("dense0/bias", {8}, random_values(8, 2)), text_array("classes", "a\nb\nc")},
                           dir.file("ok.npz")));
  const auto refused = read_damaged(read_bytes(dir.file("ok.npz")), dir.file("x.npz"), 5, 400,
                                    [](const std::string& p) { return read_npz(p); });
  BOOST_TEST(refused > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
