// IDX parsing over zlib's gzread, which also reads uncompressed files transparently.
#include "data/idx_reader.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace actorps {

namespace {

struct gz_closer {
  void operator()(gzFile_s* f) const { gzclose(f); }
};
using gz_ptr = std::unique_ptr<gzFile_s, gz_closer>;

// Reads up to n bytes; returns the count read, or -1 with `why` set on a stream error.
long read_some(gzFile f, void* dst, size_t n, std::string& why) {
  size_t done = 0;
  auto* out = static_cast<unsigned char*>(dst);
  while (done < n) {
    unsigned chunk = static_cast<unsigned>(std::min<size_t>(n - done, 1u << 30));
    int got = gzread(f, out + done, chunk);
    if (got < 0) {
      int code = 0;
      why = gzerror(f, &code);
      return -1;
    }
    if (got == 0)
      break;
    done += static_cast<size_t>(got);
  }
  return static_cast<long>(done);
}

} // namespace

caf::expected<idx_array> read_idx(const std::string& path) {
  auto corrupt = [&](const std::string& what) {
    return caf::make_error(errc::corrupt_data, cat(path, ": ", what));
  };
  errno = 0;
  gz_ptr file{gzopen(path.c_str(), "rb")};
  if (!file)
    return caf::make_error(errc::file_error, cat(path, ": cannot open (",
                                                  errno != 0 ? std::strerror(errno) : "zlib", ")"));
  std::string why;
  unsigned char magic[4];
  long got = read_some(file.get(), magic, 4, why);
  if (got < 0)
    return corrupt("bad gzip stream (" + why + ")");
  if (got < 4)
    return corrupt(cat("truncated header: ", got, " of 4 magic bytes"));
  if (magic[0] != 0 || magic[1] != 0)
    return corrupt(cat("wrong magic: first two bytes are ", int{magic[0]}, " ", int{magic[1]},
                       ", expected 0 0 (not an IDX file)"));
  if (magic[2] != 0x08)
    return corrupt(cat("unsupported element type 0x", std::hex, int{magic[2]},
                       " (only 0x08, unsigned byte)"));
  const int rank = magic[3];
  if (rank < 1 || rank > 4)
    return corrupt(cat("unsupported rank ", rank, " (1 to 4)"));
  idx_array out;
  uint64_t total = 1;
  for (int i = 0; i < rank; ++i) {
    unsigned char b[4];
    got = read_some(file.get(), b, 4, why);
    if (got < 0)
      return corrupt("bad gzip stream (" + why + ")");
    if (got < 4)
      return corrupt(cat("truncated header: dimension ", i, " of ", rank, " is missing"));
    uint32_t d = (uint32_t{b[0]} << 24) | (uint32_t{b[1]} << 16) | (uint32_t{b[2]} << 8) | b[3];
    if (d == 0)
      return corrupt(cat("dimension ", i, " is zero"));
    total *= d;
    if (total > (uint64_t{1} << 34))
      return corrupt("dimensions describe more than 16 GiB of data");
    out.dims.push_back(d);
  }
  // The data as it comes, 16 MiB at a time, not as the header declares it: a header promising
  // gigabytes in a file of kilobytes costs what the file holds, not what it promises.
  constexpr uint64_t chunk = uint64_t{16} << 20;
  uint64_t have = 0;
  while (have < total) {
    const uint64_t want = std::min(total - have, chunk);
    out.data.resize(static_cast<size_t>(have + want));
    got = read_some(file.get(), out.data.data() + have, static_cast<size_t>(want), why);
    if (got < 0)
      return corrupt("bad gzip stream (" + why + ")");
    have += static_cast<uint64_t>(got);
    if (static_cast<uint64_t>(got) < want)
      break;
  }
  if (have < total)
    return corrupt(cat("truncated: header promises ", total, " data bytes, file has ", have));
  unsigned char extra;
  got = read_some(file.get(), &extra, 1, why);
  if (got < 0)
    return corrupt("bad gzip stream (" + why + ")");
  if (got > 0)
    return corrupt(cat("trailing bytes after the ", total, " data bytes the header promises"));
  return out;
}

} // namespace actorps
