// The zip container (PKWARE APPNOTE: local headers, central directory, end record; zip64 extra
// fields when reading) and the .npy v1.0 encoding (magic, version, header dict, raw data).
#include "data/npz_file.hpp"

#include "common/errc.hpp"
#include "common/memory_policy.hpp"
#include "common/file_io.hpp"
#include "common/log.hpp"
#include "common/utf8.hpp"

#include <zlib.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>

namespace actorps {

namespace {

// -- little-endian fields -------------------------------------------------------------------------

void put16(std::string& out, uint16_t v) {
  out += static_cast<char>(v & 0xFF);
  out += static_cast<char>(v >> 8);
}

void put32(std::string& out, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    out += static_cast<char>((v >> (8 * i)) & 0xFF);
}

uint64_t get_le(const std::string& s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i)
    v = (v << 8) | static_cast<unsigned char>(s[at + static_cast<size_t>(i)]);
  return v;
}

uint32_t crc_of(const char* data, size_t n) {
  uLong crc = crc32(0L, Z_NULL, 0);
  while (n > 0) { // crc32 takes uInt lengths
    auto chunk = static_cast<uInt>(std::min<size_t>(n, 1u << 30));
    crc = crc32(crc, reinterpret_cast<const Bytef*>(data), chunk);
    data += chunk;
    n -= chunk;
  }
  return static_cast<uint32_t>(crc);
}

// -- .npy ----------------------------------------------------------------------------------------

constexpr char npy_magic[] = "\x93NUMPY";

std::string shape_text(const std::vector<size_t>& shape) {
  std::string out = "(";
  for (size_t i = 0; i < shape.size(); ++i)
    out += std::to_string(shape[i]) + (shape.size() == 1 ? "," : i + 1 < shape.size() ? ", " : "");
  return out + ")";
}

std::string npy_bytes(const npy_array& a) {
  std::string descr, data;
  std::vector<size_t> shape = a.shape;
  if (a.is_text) {
    auto text = code_points(a.text);
    descr = cat("<U", std::max<size_t>(text.size(), 1));
    shape.clear();
    for (char32_t cp : text)
      put32(data, static_cast<uint32_t>(cp));
    if (text.empty())
      put32(data, 0);
  } else {
    descr = "<f4";
    data.resize(a.values.size() * sizeof(float));
    for (size_t i = 0; i < a.values.size(); ++i) { // little-endian whatever the host
      uint32_t bits;
      std::memcpy(&bits, &a.values[i], sizeof bits);
      for (int b = 0; b < 4; ++b)
        data[4 * i + static_cast<size_t>(b)] = static_cast<char>((bits >> (8 * b)) & 0xFF);
    }
  }
  std::string header = cat("{'descr': '", descr, "', 'fortran_order': False, 'shape': ", shape_text(shape), ", }");
  // magic (6) + version (2) + length (2) + header + '\n' is a multiple of 64, as numpy writes it.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::string out{npy_magic, 6};
  out += '\x01';
  out += '\x00';
  put16(out, static_cast<uint16_t>(header.size()));
  return out + header + data;
}

// Finds 'key': in a header dict and returns the text of its value up to the next ',' at depth 0.
bool dict_value(const std::string& dict, const std::string& key, std::string& out) {
  for (const char* quote : {"'", "\""}) {
    auto at = dict.find(cat(quote, key, quote));
    if (at == std::string::npos)
      continue;
    at = dict.find(':', at);
    if (at == std::string::npos)
      return false;
    ++at;
    int depth = 0;
    size_t end = at;
    for (; end < dict.size(); ++end) {
      char c = dict[end];
      if (c == '(')
        ++depth;
      else if (c == ')')
        --depth;
      else if ((c == ',' || c == '}') && depth == 0)
        break;
    }
    out = dict.substr(at, end - at);
    auto first = out.find_first_not_of(" ");
    auto last = out.find_last_not_of(" ");
    out = first == std::string::npos ? "" : out.substr(first, last - first + 1);
    return true;
  }
  return false;
}

caf::error parse_npy(const std::string& bytes, npy_array& a, const std::string& where) {
  auto bad = [&](const std::string& why) { return caf::make_error(errc::corrupt_data, cat(where, ": ", why)); };
  if (bytes.size() < 10 || bytes.compare(0, 6, npy_magic, 6) != 0)
    return bad("not a .npy array (bad magic)");
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_at = 0;
  if (major == 1) {
    header_len = get_le(bytes, 8, 2);
    header_at = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return bad("truncated .npy header");
    header_len = get_le(bytes, 8, 4);
    header_at = 12;
  } else {
    return bad(cat(".npy version ", major, " is not supported"));
  }
  if (header_at + header_len > bytes.size())
    return bad("truncated .npy header");
  std::string dict = bytes.substr(header_at, header_len);
  std::string descr, fortran, shape;
  if (!dict_value(dict, "descr", descr) || !dict_value(dict, "fortran_order", fortran)
      || !dict_value(dict, "shape", shape))
    return bad(cat("the .npy header lacks descr, fortran_order or shape: ", dict));
  if (fortran != "False")
    return bad("a Fortran-order array; save it in C order (numpy.ascontiguousarray)");
  if (shape.size() < 2 || shape.front() != '(' || shape.back() != ')')
    return bad(cat("bad shape ", shape));
  a.shape.clear();
  size_t count = 1;
  for (size_t i = 1; i + 1 < shape.size();) {
    while (i + 1 < shape.size() && (shape[i] == ' ' || shape[i] == ','))
      ++i;
    if (i + 1 >= shape.size())
      break;
    size_t used = 0;
    unsigned long long dim = 0;
    try {
      dim = std::stoull(shape.substr(i), &used);
    } catch (const std::exception&) {
      return bad(cat("bad shape ", shape));
    }
    if (dim > (1ull << 34) || count > (1ull << 34) / std::max<unsigned long long>(dim, 1))
      return bad(cat("shape ", shape, " is too large"));
    a.shape.push_back(static_cast<size_t>(dim));
    count *= static_cast<size_t>(dim);
    i += used;
  }
  const size_t data_at = header_at + header_len;
  const size_t available = bytes.size() - data_at;
  descr = descr.size() >= 2 && (descr.front() == '\'' || descr.front() == '"') ? descr.substr(1, descr.size() - 2)
                                                                                  : descr;
  a.is_text = false;
  a.texts.clear();
  a.text.clear();
  // numbers: little-endian (or single-byte) floats, integers and booleans, held as floats
  const char order = descr.empty() ? ' ' : descr[0];
  const std::string kind = descr.size() >= 3 ? descr.substr(1) : std::string{};
  const bool numeric = (order == '<' || order == '|') &&
                       (kind == "f4" || kind == "f8" || kind == "u1" || kind == "i1" || kind == "b1" || kind == "u2" ||
                        kind == "i2" || kind == "u4" || kind == "i4" || kind == "u8" || kind == "i8");
  if (numeric) {
    const size_t width = static_cast<size_t>(kind[1] - '0');
    if (available != count * width)
      return bad(cat(descr, " array of shape ", shape, " needs ", count * width, " bytes, the entry has ", available));
    a.dtype = kind;
    a.values.resize(count);
    for (size_t i = 0; i < count; ++i) {
      uint64_t bits = get_le(bytes, data_at + i * width, static_cast<int>(width));
      float& v = a.values[i];
      if (kind == "f4") {
        auto b32 = static_cast<uint32_t>(bits);
        std::memcpy(&v, &b32, 4);
      } else if (kind == "f8") {
        double d;
        std::memcpy(&d, &bits, 8);
        v = static_cast<float>(d);
      } else if (kind[0] == 'i') { // sign-extend
        const int shift = 64 - 8 * static_cast<int>(width);
        v = static_cast<float>(static_cast<int64_t>(bits << shift) >> shift);
      } else {
        v = static_cast<float>(bits);
      }
    }
    return caf::none;
  }
  if (descr.size() > 2 && descr.compare(0, 2, "<U") == 0) {
    size_t chars = 0;
    try {
      chars = std::stoull(descr.substr(2));
    } catch (const std::exception&) {
      return bad(cat("bad dtype ", descr));
    }
    if (available != count * chars * 4)
      return bad(cat("a ", descr, " array of ", count, " strings needs ", count * chars * 4, " bytes, the entry has ",
                     available));
    for (size_t k = 0; k < count; ++k) {
      std::string one;
      for (size_t i = 0; i < chars; ++i) {
        auto cp = static_cast<char32_t>(get_le(bytes, data_at + 4 * (k * chars + i), 4));
        if (cp == 0)
          break; // numpy pads shorter strings with NULs
        append_utf8(one, cp);
      }
      a.texts.push_back(std::move(one));
    }
    a.dtype = "U";
    a.is_text = a.shape.empty();
    if (a.is_text)
      a.text = a.texts.front();
    return caf::none;
  }
  if (descr == "|O")
    return bad("dtype object (pickled Python objects) is not supported; save strings as a unicode array "
               "(numpy.array(names, dtype=str))");
  return bad(cat("dtype ", descr, " is not supported (floats, integers, booleans or unicode strings)"));
}

// -- zip -----------------------------------------------------------------------------------------

constexpr uint32_t local_sig = 0x04034b50, central_sig = 0x02014b50, end_sig = 0x06054b50;
constexpr uint32_t zip64_end_sig = 0x06064b50, zip64_locator_sig = 0x07064b50;

void put_dos_time(std::string& out) {
  put16(out, 0);                            // 00:00:00
  put16(out, static_cast<uint16_t>((2020 - 1980) << 9 | 1 << 5 | 1)); // 2020-01-01: reproducible bytes
}

// The most a deflate stream expands: 258 bytes from each 2-bit code of a block (zlib's FAQ).
constexpr uint64_t max_deflate_ratio = 1032;

caf::expected<std::string> inflate_raw(const std::string& in, size_t expected, const std::string& where) {
  std::string out(expected, '\0');
  z_stream zs{};
  if (inflateInit2(&zs, -MAX_WBITS) != Z_OK)
    return caf::make_error(errc::corrupt_data, cat(where, ": zlib cannot start"));
  zs.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  zs.avail_in = static_cast<uInt>(in.size());
  zs.next_out = reinterpret_cast<Bytef*>(out.data());
  zs.avail_out = static_cast<uInt>(out.size());
  int rc = inflate(&zs, Z_FINISH);
  size_t produced = zs.total_out;
  inflateEnd(&zs);
  if (rc != Z_STREAM_END || produced != expected)
    return caf::make_error(errc::corrupt_data, cat(where, ": the deflated data is corrupt"));
  return out;
}

} // namespace

