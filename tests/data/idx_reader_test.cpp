// Tests of data/idx_reader: raw and gzip files, and every kind of bad file giving a named error.
#include "data/idx_reader.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <string>

using namespace actorps;
using namespace actorps::test;

namespace {

struct fixture {
  temp_dir dir;
  std::vector<uint8_t> data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};

  // Reads path and returns the error text (empty if it was read).
  std::string error_of(const std::string& path) {
    auto res = read_idx(path);
    return res ? std::string{} : describe(res.error());
  }
};

} // namespace

BOOST_FIXTURE_TEST_SUITE(idx_reader, fixture)

BOOST_AUTO_TEST_CASE(reads_raw_and_gzip_files) {
  auto bytes = idx_bytes({3, 2, 2}, data);
  write_file(dir.file("a"), bytes);
  write_gz_file(dir.file("a.gz"), bytes);
  for (auto name : {"a", "a.gz"}) {
    auto res = read_idx(dir.file(name));
    BOOST_REQUIRE_MESSAGE(res, error_text(res));
    BOOST_TEST(res->dims == std::vector<uint32_t>({3, 2, 2}));
    BOOST_TEST(res->data == data);
  }
}

BOOST_AUTO_TEST_CASE(missing_file) {
  auto path = dir.file("nope");
  auto res = read_idx(path);
  BOOST_REQUIRE(!res);
  BOOST_TEST(res.error() == actorps::errc::file_error);
  BOOST_TEST(describe(res.error()) == "file_error: " + path + ": cannot open (No such file or directory)");
}

BOOST_AUTO_TEST_CASE(wrong_magic) {
  auto bytes = idx_bytes({12}, data);
  bytes[1] = 7;
  write_file(dir.file("m"), bytes);
  BOOST_TEST(error_of(dir.file("m"))
             == "corrupt_data: " + dir.file("m") + ": wrong magic: first two bytes are 0 7, expected 0 0 (not an IDX file)");
}

BOOST_AUTO_TEST_CASE(unsupported_type_and_rank) {
  auto bytes = idx_bytes({12}, data);
  bytes[2] = 0x0D; // float
  write_file(dir.file("t"), bytes);
  BOOST_TEST(error_of(dir.file("t")) == "corrupt_data: " + dir.file("t") + ": unsupported element type 0xd (only 0x08, unsigned byte)");
  bytes = idx_bytes({12}, data);
  bytes[3] = 0;
  write_file(dir.file("r"), bytes);
  BOOST_TEST(error_of(dir.file("r")) == "corrupt_data: " + dir.file("r") + ": unsupported rank 0 (1 to 4)");
}

BOOST_AUTO_TEST_CASE(truncated_header_and_data) {
  write_file(dir.file("h"), {0, 0, 8});
  BOOST_TEST(error_of(dir.file("h")) == "corrupt_data: " + dir.file("h") + ": truncated header: 3 of 4 magic bytes");
  auto bytes = idx_bytes({3, 2, 2}, data);
  bytes.resize(4 + 6);
  write_file(dir.file("d"), bytes);
  BOOST_TEST(error_of(dir.file("d")) == "corrupt_data: " + dir.file("d") + ": truncated header: dimension 1 of 3 is missing");
  bytes = idx_bytes({3, 2, 2}, data);
  bytes.pop_back();
  write_gz_file(dir.file("x.gz"), bytes);
  BOOST_TEST(error_of(dir.file("x.gz")) == "corrupt_data: " + dir.file("x.gz") + ": truncated: header promises 12 data bytes, file has 11");
}

BOOST_AUTO_TEST_CASE(wrong_count_trailing_bytes_and_zero_dimension) {
  auto bytes = idx_bytes({10}, data); // 12 bytes follow a header promising 10
  write_file(dir.file("c"), bytes);
  BOOST_TEST(error_of(dir.file("c")) == "corrupt_data: " + dir.file("c") + ": trailing bytes after the 10 data bytes the header promises");
  write_file(dir.file("z"), idx_bytes({0, 3}, {}));
  BOOST_TEST(error_of(dir.file("z")) == "corrupt_data: " + dir.file("z") + ": dimension 0 is zero");
}

BOOST_AUTO_TEST_CASE(garbled_gzip_stream) {
  auto bytes = idx_bytes({3, 2, 2}, data);
  write_gz_file(dir.file("g.gz"), bytes);
  auto gz = read_text(dir.file("g.gz"));
  std::vector<uint8_t> garbled(gz.begin(), gz.end());
  for (size_t i = 12; i < garbled.size() - 8; ++i) // keep the gzip header, destroy the deflate data
    garbled[i] ^= 0x5A;
  write_file(dir.file("g.gz"), garbled);
  auto text = error_of(dir.file("g.gz"));
  BOOST_TEST(text.rfind("corrupt_data: " + dir.file("g.gz") + ": ", 0) == 0, text);
}

namespace {

// This process's peak resident memory (VmHWM) in KiB, after resetting it to the current use
// (/proc/self/clear_refs, 5) when `reset`.
long peak_kib(bool reset = false) {
  if (reset)
    std::ofstream{"/proc/self/clear_refs"} << "5";
  std::ifstream status{"/proc/self/status"};
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0)
      return std::stol(line.substr(6));
  return -1;
}

} // namespace

// Found by the damaged copies below: a header promising 10 GB in a file of 4 KB made the reader
// set the whole size aside (and zero it) before it found the file short: 17 s, 10 GB of memory.
// The data is read as it comes: a file's cost is its own size, whatever its header says.
BOOST_AUTO_TEST_CASE(a_header_promising_gigabytes_costs_no_more_than_the_file) {
  const std::vector<uint8_t> data(4096, 7);
  auto bytes = idx_bytes({1u << 16, 256, 256}, data); // (4 GiB promised)
  write_file(dir.file("big.idx"), bytes);
  write_gz_file(dir.file("big.gz"), bytes);
  for (auto name : {"big.idx", "big.gz"}) {
    const long before = peak_kib(true);
    auto text = error_of(dir.file(name));
    const long grew = peak_kib() - before;
    BOOST_TEST(text.find("truncated: header promises 4294967296 data bytes, file has 4096") != std::string::npos, text);
    BOOST_TEST((before > 0 && grew < 64 * 1024), name << ": the peak grew by " << grew << " KiB");
  }
}

// A fuzzer's damaged copies of a valid IDX file, raw and gzip-compressed (tests/support's
// damaged_copies): each is read or refused naming the file, none crashes or throws.
BOOST_AUTO_TEST_CASE(damaged_copies_are_read_or_refused_by_name) {
  std::vector<uint8_t> pixels(5 * 28 * 28);
  for (size_t i = 0; i < pixels.size(); ++i)
    pixels[i] = static_cast<uint8_t>(i);
  const auto raw = idx_bytes({5, 28, 28}, pixels);
  auto read = [](const std::string& p) { return read_idx(p); };
  BOOST_TEST(read_damaged(raw, dir.file("x.idx"), 3, 400, read) > 0u);
  write_gz_file(dir.file("ok.gz"), raw);
  BOOST_TEST(read_damaged(read_bytes(dir.file("ok.gz")), dir.file("x.gz"), 4, 400, read) > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
