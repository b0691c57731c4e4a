// TFRecord framing and the event file's writes.
#include "observe/event_file.hpp"

#include "observe/crc32c.hpp"
#include "observe/proto_encoder.hpp"
#include "observe/summary_event.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace actorps {

namespace {

std::string host_name() {
  char name[256] = {};
  return gethostname(name, sizeof(name) - 1) == 0 ? std::string{name} : std::string{"localhost"};
}

} // namespace

std::string event_file::frame(const std::string& data) {
  std::string out;
  out.reserve(data.size() + 16);
  append_le(out, static_cast<uint64_t>(data.size()));
  append_le(out, masked_crc32c(out.data(), 8));
  out += data;
  append_le(out, masked_crc32c(data.data(), data.size()));
  return out;
}

caf::expected<event_file> event_file::create(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return caf::make_error(errc::file_error, cat(dir, ": cannot create the TensorBoard folder (", ec.message(), ")"));
  const auto seconds = static_cast<long long>(wall_time_now());
  for (int n = 0;; ++n) { // (two files in the same second of the same process: a suffix)
    auto path = cat(dir, "/events.out.tfevents.", seconds, ".", host_name(), ".", getpid(), n ? cat(".", n) : "");
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST && n < 100)
      continue;
    if (fd < 0)
      return caf::make_error(errc::file_error, cat(path, ": cannot create the event file (", std::strerror(errno), ")"));
    event_file f{std::move(path), fd};
    if (auto err = f.append(file_version_event(wall_time_now())))
      return err;
    return f;
  }
}

caf::error event_file::reopen() {
  const auto dir = std::filesystem::path{path_}.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  int fd = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  ::close(fd_);
  fd_ = fd;
  size_ = 0;
  if (fd_ < 0)
    return caf::make_error(errc::file_error, cat(path_, ": was removed and cannot be created again (", std::strerror(errno),
                                                 "); no more TensorBoard events from this node"));
  log_line("tensorboard", cat(path_, " was removed while the run went on: writing it again (the events before are gone)"));
  const auto version = frame(file_version_event(wall_time_now()));
  if (::write(fd_, version.data(), version.size()) == static_cast<ssize_t>(version.size()))
    size_ = version.size();
  return caf::none;
}

event_file::event_file(event_file&& other) noexcept
  : path_(std::move(other.path_)), fd_(other.fd_), size_(other.size_) {
  other.fd_ = -1;
}

event_file::~event_file() {
  if (fd_ >= 0)
    ::close(fd_);
}

caf::error event_file::append(const std::string& event) {
  auto bytes = frame(event);
  std::lock_guard<std::mutex> guard{mtx_};
  if (fd_ < 0)
    return caf::none;
  struct stat st;
  if (::stat(path_.c_str(), &st) != 0 && errno == ENOENT) // (the folder went, with the run's, say: the fd writes into nothing)
    if (auto err = reopen())
      return err;
  size_t done = 0;
  while (done < bytes.size()) {
    auto n = ::write(fd_, bytes.data() + done, bytes.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0) {
      auto why = n < 0 ? std::string{std::strerror(errno)} : std::string{"nothing written"};
      (void) ::ftruncate(fd_, static_cast<off_t>(size_)); // (no half record at the end)
      ::close(fd_);
      fd_ = -1;
      return caf::make_error(errc::file_error, cat(path_, ": writing an event failed (", why,
                                                   "); no more TensorBoard events from this node"));
    }
    done += static_cast<size_t>(n);
  }
  size_ += bytes.size();
  return caf::none;
}

} // namespace actorps