npy_array float_array(std::string name, std::vector<size_t> shape, std::vector<float> values) {
  npy_array a;
  a.name = std::move(name);
  a.shape = std::move(shape);
  a.values = std::move(values);
  return a;
}

npy_array text_array(std::string name, std::string text) {
  npy_array a;
  a.name = std::move(name);
  a.text = std::move(text);
  a.is_text = true;
  return a;
}

caf::error write_npz(const std::vector<npy_array>& arrays, const std::string& path) {
  std::string zip, central;
  uint16_t entries = 0;
  for (auto& a : arrays) {
    auto data = npy_bytes(a);
    auto name = a.name + ".npy";
    if (zip.size() + data.size() > std::numeric_limits<uint32_t>::max() - 65536 || entries == 0xFFFF)
      return caf::make_error(errc::invalid_argument, cat(path, ": the model is too large for a zip without zip64"));
    auto offset = static_cast<uint32_t>(zip.size());
    auto crc = crc_of(data.data(), data.size());
    auto size = static_cast<uint32_t>(data.size());
    put32(zip, local_sig);
    put16(zip, 20); // version needed: 2.0
    put16(zip, 0);  // flags
    put16(zip, 0);  // stored
    put_dos_time(zip);
    put32(zip, crc);
    put32(zip, size);
    put32(zip, size);
    put16(zip, static_cast<uint16_t>(name.size()));
    put16(zip, 0); // extra
    zip += name;
    zip += data;
    put32(central, central_sig);
    put16(central, 20); // made by
    put16(central, 20); // needed
    put16(central, 0);
    put16(central, 0);
    put_dos_time(central);
    put32(central, crc);
    put32(central, size);
    put32(central, size);
    put16(central, static_cast<uint16_t>(name.size()));
    put16(central, 0); // extra
    put16(central, 0); // comment
    put16(central, 0); // disk
    put16(central, 0); // internal attributes
    put32(central, 0); // external attributes
    put32(central, offset);
    central += name;
    ++entries;
  }
  auto central_at = static_cast<uint32_t>(zip.size());
  zip += central;
  put32(zip, end_sig);
  put16(zip, 0);
  put16(zip, 0);
  put16(zip, entries);
  put16(zip, entries);
  put32(zip, static_cast<uint32_t>(central.size()));
  put32(zip, central_at);
  put16(zip, 0);
  return write_file_atomically(path, zip);
}

