// POSIX open/write/fsync/rename.
#include "common/file_io.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace actorps {

caf::expected<std::string> read_whole_file(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return caf::make_error(errc::file_error, cat(path, ": cannot be read"));
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

caf::error write_file_synced(const std::string& path, const std::string& bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return caf::make_error(errc::file_error, cat(path, ": cannot create: ", std::strerror(errno)));
  if (auto err = write_all(fd, bytes.data(), bytes.size(), path)) {
    ::close(fd);
    return err;
  }
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0)
    return caf::make_error(errc::file_error, cat(path, ": fsync failed: ", std::strerror(errno)));
  return caf::none;
}

caf::error write_all(int fd, const char* data, size_t n, const std::string& path) {
  size_t done = 0;
  while (done < n) {
    auto wrote = ::write(fd, data + done, n - done);
    if (wrote <= 0) {
      if (wrote < 0 && errno == EINTR)
        continue;
      return caf::make_error(errc::file_error, cat(path, ": write failed: ", wrote == 0 ? "no progress" : std::strerror(errno)));
    }
    done += static_cast<size_t>(wrote);
  }
  return caf::none;
}

caf::error sync_directory(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0)
    return caf::make_error(errc::file_error, cat(dir, ": cannot open for fsync: ", std::strerror(errno)));
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0)
    return caf::make_error(errc::file_error, cat(dir, ": fsync failed: ", std::strerror(errno)));
  return caf::none;
}

caf::error write_file_atomically(const std::string& path, const std::string& bytes) {
  auto tmp = cat(path, ".tmp-", ::getpid());
  if (auto err = write_file_synced(tmp, bytes)) {
    std::remove(tmp.c_str());
    return err;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    auto why = std::strerror(errno);
    std::remove(tmp.c_str());
    return caf::make_error(errc::file_error, cat(path, ": cannot rename into place: ", why));
  }
  auto dir = std::filesystem::path{path}.parent_path().string();
  return sync_directory(dir.empty() ? "." : dir);
}

} // namespace actorps
