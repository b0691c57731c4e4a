// Checkpoint files: Cereal binary archives, zlib crc32 checksums, POSIX fsync + rename.
#include "checkpoint/checkpoint_store.hpp"

#include "checkpoint/file_sink.hpp"
#include "common/checkpoint_choice.hpp"

#include "common/errc.hpp"
#include "common/file_io.hpp"
#include "common/log.hpp"

#include <cereal/archives/binary.hpp>
#include <cereal/types/string.hpp>
#include <cereal/types/vector.hpp>

#include <zlib.h>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <regex>
#include <set>
#include <sstream>

namespace actorps {

namespace fs = std::filesystem;

namespace {

constexpr char manifest_magic[8] = {'A', 'P', 'S', 'C', 'K', 'P', 'T', '1'};
const char* const manifest_name = "manifest.bin";

uint32_t crc_of(const std::string& bytes) {
  return static_cast<uint32_t>(crc_more(crc32(0L, Z_NULL, 0), bytes.data(), bytes.size()));
}

// Writes x as a Cereal archive to path and fsyncs it; its entry in the manifest (bytes, CRC-32).
template <class T>
caf::expected<checkpoint_file> write_archive(const std::string& path, uint32_t shard, const std::string& name,
                                             const T& x) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0)
    return caf::make_error(errc::file_error, cat(path, ": cannot create: ", std::strerror(errno)));
  file_sink sink{fd, path};
  caf::error err;
  try {
    std::ostream os{&sink};
    cereal::BinaryOutputArchive ar{os};
    ar(x);
  } catch (const std::exception& e) { // (cereal: a write that took fewer bytes; the sink says why)
    err = caf::make_error(errc::file_error, cat(path, ": ", e.what()));
  }
  if (auto failed = sink.finish())
    err = std::move(failed);
  if (!err && ::fsync(fd) != 0)
    err = caf::make_error(errc::file_error, cat(path, ": fsync failed: ", std::strerror(errno)));
  ::close(fd);
  if (err)
    return err;
  return checkpoint_file{shard, name, sink.bytes(), sink.crc()};
}

template <class T>
std::string to_bytes(const T& x) {
  std::ostringstream os{std::ios::binary};
  {
    cereal::BinaryOutputArchive ar{os};
    ar(x);
  }
  return os.str();
}

// The size and CRC-32 of a file, read 1 MiB at a time (a shard's file is checked before it is
// decoded, and neither pass holds all its bytes).
caf::expected<std::pair<uint64_t, uint32_t>> file_checksum(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return caf::make_error(errc::file_error, cat(path, ": cannot be read"));
  std::vector<char> block(size_t{1} << 20);
  uLong crc = crc32(0L, Z_NULL, 0);
  uint64_t bytes = 0;
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    const auto n = static_cast<size_t>(in.gcount());
    crc = crc_more(crc, block.data(), n);
    bytes += n;
  }
  if (in.bad())
    return caf::make_error(errc::file_error, cat(path, ": read failed"));
  return std::pair<uint64_t, uint32_t>{bytes, static_cast<uint32_t>(crc)};
}

// Decodes x from the Cereal archive in `in` (the bytes of path, checked already).
template <class T>
caf::error decode(std::istream& in, T& x, const std::string& path) {
  try {
    cereal::BinaryInputArchive ar{in};
    ar(x);
  } catch (const std::exception& e) {
    return caf::make_error(errc::corrupt_data, cat(path, ": cannot be decoded (", e.what(), ")"));
  }
  return caf::none;
}

// Decodes x from the file at path (checked already: file_checksum).
template <class T>
caf::error read_archive(const std::string& path, T& x) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return caf::make_error(errc::file_error, cat(path, ": cannot be read"));
  return decode(in, x, path);
}

template <class T>
caf::error from_bytes(const std::string& bytes, T& x, const std::string& path) {
  std::istringstream in{bytes, std::ios::binary};
  return decode(in, x, path);
}

std::string step_name(const std::string& prefix, int64_t step) {
  std::ostringstream os;
  os << prefix << std::setw(12) << std::setfill('0') << step;
  return os.str();
}

// The sizes of a shard file's arrays, per variable: what check_shard checks.
struct entry_sizes {
  uint32_t index = 0;
  uint64_t values = 0, slot0 = 0, slot1 = 0;
};

