// Tests of checkpoint/shard_file_writer: a shard file with optimizer slots written in pieces is
// byte for byte the file write_checkpoint writes; missing or extra floats are refused.
#include "checkpoint/shard_file_writer.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <fstream>
#include <sstream>

using namespace actorps;

namespace {

std::string bytes_of(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

} // namespace

BOOST_AUTO_TEST_SUITE(shard_file_writer)

BOOST_AUTO_TEST_CASE(a_file_written_in_pieces_is_the_one_written_whole) {
  test::temp_dir dir;
  // shard 1 at version 77: "w" (3 x 4) with Adam's two slots, "b" (1 x 4) without slots
  auto w = test::random_values(12, 1), m = test::random_values(12, 2), v = test::random_values(12, 3);
  auto b = test::random_values(4, 4);
  checkpoint c;
  c.manifest.variables = {{"x", 1, 1, 0}, {"w", 3, 4, 1}, {"b", 1, 4, 1}};
  c.shards.push_back({checkpoint_format_version, 0, 77, {{0, {0.5f}, {}, {}}}});
  c.shards.push_back({checkpoint_format_version, 1, 77, {{1, w, m, v}, {2, b, {}, {}}}});
  BOOST_REQUIRE(!write_checkpoint(c, dir.file("whole")));
  std::vector<float> all;
  for (auto* part : {&w, &m, &v, &b})
    all.insert(all.end(), part->begin(), part->end());
  auto file = actorps::shard_file_writer::open(dir.file("shard-1.bin"), 1, 77, {{1, 12, 12, 12}, {2, 4, 0, 0}});
  BOOST_REQUIRE(file);
  for (size_t at = 0; at < all.size(); at += 7)
    BOOST_REQUIRE(!(*file)->append(all.data() + at, std::min<size_t>(7, all.size() - at)));
  auto written = (*file)->finish("shard-1.bin");
  BOOST_REQUIRE(written);
  BOOST_TEST(written->shard == 1u);
  BOOST_TEST(bytes_of(dir.file("shard-1.bin")) == bytes_of(dir.file("whole/shard-1.bin")));
  auto manifest = read_checkpoint(dir.file("whole"));
  BOOST_REQUIRE(manifest);
  BOOST_TEST(written->bytes == manifest->manifest.files.at(1).bytes);
  BOOST_TEST(written->crc32 == manifest->manifest.files.at(1).crc32);
}

BOOST_AUTO_TEST_CASE(missing_and_extra_floats_are_refused) {
  test::temp_dir dir;
  auto file = actorps::shard_file_writer::open(dir.file("s.bin"), 0, 1, {{0, 2, 2, 0}});
  BOOST_REQUIRE(file);
  const float x[5] = {1, 2, 3, 4, 5};
  BOOST_REQUIRE(!(*file)->append(x, 3));
  BOOST_TEST(((*file)->finish("s.bin").error() == errc::invalid_argument)); // slot0's second float is missing
  BOOST_TEST(((*file)->append(x, 2) == errc::invalid_argument));            // one float too many
}

BOOST_AUTO_TEST_SUITE_END()
