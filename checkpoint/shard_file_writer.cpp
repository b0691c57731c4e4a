// A shard file written piece by piece (see shard_file_writer.hpp). The bytes are those of
// Cereal's binary archive of a shard_checkpoint (docs/checkpoint_format.md): format, shard,
// version, the entries' count, then per entry its index and its three arrays, each a uint64
// count and the floats.
#include "checkpoint/shard_file_writer.hpp"

#include "checkpoint/file_sink.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace actorps {

shard_file_writer::shard_file_writer(std::string path, std::vector<entry> entries)
  : path_(std::move(path)), entries_(std::move(entries)) {
}

caf::expected<std::unique_ptr<shard_file_writer>> shard_file_writer::open(const std::string& path, uint32_t shard,
                                                                          uint64_t version, std::vector<entry> entries) {
  std::unique_ptr<shard_file_writer> out{new shard_file_writer(path, std::move(entries))};
  out->shard_ = shard;
  out->fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (out->fd_ < 0)
    return caf::make_error(errc::file_error, cat(path, ": cannot create: ", std::strerror(errno)));
  out->sink_ = std::make_unique<file_sink>(out->fd_, path);
  const uint32_t format = checkpoint_format_version;
  const uint64_t count = out->entries_.size();
  for (auto [p, n] : {std::pair<const void*, size_t>{&format, 4}, {&shard, 4}, {&version, 8}, {&count, 8}})
    if (auto err = out->put(p, n))
      return err;
  if (auto err = out->next_array())
    return err;
  return out;
}

shard_file_writer::~shard_file_writer() {
  sink_.reset();
  if (fd_ >= 0)
    ::close(fd_);
}

caf::error shard_file_writer::put(const void* data, size_t n) {
  if (sink_->sputn(static_cast<const char*>(data), static_cast<std::streamsize>(n)) != static_cast<std::streamsize>(n)) {
    if (auto err = sink_->finish())
      return err;
    return caf::make_error(errc::file_error, cat(path_, ": write failed"));
  }
  return caf::none;
}

caf::error shard_file_writer::next_array() {
  while (entry_ < entries_.size()) {
    if (++array_ == 3) {
      ++entry_;
      array_ = -1;
      continue;
    }
    auto& e = entries_[entry_];
    if (array_ == 0)
      if (auto err = put(&e.index, sizeof e.index))
        return err;
    const uint64_t count = array_ == 0 ? e.values : array_ == 1 ? e.slot0 : e.slot1;
    if (auto err = put(&count, sizeof count))
      return err;
    left_ = count;
    if (left_ > 0)
      return caf::none;
  }
  return caf::none;
}

caf::error shard_file_writer::append(const float* values, size_t n) {
  while (n > 0) {
    if (finished_ || entry_ >= entries_.size())
      return caf::make_error(errc::invalid_argument, cat(path_, ": more values than its ", entries_.size(),
                                                         " variables hold"));
    const size_t now = std::min(n, left_);
    if (auto err = put(values, now * sizeof(float)))
      return err;
    values += now;
    n -= now;
    left_ -= now;
    if (left_ == 0)
      if (auto err = next_array())
        return err;
  }
  return caf::none;
}

caf::expected<checkpoint_file> shard_file_writer::finish(const std::string& name) {
  if (entry_ < entries_.size())
    return caf::make_error(errc::invalid_argument, cat(path_, ": values of variable ", entries_[entry_].index,
                                                       " and later are missing"));
  if (!finished_) {
    if (auto err = sink_->finish())
      return err;
    if (::fsync(fd_) != 0)
      return caf::make_error(errc::file_error, cat(path_, ": fsync failed: ", std::strerror(errno)));
    ::close(fd_);
    fd_ = -1;
    finished_ = true;
  }
  return checkpoint_file{shard_, name, sink_->bytes(), sink_->crc()};
}

} // namespace actorps