bool looks_like_npz(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  char head[4] = {};
  return in.read(head, 4) && std::memcmp(head, "PK\x03\x04", 4) == 0;
}

caf::expected<std::vector<npy_array>> read_npz(const std::string& path) {
  auto raw = read_whole_file(path);
  if (!raw)
    return std::move(raw.error());
  const std::string& z = *raw;
  auto bad = [&](const std::string& why) { return caf::make_error(errc::corrupt_data, cat(path, ": ", why)); };
  if (z.size() < 22 || z.compare(0, 4, "PK\x03\x04", 4) != 0)
    return bad("not an .npz file (no zip header)");
  // The end record: the last "PK\5\6" within the final 64 KiB + 22 bytes.
  size_t end = std::string::npos;
  for (size_t i = z.size() - 22 + 1; i-- > 0 && z.size() - i <= 65536 + 22;)
    if (get_le(z, i, 4) == end_sig) {
      end = i;
      break;
    }
  if (end == std::string::npos)
    return bad("truncated: the zip's end record is missing");
  uint64_t count = get_le(z, end + 10, 2);
  uint64_t cd_size = get_le(z, end + 12, 4);
  uint64_t cd_at = get_le(z, end + 16, 4);
  if ((cd_at == 0xFFFFFFFF || count == 0xFFFF) && end >= 20 && get_le(z, end - 20, 4) == zip64_locator_sig) {
    uint64_t rec = get_le(z, end - 20 + 8, 8);
    if (rec + 56 > z.size() || get_le(z, rec, 4) != zip64_end_sig)
      return bad("corrupt zip64 end record");
    count = get_le(z, rec + 32, 8);
    cd_size = get_le(z, rec + 40, 8);
    cd_at = get_le(z, rec + 48, 8);
  }
  if (cd_at + cd_size > z.size())
    return bad("truncated: the zip's central directory lies beyond the end of the file");
  std::vector<npy_array> out;
  size_t at = cd_at;
  // Crafted archives (issue 50, item 13): sizes are checked against the file and the memory that
  // can be had before anything is allocated, and entries may not share their compressed bytes
  // (an overlapping "zip bomb" of 2 MB declared 10.6 GB).
  std::vector<std::pair<uint64_t, uint64_t>> stored; // each entry's [begin, end) in the file
  uint64_t declared = 0;
  const auto memory = available_memory();
  for (uint64_t e = 0; e < count; ++e) {
    if (at + 46 > z.size() || get_le(z, at, 4) != central_sig)
      return bad(cat("corrupt central directory entry ", e));
    auto method = get_le(z, at + 10, 2);
    auto crc = static_cast<uint32_t>(get_le(z, at + 16, 4));
    uint64_t csize = get_le(z, at + 20, 4), usize = get_le(z, at + 24, 4);
    size_t name_len = get_le(z, at + 28, 2), extra_len = get_le(z, at + 30, 2), comment_len = get_le(z, at + 32, 2);
    uint64_t local = get_le(z, at + 42, 4);
    if (at + 46 + name_len + extra_len + comment_len > z.size())
      return bad(cat("corrupt central directory entry ", e));
    std::string name = z.substr(at + 46, name_len);
    for (size_t x = at + 46 + name_len; x + 4 <= at + 46 + name_len + extra_len;) { // zip64 sizes
      auto id = get_le(z, x, 2), len = get_le(z, x + 2, 2);
      if (id == 0x0001) {
        size_t f = x + 4;
        if (usize == 0xFFFFFFFF && f + 8 <= x + 4 + len) { usize = get_le(z, f, 8); f += 8; }
        if (csize == 0xFFFFFFFF && f + 8 <= x + 4 + len) { csize = get_le(z, f, 8); f += 8; }
        if (local == 0xFFFFFFFF && f + 8 <= x + 4 + len) { local = get_le(z, f, 8); }
      }
      x += 4 + len;
    }
    at += 46 + name_len + extra_len + comment_len;
    const std::string where = cat(path, ": entry ", name);
    if (local + 30 > z.size() || get_le(z, local, 4) != local_sig)
      return caf::make_error(errc::corrupt_data, cat(where, ": bad local header"));
    uint64_t data_at = local + 30 + get_le(z, local + 26, 2) + get_le(z, local + 28, 2);
    if (data_at + csize > z.size())
      return caf::make_error(errc::corrupt_data, cat(where, ": truncated (", csize, " bytes expected)"));
    if (usize > (1ull << 36))
      return caf::make_error(errc::corrupt_data, cat(where, ": ", usize, " bytes is too large"));
    if (method == 0 && usize != csize)
      return caf::make_error(errc::corrupt_data, cat(where, ": stores ", csize, " bytes but declares ", usize));
    if (method == 8 && usize > csize * max_deflate_ratio + 1024)
      return caf::make_error(errc::corrupt_data, cat(where, ": declares ", usize, " bytes from ", csize,
                                                     " deflated bytes, more than deflate can produce (", max_deflate_ratio, ":1)"));
    for (auto [begin, end_at] : stored)
      if (data_at < end_at && begin < data_at + csize)
        return caf::make_error(errc::corrupt_data, cat(where, ": its bytes overlap another entry's (a crafted archive)"));
    stored.emplace_back(data_at, data_at + csize);
    declared += usize;
    if (memory && declared > *memory)
      return caf::make_error(errc::corrupt_data, cat(where, ": the entries so far declare ", declared,
                                                     " bytes, more than the ", *memory, " bytes of memory available"));
    std::string data = z.substr(data_at, csize);
    if (method == 8) {
      auto inflated = inflate_raw(data, usize, where);
      if (!inflated)
        return std::move(inflated.error());
      data = std::move(*inflated);
    } else if (method != 0) {
      return caf::make_error(errc::corrupt_data, cat(where, ": compression method ", method,
                                                     " is not supported (stored or deflate)"));
    }
    if (data.size() != usize || crc_of(data.data(), data.size()) != crc)
      return caf::make_error(errc::corrupt_data, cat(where, ": checksum mismatch"));
    if (name.size() <= 4 || name.compare(name.size() - 4, 4, ".npy") != 0)
      return caf::make_error(errc::corrupt_data, cat(where, ": not a .npy entry"));
    npy_array a;
    a.name = name.substr(0, name.size() - 4);
    if (auto err = parse_npy(data, a, where))
      return err;
    out.push_back(std::move(a));
  }
  return out;
}

} // namespace actorps