// A shard file holds exactly the variables the manifest places on its shard, each of its size.
caf::error check_shard(const checkpoint_manifest& m, uint32_t format, uint32_t holds, const std::vector<entry_sizes>& entries,
                       uint32_t shard, const std::string& path) {
  auto bad = [&](const std::string& why) { return caf::make_error(errc::corrupt_data, cat(path, ": ", why)); };
  if (format != m.format || holds != shard)
    return bad(cat("holds shard ", holds, " in format ", format, ", expected shard ", shard, " in format ", m.format));
  std::set<uint32_t> want, got;
  for (uint32_t k = 0; k < m.variables.size(); ++k)
    if (m.variables[k].shard == shard)
      want.insert(k);
  for (auto& v : entries) {
    if (v.index >= m.variables.size() || !got.insert(v.index).second)
      return bad(cat("variable index ", v.index, " is unknown or repeated"));
    auto size = static_cast<uint64_t>(m.variables[v.index].rows) * static_cast<uint64_t>(m.variables[v.index].cols);
    if (v.values != size || (v.slot0 != 0 && v.slot0 != size) || (v.slot1 != 0 && v.slot1 != size))
      return bad(cat(m.variables[v.index].name, " has ", v.values, " values, expected ", size));
  }
  if (got != want)
    return bad(cat("holds ", got.size(), " variables; the manifest places ", want.size(), " on shard ", shard));
  return caf::none;
}

// The manifest of checkpoint path, checked (magic, length, crc32, format).
caf::expected<checkpoint_manifest> read_manifest(const std::string& path) {
  auto mpath = path + "/" + manifest_name;
  auto raw = read_whole_file(mpath);
  if (!raw)
    return std::move(raw.error());
  constexpr size_t header = sizeof manifest_magic + sizeof(uint32_t) + sizeof(uint64_t);
  if (raw->size() < header || std::memcmp(raw->data(), manifest_magic, sizeof manifest_magic) != 0)
    return caf::make_error(errc::corrupt_data, cat(mpath, ": not an actorps checkpoint manifest (bad magic)"));
  uint32_t crc = 0;
  uint64_t length = 0;
  std::memcpy(&crc, raw->data() + sizeof manifest_magic, sizeof crc);
  std::memcpy(&length, raw->data() + sizeof manifest_magic + sizeof crc, sizeof length);
  if (raw->size() - header != length)
    return caf::make_error(errc::corrupt_data, cat(mpath, ": truncated (", raw->size() - header, " of ", length,
                                                   " bytes)"));
  auto payload = raw->substr(header);
  if (crc_of(payload) != crc)
    return caf::make_error(errc::corrupt_data, cat(mpath, ": checksum mismatch"));
  checkpoint_manifest m;
  if (auto err = from_bytes(payload, m, mpath))
    return err;
  if (m.format < 1 || m.format > checkpoint_format_version)
    return caf::make_error(errc::corrupt_data, cat(mpath, ": format ", m.format, ", this build reads formats 1 to ",
                                                   checkpoint_format_version));
  return m;
}

// Shard file f of checkpoint path: its size and crc32 against the manifest's.
caf::error check_file(const std::string& path, const checkpoint_file& f) {
  auto fpath = path + "/" + f.file;
  auto sum = file_checksum(fpath);
  if (!sum)
    return std::move(sum.error());
  if (sum->first != f.bytes)
    return caf::make_error(errc::corrupt_data, cat(fpath, ": ", sum->first, " bytes, the manifest says ", f.bytes,
                                                   " (truncated?)"));
  if (sum->second != f.crc32)
    return caf::make_error(errc::corrupt_data, cat(fpath, ": checksum mismatch"));
  return caf::none;
}

