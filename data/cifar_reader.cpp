// CIFAR-10 records are channel-planar (CHW); the models read NHWC, so each record is interleaved
// while it is scaled.
#include "data/cifar_reader.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

namespace actorps {

namespace {

constexpr int side = 32;
constexpr int channels = 3;
constexpr size_t pixels = side * side * channels;
constexpr size_t record = 1 + pixels;

caf::error append_file(const std::string& path, dataset& out) {
  std::ifstream in{path, std::ios::binary};
  if (!in)
    return caf::make_error(errc::file_error, cat(path, ": cannot open (", std::strerror(errno),
                                                 "); data.dir must hold CIFAR-10's binary files"));
  std::vector<uint8_t> bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (bytes.empty() || bytes.size() % record != 0)
    return caf::make_error(errc::corrupt_data,
                           cat(path, ": ", bytes.size(), " bytes is not a whole number of ", record,
                               "-byte CIFAR-10 records"));
  const size_t n = bytes.size() / record;
  out.images.reserve(out.images.size() + n * pixels);
  for (size_t r = 0; r < n; ++r) {
    const uint8_t* rec = bytes.data() + r * record;
    if (rec[0] > 9)
      return caf::make_error(errc::corrupt_data, cat(path, ": record ", r, " has label ",
                                                     int{rec[0]}, ", above 9"));
    out.labels.push_back(static_cast<float>(rec[0]));
    out.max_label = std::max(out.max_label, int{rec[0]});
    const uint8_t* planes = rec + 1;
    for (int p = 0; p < side * side; ++p)
      for (int c = 0; c < channels; ++c)
        out.images.push_back(static_cast<float>(planes[c * side * side + p]) * (1.0f / 255.0f));
  }
  out.rows += static_cast<int>(n);
  return caf::none;
}

} // namespace

caf::expected<dataset> read_cifar10(const std::vector<std::string>& paths) {
  dataset out;
  out.shape = {side, side, channels};
  out.cols = static_cast<int>(pixels);
  for (auto& path : paths)
    if (auto err = append_file(path, out))
      return err;
  return out;
}

caf::expected<data_splits> load_cifar10_dir(const std::string& dir, int validation_size) {
  std::vector<std::string> train_paths;
  for (auto* name : cifar10_train_files)
    train_paths.push_back(dir + "/" + name);
  auto train = read_cifar10(train_paths);
  if (!train)
    return std::move(train.error());
  auto test = read_cifar10({dir + "/" + cifar10_test_file});
  if (!test)
    return std::move(test.error());
  return split_validation(std::move(*train), std::move(*test), validation_size, dir);
}

} // namespace actorps
