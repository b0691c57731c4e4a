// Class folders of PNG and JPEG files into the trainers' data sets.
#include "data/image_folder.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/class_folders.hpp"
#include "data/jpeg_reader.hpp"
#include "data/png_reader.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <thread>

namespace actorps {

namespace fs = std::filesystem;

const char* to_string(color_mode c) {
  switch (c) {
    case color_mode::automatic: return "auto";
    case color_mode::grey: return "grey";
    case color_mode::rgb: return "rgb";
  }
  return "unknown";
}

std::optional<color_mode> parse_color_mode(const std::string& name) {
  constexpr color_mode all[] = {color_mode::automatic, color_mode::grey, color_mode::rgb};
  return parse_by_name(name, all);
}

std::optional<image_shape> parse_resize(const std::string& text, bool* ok) {
  *ok = true;
  if (text.empty())
    return std::nullopt;
  int h = 0, w = 0;
  char x = 0, extra = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c", &h, &x, &w, &extra) != 3 || x != 'x' || h < 1 || w < 1 || h > 4096 || w > 4096) {
    *ok = false;
    return std::nullopt;
  }
  return image_shape{h, w, 1};
}

bool looks_like_image_folder(const std::string& dir) {
  std::error_code ec;
  return fs::is_directory(fs::path(dir) / "train", ec);
}

namespace {

caf::error bad(errc code, const std::string& what) {
  return caf::make_error(code, what);
}

bool is_image_name(const std::string& path) {
  auto ext = fs::path(path).extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

caf::expected<decoded_image> decode(const std::string& path, int channels) {
  if (looks_like_jpeg(path))
    return decode_jpeg(path, channels);
  return decode_png(path, channels); // (names a file that is neither)
}

// Decodes every file on `threads` threads into a data set of one shape (the first error wins).
caf::expected<dataset> decode_set(const class_folder_set& set, image_shape shape, std::optional<image_shape> resize,
                                  int threads) {
  dataset d;
  d.rows = static_cast<int>(set.files.size());
  d.shape = shape;
  d.cols = static_cast<int>(shape.size());
  d.images.resize(static_cast<size_t>(d.rows) * shape.size());
  d.labels.resize(static_cast<size_t>(d.rows));
  std::atomic<size_t> next{0};
  std::mutex mtx;
  caf::error first;
  size_t first_at = set.files.size();
  auto work = [&] {
    for (size_t i; (i = next++) < set.files.size();) {
      auto image = decode(set.files[i], shape.channels);
      caf::error err;
      if (!image)
        err = std::move(image.error());
      else if (!resize && (image->shape.height != shape.height || image->shape.width != shape.width))
        err = bad(errc::shape_mismatch, cat(set.files[i], ": ", image->shape.width, "x", image->shape.height,
                                            " pixels, the first training image is ", shape.width, "x", shape.height,
                                            " (set data.resize to scale every image, e.g. \"", shape.height, "x",
                                            shape.width, "\")"));
      if (err) {
        std::lock_guard<std::mutex> guard{mtx};
        if (i < first_at) { // (the same error whatever the threads' timing)
          first_at = i;
          first = std::move(err);
        }
        continue;
      }
      auto pixels = image->shape == shape ? std::move(image->pixels) : resize_bilinear(image->pixels, image->shape, shape);
      std::copy(pixels.begin(), pixels.end(), d.images.begin() + static_cast<std::ptrdiff_t>(i * shape.size()));
      d.labels[i] = static_cast<float>(set.labels[i]);
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < std::max(1, threads); ++t)
    pool.emplace_back(work);
  work();
  for (auto& t : pool)
    t.join();
  if (first)
    return first;
  for (int i = 0; i < d.rows; ++i)
    d.max_label = std::max(d.max_label, static_cast<int>(d.labels[static_cast<size_t>(i)]));
  return d;
}

} // namespace

caf::expected<data_splits> load_image_folder(const std::string& root, int validation_size,
                                             const image_folder_options& options) {
  auto listed = list_class_folders(root, is_image_name, ".png, .jpg or .jpeg files");
  if (!listed)
    return std::move(listed.error());
  const auto& classes = listed->classes;
  const auto& sets = listed->sets;
  // the shape: the first training image's (its channels unless data.color says), or data.resize
  auto first = decode(sets[0].files[0], options.color == color_mode::grey ? 1 : options.color == color_mode::rgb ? 3 : 0);
  if (!first)
    return std::move(first.error());
  image_shape shape = first->shape;
  if (options.resize) {
    shape.height = options.resize->height;
    shape.width = options.resize->width;
  }
  std::vector<dataset> decoded;
  for (auto& set : sets) {
    auto d = decode_set(set, shape, options.resize, options.threads);
    if (!d)
      return std::move(d.error());
    decoded.push_back(std::move(*d));
  }
  auto out = splits_of(std::move(decoded), validation_size, root);
  if (out)
    out->class_names = classes;
  return out;
}

} // namespace actorps
