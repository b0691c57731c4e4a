// A checkpoint file's bytes written as they come, with their CRC-32 (see file_sink.hpp).
#include "checkpoint/file_sink.hpp"

#include "common/file_io.hpp"

#include <algorithm>

namespace actorps {

uLong crc_more(uLong crc, const char* data, size_t n) {
  for (size_t at = 0; at < n;) {
    const size_t piece = std::min<size_t>(n - at, size_t{1} << 30);
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data + at), static_cast<uInt>(piece));
    at += piece;
  }
  return crc;
}

file_sink::file_sink(int fd, std::string path) : fd_(fd), path_(std::move(path)), block_(size_t{1} << 20) {
  setp(block_.data(), block_.data() + block_.size());
}

caf::error file_sink::finish() {
  flush();
  return err_;
}

file_sink::int_type file_sink::overflow(int_type c) {
  if (!flush())
    return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

bool file_sink::flush() {
  const auto n = static_cast<size_t>(pptr() - pbase());
  if (n > 0 && !err_) {
    crc_ = crc_more(crc_, pbase(), n);
    bytes_ += n;
    err_ = write_all(fd_, pbase(), n, path_);
  }
  setp(block_.data(), block_.data() + block_.size());
  return !err_;
}

} // namespace actorps
