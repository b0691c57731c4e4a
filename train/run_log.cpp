// Run folder creation and metrics/summary writing.
#include "train/run_log.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <cerrno>
#include <cstring>
#include <memory>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace actorps {

namespace {

caf::error io_error(const std::string& path, const char* what) {
  return caf::make_error(errc::file_error, cat(path, ": cannot ", what, " (", std::strerror(errno), ")"));
}

// mkdir -p
caf::error make_dirs(const std::string& path) {
  for (size_t pos = 1; pos <= path.size(); ++pos) {
    if (pos == path.size() || path[pos] == '/') {
      std::string prefix = path.substr(0, pos);
      if (::mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST)
        return io_error(prefix, "create directory");
    }
  }
  struct stat st;
  if (::stat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode))
    return caf::make_error(errc::file_error, cat(path, ": exists but is not a directory"));
  return caf::none;
}

} // namespace

namespace {

caf::error in_use(const std::string& dir) {
  return caf::make_error(errc::file_error, cat(dir, " is in use by another running process (a chief or trainer with "
                                                    "the same train.name); its files are left alone"));
}

} // namespace

caf::error run_log::check_free(const std::string& run_dir, const std::string& name) {
  const std::string lock = run_dir + "/" + name + "/.lock";
  int fd = ::open(lock.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return caf::none; // (no folder or no lock yet: nobody runs there)
  const bool held = ::flock(fd, LOCK_EX | LOCK_NB) != 0 && errno == EWOULDBLOCK;
  ::close(fd); // (releases the lock taken just now)
  return held ? in_use(run_dir + "/" + name) : caf::none;
}

caf::expected<run_log> run_log::open(const std::string& run_dir, const std::string& name, bool append) {
  run_log out;
  out.dir_ = run_dir + "/" + name;
  if (auto err = make_dirs(out.dir_))
    return err;
  std::string lock = out.dir_ + "/.lock";
  int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0)
    return io_error(lock, "open");
  out.lock_.reset(new int(fd), [](const int* p) {
    ::close(*p);
    delete p;
  });
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0)
    return errno == EWOULDBLOCK ? in_use(out.dir_) : io_error(lock, "lock");
  std::string path = out.dir_ + "/metrics.jsonl";
  out.metrics_.reset(std::fopen(path.c_str(), append ? "a" : "w"));
  if (!out.metrics_)
    return io_error(path, "open for writing");
  return out;
}

// Whether metrics.jsonl at its path is still the file this run writes (not removed or replaced).
bool run_log::metrics_in_place() const {
  struct stat open_file, at_path;
  return ::fstat(::fileno(metrics_.get()), &open_file) == 0 && open_file.st_nlink > 0
         && ::stat((dir_ + "/metrics.jsonl").c_str(), &at_path) == 0 && at_path.st_ino == open_file.st_ino
         && at_path.st_dev == open_file.st_dev;
}

// The run's folder or metrics.jsonl was removed while the run wrote it: says so and creates
// them again (the rows from now on; the summary at the end).
caf::error run_log::recreate() {
  log_line("run", cat(dir_, "/metrics.jsonl was removed while the run wrote it; writing it again from this row on"));
  if (auto err = make_dirs(dir_))
    return err;
  std::string path = dir_ + "/metrics.jsonl";
  metrics_.reset(std::fopen(path.c_str(), "a"));
  if (!metrics_)
    return io_error(path, "open for writing");
  return caf::none;
}

caf::error run_log::append_metrics(const json_object& row) {
  if (!metrics_in_place())
    if (auto err = recreate())
      return err;
  std::string line = row.str() + "\n";
  if (std::fwrite(line.data(), 1, line.size(), metrics_.get()) != line.size()
      || std::fflush(metrics_.get()) != 0)
    return io_error(dir_ + "/metrics.jsonl", "write");
  return caf::none;
}

caf::error run_log::write_summary(const json_object& summary) {
  if (auto err = make_dirs(dir_)) // (removed mid-run: the summary still lands)
    return err;
  std::string path = dir_ + "/summary.json";
  std::string tmp = path + ".tmp";
  std::string text = summary.str() + "\n";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return io_error(tmp, "open for writing");
  bool ok = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size()) && ::fsync(fd) == 0;
  ok = (::close(fd) == 0) && ok;
  if (!ok || std::rename(tmp.c_str(), path.c_str()) != 0)
    return io_error(path, "write");
  return caf::none;
}

} // namespace actorps
