// Tests of common/file_io: atomic writes replace a file whole, and a failed one leaves the old
// file and no temporary behind.
#include "common/file_io.hpp"

#include "common/errc.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <filesystem>

using namespace actorps;
using namespace actorps::test;

BOOST_AUTO_TEST_SUITE(file_io)

BOOST_AUTO_TEST_CASE(atomic_writes_replace_whole_files) {
  temp_dir dir;
  BOOST_REQUIRE(!write_file_atomically(dir.file("f"), "first"));
  BOOST_REQUIRE(!write_file_atomically(dir.file("f"), "second, longer"));
  BOOST_TEST(*read_whole_file(dir.file("f")) == "second, longer");
  size_t entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir.path()))
    ++entries;
  BOOST_TEST(entries == 1u); // no temporary left
}

BOOST_AUTO_TEST_CASE(a_failed_write_keeps_the_old_file) {
  temp_dir dir;
  BOOST_REQUIRE(!write_file_atomically(dir.file("f"), "old"));
  std::filesystem::create_directory(dir.file("f.dir"));
  // renaming a file over a directory fails: the old content must survive untouched
  auto err = write_file_atomically(dir.file("f.dir"), "new");
  BOOST_REQUIRE(err);
  BOOST_TEST((err == errc::file_error));
  BOOST_TEST(describe(err).find(dir.file("f.dir")) != std::string::npos);
  BOOST_TEST(*read_whole_file(dir.file("f")) == "old");
  BOOST_TEST(std::filesystem::is_directory(dir.file("f.dir")));
  size_t entries = 0;
  for ([[maybe_unused]] auto& e : std::filesystem::directory_iterator(dir.path()))
    ++entries;
  BOOST_TEST(entries == 2u);
  auto missing = read_whole_file(dir.file("absent"));
  BOOST_REQUIRE(!missing);
  BOOST_TEST(describe(missing.error()) == "file_error: " + dir.file("absent") + ": cannot be read");
}

BOOST_AUTO_TEST_SUITE_END()
