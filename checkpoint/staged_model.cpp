// A kept model's shard file written piece by piece, then published (see staged_model.hpp). The
// bytes are those of Cereal's binary archive of a shard_checkpoint (docs/checkpoint_format.md):
// format, shard 0, version 0, the variables' count, then per variable its index, its values'
// count and values, and two empty optimizer slots; counts are uint64.
#include "checkpoint/staged_model.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "checkpoint/file_sink.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>

namespace actorps {

namespace fs = std::filesystem;

namespace {

const char* const shard_file = "shard-0.bin";

} // namespace

staged_model::staged_model(std::string folder, std::vector<size_t> sizes)
  : folder_(std::move(folder)), file_(folder_ + "/" + shard_file), sizes_(std::move(sizes)) {
}

caf::expected<std::unique_ptr<staged_model>> staged_model::open(const std::string& dir, std::vector<size_t> sizes) {
  static std::atomic<uint64_t> count{0};
  auto folder = cat(dir, "/.staged-", ::getpid(), "-", count++);
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    return caf::make_error(errc::file_error, cat(folder, ": cannot create: ", ec.message()));
  std::unique_ptr<staged_model> out{new staged_model(folder, std::move(sizes))};
  out->fd_ = ::open(out->file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out->fd_ < 0)
    return caf::make_error(errc::file_error, cat(out->file_, ": cannot create: ", std::strerror(errno)));
  out->sink_ = std::make_unique<file_sink>(out->fd_, out->file_);
  const uint32_t format = checkpoint_format_version, shard = 0;
  const uint64_t version = 0, variables = out->sizes_.size();
  for (auto [p, n] : {std::pair<const void*, size_t>{&format, 4}, {&shard, 4}, {&version, 8}, {&variables, 8}})
    if (auto err = out->put(p, n))
      return err;
  out->variable_ = SIZE_MAX; // (none begun)
  if (auto err = out->next_variable())
    return err;
  return out;
}

staged_model::~staged_model() {
  sink_.reset();
  if (fd_ >= 0)
    ::close(fd_);
  std::error_code ignored;
  fs::remove_all(folder_, ignored);
}

caf::error staged_model::put(const void* data, size_t n) {
  if (sink_->sputn(static_cast<const char*>(data), static_cast<std::streamsize>(n)) != static_cast<std::streamsize>(n)) {
    if (auto err = sink_->finish())
      return err;
    return caf::make_error(errc::file_error, cat(file_, ": write failed"));
  }
  return caf::none;
}

caf::error staged_model::next_variable() {
  const uint64_t empty = 0;
  if (variable_ != SIZE_MAX) // the one written: its two optimizer slots, empty
    for (int slot = 0; slot < 2; ++slot)
      if (auto err = put(&empty, sizeof empty))
        return err;
  variable_ = variable_ == SIZE_MAX ? 0 : variable_ + 1;
  if (variable_ >= sizes_.size())
    return caf::none;
  const auto index = static_cast<uint32_t>(variable_);
  const uint64_t count = sizes_[variable_];
  left_ = sizes_[variable_];
  if (auto err = put(&index, sizeof index))
    return err;
  if (auto err = put(&count, sizeof count))
    return err;
  return left_ == 0 ? next_variable() : caf::none;
}

caf::error staged_model::append(const float* values, size_t n) {
  while (n > 0) {
    if (finished_ || variable_ >= sizes_.size())
      return caf::make_error(errc::invalid_argument, cat(file_, ": more values than the model's ", sizes_.size(),
                                                         " variables hold"));
    const size_t now = std::min(n, left_);
    if (auto err = put(values, now * sizeof(float)))
      return err;
    values += now;
    n -= now;
    left_ -= now;
    if (left_ == 0)
      if (auto err = next_variable())
        return err;
  }
  return caf::none;
}

caf::error staged_model::finish() {
  if (finished_)
    return caf::none;
  if (variable_ < sizes_.size())
    return caf::make_error(errc::invalid_argument, cat(file_, ": values of variable ", variable_, " and later are missing"));
  if (auto err = sink_->finish())
    return err;
  if (::fsync(fd_) != 0)
    return caf::make_error(errc::file_error, cat(file_, ": fsync failed: ", std::strerror(errno)));
  bytes_ = sink_->bytes();
  crc32_ = sink_->crc();
  ::close(fd_);
  fd_ = -1;
  finished_ = true;
  return caf::none;
}

caf::error staged_model::publish(checkpoint_manifest m, const std::string& final_path) const {
  if (!finished_)
    return caf::make_error(errc::invalid_argument, cat(file_, ": published before it was finished"));
  auto tmp = begin_checkpoint(final_path);
  if (!tmp)
    return std::move(tmp.error());
  const auto to = *tmp + "/" + shard_file;
  std::error_code ec;
  fs::create_hard_link(file_, to, ec); // (the staged file stays for the next name)
  if (ec) { // (a file system without hard links: a copy, synced)
    ec.clear();
    fs::copy_file(file_, to, ec);
    if (int fd = ::open(to.c_str(), O_RDONLY); !ec && fd >= 0) {
      if (::fsync(fd) != 0)
        ec = std::error_code{errno, std::generic_category()};
      ::close(fd);
    }
  }
  if (ec) {
    std::error_code ignored;
    fs::remove_all(*tmp, ignored);
    return caf::make_error(errc::file_error, cat(to, ": cannot link or copy ", file_, ": ", ec.message()));
  }
  m.format = checkpoint_format_version;
  m.files = {checkpoint_file{0, shard_file, bytes_, crc32_}};
  return publish_checkpoint(*tmp, m, final_path);
}

} // namespace actorps
