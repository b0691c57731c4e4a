// A kept model's shard file written piece by piece, then published (see staged_model.hpp).
#include "checkpoint/staged_model.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "checkpoint/shard_file_writer.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <regex>

namespace actorps {

namespace fs = std::filesystem;

namespace {

const char* const shard_file = "shard-0.bin";

} // namespace

staged_model::staged_model(std::string folder) : folder_(std::move(folder)) {
}

caf::expected<std::unique_ptr<staged_model>> staged_model::open(const std::string& dir, std::vector<size_t> sizes) {
  static std::atomic<uint64_t> count{0};
  static const std::regex staging{"\\.staged-([0-9]+)-[0-9]+"};
  remove_orphan_folders(dir, staging, 1); // (of processes killed mid-write)
  auto folder = cat(dir, "/.staged-", ::getpid(), "-", count++);
  std::error_code ec;
  fs::create_directories(folder, ec);
  if (ec)
    return caf::make_error(errc::file_error, cat(folder, ": cannot create: ", ec.message()));
  std::unique_ptr<staged_model> out{new staged_model(folder)};
  std::vector<shard_file_writer::entry> entries;
  for (uint32_t k = 0; k < sizes.size(); ++k)
    entries.push_back({k, sizes[k], 0, 0});
  auto file = shard_file_writer::open(folder + "/" + shard_file, 0, 0, std::move(entries));
  if (!file)
    return std::move(file.error());
  out->file_ = std::move(*file);
  return out;
}

staged_model::~staged_model() {
  file_.reset();
  std::error_code ignored;
  fs::remove_all(folder_, ignored);
}

caf::error staged_model::append(const float* values, size_t n) {
  return file_->append(values, n);
}

caf::error staged_model::finish() {
  auto written = file_->finish(shard_file);
  if (!written)
    return std::move(written.error());
  written_ = *written;
  return caf::none;
}

caf::error staged_model::publish(checkpoint_manifest m, const std::string& final_path) const {
  if (!written_)
    return caf::make_error(errc::invalid_argument, cat(file_->path(), ": published before it was finished"));
  auto tmp = begin_checkpoint(final_path);
  if (!tmp)
    return std::move(tmp.error());
  const auto to = *tmp + "/" + shard_file;
  std::error_code ec;
  const auto& from = file_->path();
  fs::create_hard_link(from, to, ec); // (the staged file stays for the next name)
  if (ec) { // (a file system without hard links: a copy, synced)
    ec.clear();
    fs::copy_file(from, to, ec);
    if (int fd = ::open(to.c_str(), O_RDONLY); !ec && fd >= 0) {
      if (::fsync(fd) != 0)
        ec = std::error_code{errno, std::generic_category()};
      ::close(fd);
    }
  }
  if (ec) {
    std::error_code ignored;
    fs::remove_all(*tmp, ignored);
    return caf::make_error(errc::file_error, cat(to, ": cannot link or copy ", from, ": ", ec.message()));
  }
  m.format = checkpoint_format_version;
  m.files = {*written_};
  return publish_checkpoint(*tmp, m, final_path);
}

} // namespace actorps
