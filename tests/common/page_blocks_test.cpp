// Tests of common/page_blocks: blocks zeroed and aligned, large ones mapped on their own and marked
// for 2 MiB pages (the mapping's "hg" flag in /proc/self/smaps), and the allocator for a store's
// floats.
#include "common/page_blocks.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using namespace actorps;

namespace {

// The VmFlags line of the mapping that holds p ("" where none does).
std::string vm_flags_of(const void* p) {
  const auto at = reinterpret_cast<uintptr_t>(p);
  std::ifstream in{"/proc/self/smaps"};
  std::string line;
  bool inside = false;
  while (std::getline(in, line)) {
    unsigned long long from = 0, to = 0;
    char dash = 0;
    std::istringstream head{line};
    if (head >> std::hex >> from >> dash >> to && dash == '-' && line.find(' ') != std::string::npos
        && line.find(':') > line.find(' ')) {
      inside = from <= at && at < to;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0)
      return line;
  }
  return "";
}

bool all_zero(const char* p, size_t n) {
  return std::all_of(p, p + n, [](char c) { return c == 0; });
}

} // namespace

BOOST_AUTO_TEST_SUITE(page_blocks)

BOOST_AUTO_TEST_CASE(small_blocks_are_zeroed_and_aligned) {
  for (size_t bytes : {size_t{1}, size_t{100}, size_t{4096}, page_block_bytes - 1}) {
    auto* p = static_cast<char*>(allocate_block(bytes));
    BOOST_REQUIRE(p != nullptr);
    BOOST_TEST(reinterpret_cast<uintptr_t>(p) % 64 == 0u);
    BOOST_TEST(all_zero(p, bytes));
    p[bytes - 1] = 1;
    free_block(p, bytes);
  }
}

BOOST_AUTO_TEST_CASE(large_blocks_are_mapped_aligned_and_marked_for_huge_pages) {
  const size_t bytes = page_block_bytes + 12345;
  auto* p = static_cast<char*>(allocate_block(bytes));
  BOOST_REQUIRE(p != nullptr);
  BOOST_TEST(reinterpret_cast<uintptr_t>(p) % (size_t{2} << 20) == 0u);
  BOOST_TEST(all_zero(p, bytes));
  std::fill(p, p + bytes, 7); // (every byte writable, the last one too)
  const auto flags = vm_flags_of(p + bytes - 1);
  BOOST_TEST_INFO("flags of the block's mapping: " << flags);
  BOOST_TEST(flags.find(" hg") != std::string::npos);
  free_block(p, bytes);
}

BOOST_AUTO_TEST_CASE(a_vector_on_blocks_holds_its_floats) {
  std::vector<float, block_allocator<float>> big(page_block_bytes / sizeof(float) * 2, 0.5f), small(10, 2.0f);
  BOOST_TEST(reinterpret_cast<uintptr_t>(big.data()) % (size_t{2} << 20) == 0u);
  big.back() = 3.0f;
  BOOST_TEST(big.front() == 0.5f);
  BOOST_TEST(big.back() == 3.0f);
  small.assign(big.begin(), big.begin() + 3);
  BOOST_TEST(small.size() == 3u);
  BOOST_TEST(small[2] == 0.5f);
}

BOOST_AUTO_TEST_SUITE_END()