// The arrays of a shard file (checked already: check_file), their values skipped.
caf::expected<shard_file_index> index_file(const std::string& fpath) {
  std::ifstream in{fpath, std::ios::binary};
  if (!in)
    return caf::make_error(errc::file_error, cat(fpath, ": cannot be read"));
  auto bad = [&](const std::string& why) { return caf::make_error(errc::corrupt_data, cat(fpath, ": ", why)); };
  const auto size = static_cast<uint64_t>(fs::file_size(fpath));
  shard_file_index out;
  uint64_t count = 0;
  auto get = [&](auto& x) { return static_cast<bool>(in.read(reinterpret_cast<char*>(&x), sizeof x)); };
  if (!get(out.format) || !get(out.shard) || !get(out.version) || !get(count))
    return bad("too short for a shard file");
  if (count > size)
    return bad(cat("names ", count, " variables"));
  for (uint64_t k = 0; k < count; ++k) {
    shard_file_index::entry e;
    if (!get(e.index))
      return bad("ends inside its variables");
    for (auto* a : {&e.values, &e.slot0, &e.slot1}) {
      if (!get(a->count))
        return bad("ends inside its variables");
      a->offset = static_cast<uint64_t>(in.tellg());
      if (a->count > (size - a->offset) / sizeof(float))
        return bad(cat("variable index ", e.index, " has ", a->count, " values past the file's end"));
      in.seekg(static_cast<std::streamoff>(a->count * sizeof(float)), std::ios::cur);
    }
    out.entries.push_back(e);
  }
  if (static_cast<uint64_t>(in.tellg()) != size)
    return bad(cat(size - static_cast<uint64_t>(in.tellg()), " bytes after its last variable"));
  return out;
}

} // namespace

caf::expected<checkpoint_on_disk> verify_checkpoint(const std::string& path) {
  auto m = read_manifest(path);
  if (!m)
    return std::move(m.error());
  checkpoint_on_disk out{path, std::move(*m), {}};
  for (uint32_t s = 0; s < out.manifest.files.size(); ++s) {
    auto& f = out.manifest.files[s];
    if (auto err = check_file(path, f))
      return err;
    auto fpath = path + "/" + f.file;
    auto idx = index_file(fpath);
    if (!idx)
      return std::move(idx.error());
    std::vector<entry_sizes> sizes;
    for (auto& e : idx->entries)
      sizes.push_back({e.index, e.values.count, e.slot0.count, e.slot1.count});
    if (auto err = check_shard(out.manifest, idx->format, idx->shard, sizes, s, fpath))
      return err;
    out.files.push_back(std::move(*idx));
  }
  return out;
}

caf::error read_floats(const std::string& path, uint64_t offset, float* out, size_t n) {
  int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0)
    return caf::make_error(errc::file_error, cat(path, ": cannot be read: ", std::strerror(errno)));
  auto* to = reinterpret_cast<char*>(out);
  size_t left = n * sizeof(float);
  auto at = static_cast<off_t>(offset);
  while (left > 0) {
    ssize_t got = ::pread(fd, to, left, at);
    if (got <= 0) {
      auto why = got < 0 ? std::string{std::strerror(errno)} : std::string{"the file ends first"};
      ::close(fd);
      return caf::make_error(errc::file_error, cat(path, ": reading ", n, " values at byte ", offset, " failed: ", why));
    }
    to += got;
    left -= static_cast<size_t>(got);
    at += got;
  }
  ::close(fd);
  return caf::none;
}

caf::expected<checkpoint> read_checkpoint(const std::string& path) {
  auto manifest = read_manifest(path);
  if (!manifest)
    return std::move(manifest.error());
  checkpoint out;
  out.manifest = std::move(*manifest);
  auto& m = out.manifest;
  for (uint32_t s = 0; s < m.files.size(); ++s) {
    auto& f = m.files[s];
    auto fpath = path + "/" + f.file;
    if (auto err = check_file(path, f))
      return err;
    shard_checkpoint sc;
    if (auto err = read_archive(fpath, sc))
      return err;
    std::vector<entry_sizes> sizes;
    for (auto& v : sc.variables)
      sizes.push_back({v.index, v.values.size(), v.slot0.size(), v.slot1.size()});
    if (auto err = check_shard(m, sc.format, sc.shard, sizes, s, fpath))
      return err;
    out.shards.push_back(std::move(sc));
  }
  return out;
}

caf::error check_same_model(const checkpoint_manifest& found, const std::string& model,
                            const std::vector<checkpoint_variable>& variables, const std::string& path) {
  bool same = found.model == model && found.variables.size() == variables.size();
  for (size_t k = 0; same && k < variables.size(); ++k)
    same = found.variables[k].name == variables[k].name && found.variables[k].rows == variables[k].rows
           && found.variables[k].cols == variables[k].cols;
  if (same)
    return caf::none;
  return caf::make_error(errc::invalid_config, cat("checkpoint ", path, " is of another model: \"", found.model,
                                                   "\" with ", found.variables.size(), " variables, this run trains \"",
                                                   model, "\" with ", variables.size()));
}

