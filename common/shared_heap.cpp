#include "common/shared_heap.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

namespace actorps {

namespace {

std::atomic<shared_heap*> the_heap{nullptr};
std::mutex making;
thread_local bool in_scope = false;

// The seals a heap carries: its size is fixed, so a reader's mapping never faults.
constexpr int size_seals = F_SEAL_SHRINK | F_SEAL_GROW;

caf::error failed(const std::string& call) {
  return caf::make_error(errc::out_of_memory, cat("shared heap: ", call, ": ", std::strerror(errno)));
}

} // namespace

caf::expected<shared_heap*> shared_heap::of_process(size_t bytes) {
  std::lock_guard<std::mutex> guard{making};
  if (auto* h = the_heap.load())
    return h;
  bytes = (bytes + alignment - 1) / alignment * alignment;
  int fd = ::memfd_create("actorps-shared-heap", MFD_CLOEXEC | MFD_ALLOW_SEALING);
  if (fd < 0)
    return failed("memfd_create");
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0 || ::fcntl(fd, F_ADD_SEALS, size_seals | F_SEAL_SEAL) != 0) {
    auto err = failed("sizing and sealing it");
    ::close(fd);
    return err;
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, fd, 0);
  if (base == MAP_FAILED) {
    auto err = failed("mmap");
    ::close(fd);
    return err;
  }
  // (never destroyed: blocks may be released by destructors that run at the process's exit)
  auto* h = new shared_heap(fd, static_cast<uint8_t*>(base), bytes);
  the_heap.store(h);
  return h;
}

shared_heap* shared_heap::process() {
  return the_heap.load(std::memory_order_acquire);
}

size_t shared_heap::block_size(size_t bytes) {
  size_t size = (std::max<size_t>(bytes, 1) + alignment - 1) / alignment * alignment;
  if (size <= 4096)
    return size;
  size_t top = 4096;
  while (top * 2 <= size)
    top *= 2;
  const size_t step = top / 8; // (eight sizes per doubling: a block wastes under 12.5%)
  return (size + step - 1) / step * step;
}

void* shared_heap::allocate(size_t bytes) {
  const size_t size = block_size(bytes);
  std::lock_guard<std::mutex> guard{mtx_};
  uint64_t at = 0;
  if (auto it = free_.find(size); it != free_.end() && !it->second.empty()) {
    at = it->second.back();
    it->second.pop_back();
  } else if (size <= bytes_ - top_) {
    at = top_;
    top_ += size;
  } else {
    return nullptr;
  }
  live_[at] = size;
  used_ += size;
  return base_ + at;
}

bool shared_heap::release(const void* p) {
  if (!owns(p))
    return false;
  const uint64_t at = offset_of(p);
  std::lock_guard<std::mutex> guard{mtx_};
  auto it = live_.find(at);
  if (it == live_.end())
    return false;
  free_[it->second].push_back(at);
  used_ -= it->second;
  live_.erase(it);
  return true;
}

bool shared_heap::owns(const void* p, size_t bytes) const {
  const auto* b = static_cast<const uint8_t*>(p);
  return b >= base_ && b < base_ + bytes_ && bytes <= static_cast<uint64_t>(base_ + bytes_ - b);
}

uint64_t shared_heap::offset_of(const void* p) const {
  return static_cast<uint64_t>(static_cast<const uint8_t*>(p) - base_);
}

size_t shared_heap::used() const {
  std::lock_guard<std::mutex> guard{mtx_};
  return used_;
}

shared_heap::scope::scope() : outer_(in_scope) {
  in_scope = true;
}

shared_heap::scope::~scope() {
  in_scope = outer_;
}

void* shared_heap_allocate(size_t bytes) {
  if (!in_scope || bytes == 0)
    return nullptr;
  auto* h = shared_heap::process();
  return h ? h->allocate(bytes) : nullptr;
}

bool shared_heap_release(const void* p) noexcept {
  auto* h = shared_heap::process();
  return h != nullptr && h->release(p);
}

caf::expected<std::shared_ptr<const shared_view>> shared_view::open(int pid, int fd, uint64_t bytes) {
  const std::string path = cat("/proc/", pid, "/fd/", fd);
  auto refuse = [&](const std::string& why) {
    return caf::make_error(errc::invalid_argument, cat("shared heap ", path, ": ", why));
  };
  if (pid <= 0 || fd < 0 || bytes == 0)
    return refuse("no such process, descriptor or size");
  int own = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (own < 0)
    return refuse(std::strerror(errno));
  struct stat st {};
  const int seals = ::fcntl(own, F_GET_SEALS);
  std::string why;
  if (seals < 0)
    why = "not a memfd that may be sealed";
  else if ((seals & size_seals) != size_seals)
    why = "its size is not sealed";
  else if (::fstat(own, &st) != 0 || static_cast<uint64_t>(st.st_size) != bytes)
    why = cat("its size is ", st.st_size, " bytes, not ", bytes);
  void* base = MAP_FAILED;
  if (why.empty()) {
    base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, own, 0);
    if (base == MAP_FAILED)
      why = cat("mmap: ", std::strerror(errno));
  }
  ::close(own); // (the mapping keeps the memory)
  if (!why.empty())
    return refuse(why);
  return std::shared_ptr<const shared_view>{new shared_view(static_cast<uint8_t*>(base), bytes)};
}

shared_view::~shared_view() {
  ::munmap(base_, bytes_);
}

float* shared_view::floats_at(uint64_t at, uint64_t bytes) const {
  if (at > bytes_ || bytes > bytes_ - at || at % alignof(float) != 0)
    return nullptr;
  return reinterpret_cast<float*>(base_ + at);
}

} // namespace actorps
