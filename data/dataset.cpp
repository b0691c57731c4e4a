// Loading and splitting MNIST-format directories.
#include "data/dataset.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/augment.hpp"
#include "data/idx_reader.hpp"

#include <algorithm>
#include <sys/stat.h>

namespace actorps {

dataset dataset::slice(int first, int count) const {
  dataset out;
  out.rows = count;
  out.cols = cols;
  out.shape = shape;
  auto px = static_cast<size_t>(cols);
  out.images.assign(images.begin() + first * px, images.begin() + (first + count) * px);
  out.labels.assign(labels.begin() + first, labels.begin() + first + count);
  out.max_label = out.labels.empty() ? 0 : static_cast<int>(*std::max_element(out.labels.begin(),
                                                                              out.labels.end()));
  return out;
}

void dataset::drop_front(int count) {
  auto px = static_cast<size_t>(cols);
  images.erase(images.begin(), images.begin() + count * px);
  labels.erase(labels.begin(), labels.begin() + count);
  rows -= count;
  max_label = labels.empty() ? 0 : static_cast<int>(*std::max_element(labels.begin(), labels.end()));
}

caf::expected<dataset> load_idx_images(const std::string& images_path) {
  auto images = read_idx(images_path);
  if (!images)
    return std::move(images.error());
  if (images->dims.size() != 3)
    return caf::make_error(errc::corrupt_data, cat(images_path, ": an image file has rank 3, this has ",
                                                   images->dims.size()));
  dataset out;
  out.rows = static_cast<int>(images->dims[0]);
  out.shape = {static_cast<int>(images->dims[1]), static_cast<int>(images->dims[2]), 1};
  out.cols = static_cast<int>(images->dims[1] * images->dims[2]);
  out.images.resize(images->data.size());
  std::transform(images->data.begin(), images->data.end(), out.images.begin(),
                 [](uint8_t v) { return static_cast<float>(v) * (1.0f / 255.0f); });
  out.labels.assign(static_cast<size_t>(out.rows), 0.0f);
  return out;
}

caf::expected<dataset> load_idx_pair(const std::string& images_path, const std::string& labels_path) {
  auto images = load_idx_images(images_path);
  if (!images)
    return std::move(images.error());
  auto labels = read_idx(labels_path);
  if (!labels)
    return std::move(labels.error());
  if (labels->dims.size() != 1)
    return caf::make_error(errc::corrupt_data, cat(labels_path, ": a label file has rank 1, this has ",
                                                   labels->dims.size()));
  if (images->rows != static_cast<int>(labels->dims[0]))
    return caf::make_error(errc::corrupt_data,
                           cat(images_path, " holds ", images->rows, " images but ", labels_path,
                               " holds ", labels->dims[0], " labels"));
  images->labels.assign(labels->data.begin(), labels->data.end());
  images->max_label = *std::max_element(labels->data.begin(), labels->data.end());
  return images;
}

void apply_scaling(dataset& d, const input_scaling& s) {
  if (s.per_channel()) {
    const size_t c = s.mean.size();
    std::vector<float> inv(c);
    for (size_t k = 0; k < c; ++k)
      inv[k] = 1.0f / s.stddev[k];
    for (size_t i = 0; i < d.images.size(); ++i)
      d.images[i] = (d.images[i] - s.mean[i % c]) * inv[i % c];
  }
  crop_and_standardize(d, s);
}

void crop_and_standardize(dataset& d, const input_scaling& s) {
  const image_shape in = d.shape, out = s.input_for(in);
  if (!(out == in)) { // TF's resize_image_with_crop_or_pad: the window at ((h - size) / 2, (w - size) / 2)
    std::vector<float> cropped(out.size() * static_cast<size_t>(d.rows));
    for (int r = 0; r < d.rows; ++r)
      crop_window(in, d.images.data() + in.size() * r, out.height, out.width, (in.height - out.height) / 2,
                  (in.width - out.width) / 2, false, cropped.data() + out.size() * r);
    d.images = std::move(cropped);
    d.shape = out;
    d.cols = static_cast<int>(out.size());
  }
  if (s.standardize)
    for (int r = 0; r < d.rows; ++r)
      standardize_image(d.images.data() + out.size() * r, out.size());
}

int default_validation_size(int n) {
  return static_cast<int>((static_cast<long>(n) * 5000 + 30000) / 60000);
}

namespace {

// Returns dir/name if it exists, else dir/name.gz if that exists, else an error naming both.
caf::expected<std::string> find_file(const std::string& dir, const std::string& name) {
  struct stat st;
  for (auto candidate : {dir + "/" + name, dir + "/" + name + ".gz"})
    if (::stat(candidate.c_str(), &st) == 0)
      return candidate;
  return caf::make_error(errc::file_error,
                         cat(dir, "/", name, "[.gz]: not found (data.dir must hold MNIST-format IDX files)"));
}

caf::expected<dataset> load_named(const std::string& dir, const std::string& prefix) {
  auto images = find_file(dir, prefix + "-images-idx3-ubyte");
  if (!images)
    return std::move(images.error());
  auto labels = find_file(dir, prefix + "-labels-idx1-ubyte");
  if (!labels)
    return std::move(labels.error());
  return load_idx_pair(*images, *labels);
}

} // namespace

caf::expected<data_splits> load_mnist_dir(const std::string& dir, int validation_size) {
  auto train = load_named(dir, "train");
  if (!train)
    return std::move(train.error());
  auto test = load_named(dir, "t10k");
  if (!test)
    return std::move(test.error());
  return split_validation(std::move(*train), std::move(*test), validation_size, dir);
}

caf::error check_model_reads(const data_splits& data, const model_spec& model) {
  const bool embeds = !model.layers.empty() && model.layers.front().kind == layer_kind::embedding;
  if (data.token_ids && !embeds)
    return caf::make_error(errc::invalid_config,
                           "data.format = text gives each example as token ids: the model must begin with an embedding "
                           "layer (e.g. model.preset = \"text-hash\", or model.layers = [\"embedding 22 32 mean\", ...])");
  if (!data.token_ids && embeds)
    return caf::make_error(errc::invalid_config, cat("model.layers[0] \"", model.layers.front().text(),
                                                     "\" reads token ids, but the data are images: set data.format = "
                                                     "text (class folders of text files)"));
  return caf::none;
}

caf::expected<data_splits> splits_of(std::vector<dataset> sets, int validation_size, const std::string& dir) {
  if (sets.size() == 3) {
    data_splits s;
    s.train = std::move(sets[0]);
    s.test = std::move(sets[1]);
    s.validation = std::move(sets[2]);
    return s;
  }
  return split_validation(std::move(sets.at(0)), std::move(sets.at(1)), validation_size, dir);
}

caf::expected<data_splits> split_validation(dataset train, dataset test, int validation_size,
                                            const std::string& dir) {
  if (!(test.shape == train.shape))
    return caf::make_error(errc::corrupt_data, cat(dir, ": test images are ", test.shape.text(),
                                                   ", training images ", train.shape.text()));
  int v = validation_size > 0 ? validation_size : default_validation_size(train.rows);
  if (v < 1 || v >= train.rows)
    return caf::make_error(errc::invalid_config,
                           cat("data.validation-size = ", v, " must be in [1, ", train.rows - 1,
                               "] for the ", train.rows, " training examples in ", dir));
  data_splits out;
  out.validation = train.slice(0, v);
  train.drop_front(v); // (in place: a copy of the training images would double the process's peak)
  out.train = std::move(train);
  out.test = std::move(test);
  return out;
}

} // namespace actorps