namespace {

// Removes the temporary folders of saves that a process which no longer runs left half written
// (killed mid-save); a live process's folder is its save in progress.
void remove_unfinished(const std::string& dir) {
  static const std::regex unfinished{"(ckpt|best)-[0-9]{12}\\.tmp-([0-9]+)"};
  auto removed = remove_orphan_folders(dir, unfinished, 2);
  if (!removed.empty())
    log_line("checkpoints", cat("removed ", removed.size(), " unfinished save(s) of processes that no longer run in ",
                                dir, ": ", removed.front(), removed.size() > 1 ? ", ..." : ""));
}

} // namespace

std::vector<std::string> remove_orphan_folders(const std::string& dir, const std::regex& name_of, size_t pid_group) {
  std::vector<std::string> removed;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(dir, ec)) {
    auto name = entry.path().filename().string();
    std::smatch m;
    if (!entry.is_directory() || !std::regex_match(name, m, name_of))
      continue;
    auto pid = static_cast<pid_t>(std::stol(m[pid_group].str()));
    if (pid == ::getpid() || ::kill(pid, 0) == 0 || errno != ESRCH)
      continue;
    std::error_code ignored;
    if (fs::remove_all(entry.path(), ignored) > 0)
      removed.push_back(name);
  }
  return removed;
}

caf::expected<checkpoint_store> checkpoint_store::open(const std::string& dir, int keep) {
  if (keep < 1)
    return caf::make_error(errc::invalid_config, cat("checkpoint.keep must be >= 1, got ", keep));
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec || !fs::is_directory(dir))
    return caf::make_error(errc::file_error, cat(dir, ": cannot create the checkpoint directory: ", ec.message()));
  remove_unfinished(dir);
  return checkpoint_store{dir, keep};
}

std::vector<std::string> checkpoint_store::list(bool best) const {
  static const std::regex regular{"ckpt-[0-9]{12}"}, best_name{"best-[0-9]{12}"};
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& entry : fs::directory_iterator(dir_, ec)) {
    auto name = entry.path().filename().string();
    if (entry.is_directory() && std::regex_match(name, best ? best_name : regular))
      out.push_back(entry.path().string());
  }
  std::sort(out.begin(), out.end()); // zero-padded steps: name order is step order
  return out;
}

caf::expected<std::string> begin_checkpoint(const std::string& final_path) {
  auto tmp = final_path + ".tmp-" + std::to_string(::getpid());
  std::error_code ec;
  fs::remove_all(tmp, ec);
  fs::create_directory(tmp, ec);
  if (ec)
    return caf::make_error(errc::file_error, cat(tmp, ": cannot create: ", ec.message()));
  return tmp;
}

caf::error write_checkpoint(const checkpoint& c, const std::string& final_path) {
  auto began = begin_checkpoint(final_path);
  if (!began)
    return std::move(began.error());
  const auto& tmp = *began;
  auto fail = [&](caf::error err) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return err;
  };
  checkpoint_manifest m = c.manifest;
  m.format = checkpoint_format_version;
  m.files.clear();
  for (uint32_t s = 0; s < c.shards.size(); ++s) {
    auto name = cat("shard-", s, ".bin");
    auto written = [&]() -> caf::expected<checkpoint_file> {
      if (c.shards[s].format == m.format)
        return write_archive(tmp + "/" + name, s, name, c.shards[s]);
      shard_checkpoint now = c.shards[s]; // read from an older format: written in this one
      now.format = m.format;
      return write_archive(tmp + "/" + name, s, name, now);
    }();
    if (!written)
      return fail(std::move(written.error()));
    m.files.push_back(*written);
  }
  return publish_checkpoint(tmp, std::move(m), final_path);
}

