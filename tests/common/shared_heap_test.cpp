// Tests of common/shared_heap: blocks handed out aligned and reused once released; a scope routes
// float_vector's allocations into the process's heap and nothing else does; a full heap falls back
// to the ordinary heap; another process's view (here this process's own, through /proc) reads the
// bytes written, refuses what is not a memfd sealed to exactly its size, and bounds every read.
#include "common/shared_heap.hpp"

#include "common/errc.hpp"
#include "messages/tensor.hpp"
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

using namespace actorps;

namespace {

constexpr size_t heap_bytes = size_t{4} << 20;

shared_heap& heap() {
  auto h = shared_heap::of_process(heap_bytes);
  BOOST_REQUIRE(h);
  return **h;
}

std::string text_of(const caf::error& err) {
  return describe(err);
}

} // namespace

BOOST_AUTO_TEST_SUITE(shared_heap)

BOOST_AUTO_TEST_CASE(blocks_are_aligned_inside_the_heap_and_reused_once_released) {
  auto& h = heap();
  BOOST_TEST(h.bytes() == heap_bytes);
  BOOST_TEST((actorps::shared_heap::process() == &h));
  const size_t before = h.used();
  void* a = h.allocate(100);
  void* b = h.allocate(100);
  BOOST_REQUIRE(a != nullptr);
  BOOST_REQUIRE(b != nullptr);
  BOOST_TEST(reinterpret_cast<uintptr_t>(a) % actorps::shared_heap::alignment == 0u);
  BOOST_TEST(h.owns(a, 100));
  BOOST_TEST(!h.owns(a, h.bytes() + 1)); // (runs past the end)
  BOOST_TEST(h.used() == before + 2 * 128);
  BOOST_TEST(h.release(a));
  BOOST_TEST(!h.release(a)); // (not handed out any more)
  int outside = 0;
  BOOST_TEST(!h.release(&outside));
  BOOST_TEST((h.allocate(128) == a)); // (a released block of its size first)
  BOOST_TEST(h.release(a));
  BOOST_TEST(h.release(b));
  BOOST_TEST(h.used() == before);
}

BOOST_AUTO_TEST_CASE(blocks_come_in_size_classes_so_changing_sizes_reuse_them) {
  using actorps::shared_heap;
  BOOST_TEST(shared_heap::block_size(1) == 64u);
  BOOST_TEST(shared_heap::block_size(4096) == 4096u);
  BOOST_TEST(shared_heap::block_size(4097) == 4096u + 512u);
  BOOST_TEST(shared_heap::block_size(100000) == 106496u); // (65,536's eighths: 8,192 apart)
  for (size_t b : {size_t{100}, size_t{5000}, size_t{70000}, size_t{1} << 20, (size_t{1} << 20) + 1}) {
    const size_t s = shared_heap::block_size(b);
    BOOST_TEST(s >= b);
    BOOST_TEST(s < b + b / 8 + 64);
    BOOST_TEST(s % shared_heap::alignment == 0u);
  }
  auto& h = heap();
  void* a = h.allocate(100000);
  BOOST_REQUIRE(a != nullptr);
  BOOST_TEST(h.release(a));
  void* b = h.allocate(99000); // (another size of the same class: the same block)
  BOOST_TEST((b == a));
  BOOST_TEST(h.release(b));
}

BOOST_AUTO_TEST_CASE(a_scope_puts_float_vectors_into_the_heap_and_nothing_else_does) {
  auto& h = heap();
  float_vector outside(1000);
  BOOST_TEST(!h.owns(outside.data()));
  const size_t before = h.used();
  {
    actorps::shared_heap::scope shared;
    float_vector inside(1000);
    BOOST_TEST(h.owns(inside.data(), 4000));
    BOOST_TEST(h.used() > before);
    std::vector<float> plain(1000); // (std::allocator: never the heap)
    BOOST_TEST(!h.owns(plain.data()));
    {
      actorps::shared_heap::scope nested;
    }
    float_vector still(10); // (the outer scope holds after a nested one ends)
    BOOST_TEST(h.owns(still.data()));
  }
  BOOST_TEST(h.used() == before); // (released when the vectors went)
  float_vector after(1000);
  BOOST_TEST(!h.owns(after.data()));
}

BOOST_AUTO_TEST_CASE(a_full_heap_falls_back_to_the_ordinary_heap) {
  auto& h = heap();
  actorps::shared_heap::scope shared;
  float_vector big(heap_bytes / sizeof(float)); // (more than is left)
  BOOST_TEST(!h.owns(big.data()));
  std::fill(big.begin(), big.end(), 1.0f); // (ordinary memory, whole)
  BOOST_TEST(h.allocate(heap_bytes + 1) == nullptr);
}

BOOST_AUTO_TEST_CASE(a_view_through_proc_reads_what_the_heap_holds) {
  auto& h = heap();
  auto* p = static_cast<float*>(h.allocate(64 * sizeof(float)));
  BOOST_REQUIRE(p != nullptr);
  for (int i = 0; i < 64; ++i)
    p[i] = static_cast<float>(i) * 0.5f;
  auto view = shared_view::open(::getpid(), h.fd(), h.bytes());
  BOOST_REQUIRE_MESSAGE(view, test::error_text(view));
  const float* seen = (*view)->floats_at(h.offset_of(p), 64 * sizeof(float));
  BOOST_REQUIRE(seen != nullptr);
  BOOST_TEST(seen != p); // (a mapping of its own)
  BOOST_TEST(seen[63] == 31.5f);
  p[63] = -1.0f; // (one memory: the writer's change shows)
  BOOST_TEST(seen[63] == -1.0f);
  // every read bounded: past the end, wrapping around, off a float's boundary
  BOOST_TEST((*view)->floats_at(h.bytes() - 4, 4) != nullptr);
  BOOST_TEST((*view)->floats_at(h.bytes() - 4, 8) == nullptr);
  BOOST_TEST((*view)->floats_at(h.bytes() + 4, 0) == nullptr);
  BOOST_TEST((*view)->floats_at(UINT64_MAX - 3, 8) == nullptr);
  BOOST_TEST((*view)->floats_at(2, 4) == nullptr);
  BOOST_TEST(h.release(p));
}

BOOST_AUTO_TEST_CASE(a_view_refuses_what_is_not_a_memfd_sealed_to_its_size) {
  auto& h = heap();
  auto refused = [](int pid, int fd, uint64_t bytes, const std::string& says) {
    auto v = shared_view::open(pid, fd, bytes);
    BOOST_REQUIRE(!v);
    BOOST_TEST((v.error() == errc::invalid_argument));
    BOOST_TEST(text_of(v.error()).find(says) != std::string::npos, text_of(v.error()));
  };
  const std::string self = "/proc/" + std::to_string(::getpid()) + "/fd/";
  refused(::getpid(), h.fd(), h.bytes() + 64, "not " + std::to_string(h.bytes() + 64));
  int unsealed = ::memfd_create("unsealed", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  BOOST_REQUIRE(unsealed >= 0);
  BOOST_REQUIRE(::ftruncate(unsealed, 4096) == 0); // (the writer could shrink it under a reader)
  refused(::getpid(), unsealed, 4096, "its size is not sealed");
  int fds[2];
  BOOST_REQUIRE(::pipe(fds) == 0);
  refused(::getpid(), fds[0], 4096, self + std::to_string(fds[0]));
  refused(::getpid(), 100000, 4096, "No such file");
  refused(0, h.fd(), h.bytes(), "no such process");
  ::close(unsealed);
  ::close(fds[0]);
  ::close(fds[1]);
}

BOOST_AUTO_TEST_SUITE_END()
