// Scratch directories, file and random-data helpers for tests.
#include "tests/support/helpers.hpp"

#include <boost/test/unit_test.hpp>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <zlib.h>
#include <png.h>

#include <cstring>

#include <ftw.h>
#include <unistd.h>

namespace actorps::test {

temp_dir::temp_dir() {
  const char* base = std::getenv("TMPDIR");
  std::string templ = std::string{base != nullptr ? base : "/tmp"} + "/actorps-test-XXXXXX";
  if (::mkdtemp(templ.data()) == nullptr)
    throw std::runtime_error("mkdtemp failed for " + templ);
  path_ = templ;
}

temp_dir::~temp_dir() {
  ::nftw(
    path_.c_str(), [](const char* p, const struct stat*, int, struct FTW*) { return ::remove(p); },
    16, FTW_DEPTH | FTW_PHYS);
}

void write_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out{path, std::ios::binary | std::ios::trunc};
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!out)
    throw std::runtime_error("cannot write " + path);
}

std::vector<std::vector<uint8_t>> damaged_copies(const std::vector<uint8_t>& bytes, uint64_t seed, size_t count) {
  uint64_t state = seed;
  auto next = [&state] { // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  auto below = [&next](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(next() % n); };
  std::vector<std::vector<uint8_t>> out;
  for (size_t k = 0; k < count; ++k) {
    auto d = bytes;
    const size_t span = below(2) == 0 ? std::min<size_t>(64, d.size()) : d.size(); // (the headers, often)
    switch (below(5)) {
      case 0:
        for (size_t n = 1 + below(8); n > 0 && span > 0; --n)
          d[below(span)] = static_cast<uint8_t>(next());
        break;
      case 1: {
        static const uint8_t extremes[] = {0x00, 0x7f, 0x80, 0xff};
        const uint8_t v = extremes[below(4)];
        for (size_t at = below(span), n = 1 + below(8); n > 0 && at < d.size(); --n, ++at)
          d[at] = v;
        break;
      }
      case 2:
        d.resize(below(d.size() + 1));
        break;
      case 3: {
        std::vector<uint8_t> junk(1 + below(64));
        for (auto& b : junk)
          b = static_cast<uint8_t>(next());
        d.insert(d.begin() + static_cast<std::ptrdiff_t>(below(span + 1)), junk.begin(), junk.end());
        break;
      }
      default:
        if (!d.empty())
          std::swap(d[below(span)], d[below(d.size())]);
    }
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in{path, std::ios::binary};
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_png(const std::string& path, int w, int h, uint32_t format, const void* pixels) {
  png_image image;
  std::memset(&image, 0, sizeof image);
  image.version = PNG_IMAGE_VERSION;
  image.width = static_cast<png_uint_32>(w);
  image.height = static_cast<png_uint_32>(h);
  image.format = format;
  if (!png_image_write_to_file(&image, path.c_str(), 0, pixels, 0, nullptr))
    throw std::runtime_error("cannot write " + path + ": " + image.message);
}

void write_gz_file(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  if (f == nullptr)
    throw std::runtime_error("cannot write " + path);
  if (!bytes.empty())
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
  gzclose(f);
}

std::vector<uint8_t> idx_bytes(const std::vector<uint32_t>& dims, const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out{0, 0, 0x08, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims)
    for (int shift = 24; shift >= 0; shift -= 8)
      out.push_back(static_cast<uint8_t>(d >> shift));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

void run_python(const temp_dir& dir, const std::string& body) {
  std::string script = "import os, sys\nimport numpy as np\nfrom PIL import Image\nd = sys.argv[1]\n"
                       "def put(path, img):\n    os.makedirs(os.path.dirname(d + path), exist_ok=True); img.save(d + path)\n" +
                       body;
  write_file(dir.file("make.py"), std::vector<uint8_t>(script.begin(), script.end()));
  BOOST_REQUIRE_MESSAGE(std::system(("/usr/bin/python3 " + dir.file("make.py") + " " + dir.file("")).c_str()) == 0,
                        "the test's Python script failed: " << body);
}

std::string read_text(const std::string& path) {
  std::ifstream in{path};
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

stderr_capture::stderr_capture() {
  std::fflush(stderr);
  saved_ = ::dup(STDERR_FILENO);
  FILE* f = std::fopen(dir_.file("stderr").c_str(), "w");
  if (saved_ < 0 || f == nullptr)
    throw std::runtime_error("stderr_capture: cannot redirect stderr");
  ::dup2(::fileno(f), STDERR_FILENO);
  std::fclose(f);
}

stderr_capture::~stderr_capture() {
  std::fflush(stderr);
  ::dup2(saved_, STDERR_FILENO);
  ::close(saved_);
}

std::string stderr_capture::text() const {
  std::fflush(stderr);
  return read_text(dir_.file("stderr"));
}

} // namespace actorps::test

#include <random>

namespace actorps::test {

std::vector<float> random_values(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 gen{seed};
  std::vector<float> out(n);
  for (auto& v : out)
    v = lo + (hi - lo) * static_cast<float>(gen() >> 8) * (1.0f / 16777216.0f);
  return out;
}

std::vector<uint8_t> cifar_records(uint32_t n) {
  std::vector<uint8_t> out;
  for (uint32_t i = 0; i < n; ++i) {
    out.push_back(static_cast<uint8_t>(i % 10));
    for (uint32_t c = 0; c < 3; ++c)
      for (uint32_t p = 0; p < 1024; ++p)
        out.push_back(static_cast<uint8_t>((i + c * 7 + p) % 256));
  }
  return out;
}

void write_cifar_dir(const temp_dir& dir, uint32_t per_batch, uint32_t test) {
  for (int b = 1; b <= 5; ++b)
    write_file(dir.file("data_batch_" + std::to_string(b) + ".bin"), cifar_records(per_batch));
  write_file(dir.file("test_batch.bin"), cifar_records(test));
}

} // namespace actorps::test