caf::error publish_checkpoint(const std::string& tmp, const checkpoint_manifest& m, const std::string& final_path) {
  auto fail = [&](caf::error err) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return err;
  };
  auto payload = to_bytes(m);
  uint32_t crc = crc_of(payload);
  uint64_t length = payload.size();
  std::string raw{manifest_magic, sizeof manifest_magic};
  raw.append(reinterpret_cast<const char*>(&crc), sizeof crc);
  raw.append(reinterpret_cast<const char*>(&length), sizeof length);
  raw += payload;
  if (auto err = write_file_synced(tmp + "/" + manifest_name, raw))
    return fail(std::move(err));
  if (auto err = sync_directory(tmp))
    return fail(std::move(err));
  std::error_code ec;
  fs::remove_all(final_path, ec); // the same step (or the same model name) saved again
  fs::rename(tmp, final_path, ec);
  if (ec)
    return fail(caf::make_error(errc::file_error, cat(final_path, ": cannot rename into place: ", ec.message())));
  auto parent = fs::path{final_path}.parent_path().string();
  return sync_directory(parent.empty() ? "." : parent);
}

caf::expected<std::string> checkpoint_store::final_path(const std::string& prefix, int64_t step) const {
  std::error_code ec;
  if (!fs::is_directory(dir_, ec)) { // removed while the run went on (with the run folder, say)
    fs::create_directories(dir_, ec);
    if (ec || !fs::is_directory(dir_))
      return caf::make_error(errc::file_error, cat(dir_, ": the checkpoint directory is gone, with the checkpoints saved in "
                                                   "it, and cannot be created again: ", ec.message()));
    log_line("checkpoints", cat(dir_, " was removed while the run went on: created it again; the checkpoints saved in it "
                                "before are gone"));
  }
  return dir_ + "/" + step_name(prefix, step);
}

void checkpoint_store::remove_beyond(const std::string& prefix, int keep) const {
  std::error_code ec;
  auto all = list(prefix == "best-");
  for (size_t i = 0; i + static_cast<size_t>(keep) < all.size(); ++i)
    fs::remove_all(all[i], ec);
}

caf::expected<std::string> checkpoint_store::write(const checkpoint& c, const std::string& prefix, int keep) {
  auto path = final_path(prefix, c.manifest.global_step);
  if (!path)
    return path;
  if (auto err = write_checkpoint(c, *path))
    return err;
  remove_beyond(prefix, keep);
  return path;
}

caf::expected<std::string> checkpoint_store::begin_save(int64_t step, bool best) const {
  auto path = final_path(best ? "best-" : "ckpt-", step);
  if (!path)
    return path;
  return begin_checkpoint(*path);
}

caf::expected<std::string> checkpoint_store::commit_save(const std::string& tmp, const checkpoint_manifest& m, bool best) {
  const std::string prefix = best ? "best-" : "ckpt-";
  auto path = final_path(prefix, m.global_step);
  if (!path)
    return path;
  if (auto err = publish_checkpoint(tmp, m, *path))
    return err;
  remove_beyond(prefix, best ? 1 : keep_);
  return path;
}

caf::expected<std::string> checkpoint_store::save(const checkpoint& c) {
  return write(c, "ckpt-", keep_);
}

caf::expected<std::string> checkpoint_store::save_best(const checkpoint& c) {
  return write(c, "best-", 1);
}

caf::expected<std::optional<loaded_checkpoint>> checkpoint_store::load_newest(bool best) const {
  auto all = list(best);
  auto found = newest_readable<checkpoint>(all.size(), [&](size_t i) { return read_checkpoint(all[i]); }, dir_);
  if (!found)
    return std::move(found.error());
  if (!*found)
    return std::optional<loaded_checkpoint>{};
  auto& c = **found;
  return std::optional<loaded_checkpoint>{loaded_checkpoint{std::move(c.value), all[c.index], std::move(c.skipped)}};
}

caf::expected<std::optional<checkpoint_on_disk>> checkpoint_store::find_latest(std::vector<std::string>& skipped) const {
  auto all = list(false);
  auto found = newest_readable<checkpoint_on_disk>(all.size(), [&](size_t i) { return verify_checkpoint(all[i]); }, dir_);
  if (!found)
    return std::move(found.error());
  if (!*found)
    return std::optional<checkpoint_on_disk>{};
  skipped = std::move((*found)->skipped);
  return std::optional<checkpoint_on_disk>{std::move((*found)->value)};
}

caf::expected<std::optional<loaded_checkpoint>> checkpoint_store::load_latest() const {
  return load_newest(false);
}

caf::expected<std::optional<loaded_checkpoint>> checkpoint_store::load_best() const {
  return load_newest(true);
}

} // namespace actorps
