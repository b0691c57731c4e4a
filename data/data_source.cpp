// Format detection, loading and per-channel normalisation.
#include "data/data_source.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/cifar_reader.hpp"
#include "data/npz_file.hpp"

#include <algorithm>

#include <cmath>
#include <sys/stat.h>

namespace actorps {

const char* to_string(data_format f) {
  switch (f) {
    case data_format::automatic: return "auto";
    case data_format::idx: return "idx";
    case data_format::cifar10: return "cifar10";
    case data_format::npz: return "npz";
    case data_format::image_folder: return "image-folder";
    case data_format::text: return "text";
  }
  return "unknown";
}

const char* to_string(normalization n) {
  return n == normalization::none ? "none" : "per-channel";
}

std::optional<data_format> parse_data_format(const std::string& name) {
  constexpr data_format all[] = {data_format::automatic, data_format::idx, data_format::cifar10, data_format::npz,
                                 data_format::image_folder, data_format::text};
  return parse_by_name(name, all);
}

std::optional<normalization> parse_normalization(const std::string& name) {
  constexpr normalization all[] = {normalization::none, normalization::per_channel};
  return parse_by_name(name, all);
}

namespace {

bool exists(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0;
}

} // namespace

caf::expected<data_format> detect_format(const std::string& dir) {
  struct stat st;
  if (::stat(dir.c_str(), &st) == 0 && S_ISREG(st.st_mode) && looks_like_npz(dir))
    return data_format::npz;
  if (looks_like_image_folder(dir))
    return data_format::image_folder;
  if (exists(dir + "/" + cifar10_train_files[0]))
    return data_format::cifar10;
  for (auto name : {"/train-images-idx3-ubyte", "/train-images-idx3-ubyte.gz"})
    if (exists(dir + name))
      return data_format::idx;
  return caf::make_error(errc::file_error,
                         cat(dir, ": holds neither MNIST-format IDX files (train-images-idx3-ubyte[.gz]) "
                                  "nor CIFAR-10 binary files (data_batch_1.bin) nor an image folder (train/<class>/), "
                                  "and is not an .npz file; set data.dir"));
}

void normalize_per_channel(data_splits& data) {
  const int c = data.train.shape.channels;
  std::vector<double> sum(c, 0.0), sq(c, 0.0);
  const auto& px = data.train.images;
  for (size_t i = 0; i < px.size(); ++i) {
    sum[i % c] += px[i];
    sq[i % c] += double(px[i]) * px[i];
  }
  const double n = static_cast<double>(px.size() / c);
  input_scaling scaling;
  for (int k = 0; k < c; ++k) {
    double m = sum[k] / n;
    double var = std::max(sq[k] / n - m * m, 1e-12);
    scaling.mean.push_back(static_cast<float>(m));
    scaling.stddev.push_back(static_cast<float>(std::sqrt(var)));
  }
  for (dataset* d : {&data.train, &data.validation, &data.test})
    apply_scaling(*d, scaling);
  data.scaling = std::move(scaling);
}

std::vector<std::string> known_class_names(const std::string& dir) {
  std::string name = dir;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (name.find("fashion") != std::string::npos)
    return {"T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt", "Sneaker", "Bag", "Ankle boot"};
  if (name.find("mnist") != std::string::npos)
    return {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9"};
  return {};
}

caf::expected<data_splits> load_data(const data_settings& settings) {
  data_format format = settings.format;
  if (format == data_format::automatic) {
    auto found = detect_format(settings.dir);
    if (!found)
      return std::move(found.error());
    format = *found;
  }
  caf::expected<data_splits> data{caf::error{}};
  switch (format) {
    case data_format::cifar10: data = load_cifar10_dir(settings.dir, settings.validation_size); break;
    case data_format::npz: data = load_npz_data(settings.dir, settings.validation_size, settings.layout); break;
    case data_format::image_folder: {
      auto images = settings.images;
      images.threads = settings.threads;
      data = load_image_folder(settings.dir, settings.validation_size, images);
      break;
    }
    case data_format::text: data = load_text_corpus(settings.dir, settings.validation_size, settings.text); break;
    case data_format::idx:
    case data_format::automatic: data = load_mnist_dir(settings.dir, settings.validation_size); break;
  }
  if (!data)
    return data;
  const int classes = 1 + std::max({data->train.max_label, data->validation.max_label, data->test.max_label});
  std::string from = "data.class-names";
  if (!settings.class_names.empty())
    data->class_names = settings.class_names;
  else if (!data->class_names.empty())
    from = cat(settings.dir, "'s class names");
  else if (auto known = known_class_names(settings.dir); known.size() == static_cast<size_t>(classes))
    data->class_names = known;
  if (!data->class_names.empty() && data->class_names.size() < static_cast<size_t>(classes))
    return caf::make_error(errc::invalid_config, cat(from, " has ", data->class_names.size(), " names, the data ",
                                                     classes, " classes (labels up to ", classes - 1, ")"));
  if (settings.normalize == normalization::per_channel)
    normalize_per_channel(*data);
  const auto& aug = settings.augment;
  const image_shape in = data->train.shape;
  if (aug.crop_size > std::min(in.height, in.width))
    return caf::make_error(errc::invalid_config, cat("data.crop-size ", aug.crop_size, " is larger than the images (",
                                                     in.text(), "): evaluation takes their central window"));
  data->scaling.crop_size = aug.crop_size;
  data->scaling.source_height = aug.crop_size > 0 ? in.height : 0;
  data->scaling.source_width = aug.crop_size > 0 ? in.width : 0;
  data->scaling.standardize = aug.standardize;
  for (dataset* d : {&data->validation, &data->test})
    crop_and_standardize(*d, data->scaling);
  return data;
}

} // namespace actorps
