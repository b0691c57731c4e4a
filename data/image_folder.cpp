// Class folders of PNG and JPEG files into the trainers' data sets.
#include "data/image_folder.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/jpeg_reader.hpp"
#include "data/png_reader.hpp"

#include <algorithm>
#include <atomic>
#include <cctype>
#include <filesystem>
#include <mutex>
#include <random>
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

bool is_image_name(const fs::path& p) {
  auto ext = p.extension().string();
  std::transform(ext.begin(), ext.end(), ext.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".png" || ext == ".jpg" || ext == ".jpeg";
}

// The sorted names of dir's folders (dirs) or image files; file_error naming an entry that cannot
// be looked at (a symbolic link in a loop: ELOOP, which the throwing forms raised uncaught).
caf::expected<std::vector<std::string>> sorted_entries(const fs::path& dir, bool dirs) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code kind;
    const bool wanted = dirs ? e.is_directory(kind) : (e.is_regular_file(kind) && is_image_name(e.path()));
    if (kind && kind != std::errc::no_such_file_or_directory) // (a dangling link is no entry of either kind)
      return bad(errc::file_error, cat(e.path().string(), ": cannot be read (", kind.message(), ")"));
    if (wanted)
      out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct listed {
  std::vector<std::string> files;
  std::vector<int> labels;
};

// The image files of one set's class folders, labelled by train/'s order.
caf::expected<listed> list_set(const fs::path& set, const std::vector<std::string>& classes) {
  listed out;
  auto names = sorted_entries(set, true);
  if (!names)
    return std::move(names.error());
  for (auto& name : *names) {
    auto at = std::find(classes.begin(), classes.end(), name);
    if (at == classes.end())
      return bad(errc::corrupt_data, cat((set / name).string(), ": a class train/ does not have (its classes: ",
                                         classes.size(), " folders under train/)"));
    auto files = sorted_entries(set / name, false);
    if (!files)
      return std::move(files.error());
    if (files->empty())
      return bad(errc::corrupt_data, cat((set / name).string(), ": an empty class folder (no .png, .jpg or .jpeg files)"));
    for (auto& f : *files) {
      out.files.push_back((set / name / f).string());
      out.labels.push_back(static_cast<int>(at - classes.begin()));
    }
  }
  if (out.files.empty())
    return bad(errc::corrupt_data, cat(set.string(), ": no class folders"));
  return out;
}

caf::expected<decoded_image> decode(const std::string& path, int channels) {
  if (looks_like_jpeg(path))
    return decode_jpeg(path, channels);
  return decode_png(path, channels); // (names a file that is neither)
}

// Decodes every file on `threads` threads into a data set of one shape (the first error wins).
caf::expected<dataset> decode_set(const listed& set, image_shape shape, std::optional<image_shape> resize,
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

// One fixed-seed shuffle of a set's examples (class folders are read in order).
void shuffle(listed& set) {
  std::vector<size_t> order(set.files.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::mt19937_64 rng{20161101};
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[static_cast<size_t>(rng() % i)]);
  listed out;
  for (auto i : order) {
    out.files.push_back(set.files[i]);
    out.labels.push_back(set.labels[i]);
  }
  set = std::move(out);
}

} // namespace

caf::expected<data_splits> load_image_folder(const std::string& root, int validation_size,
                                             const image_folder_options& options) {
  const fs::path base{root};
  auto found = sorted_entries(base / "train", true);
  if (!found)
    return std::move(found.error());
  const std::vector<std::string> classes = std::move(*found);
  if (classes.empty())
    return bad(errc::corrupt_data, cat((base / "train").string(), ": no class folders (train/<class>/*.png|jpg)"));
  std::vector<std::pair<std::string, listed>> sets;
  for (auto name : {"train", "test", "val"}) {
    std::error_code ec;
    if (std::string{name} == "val" && !fs::is_directory(base / name, ec))
      continue;
    if (!fs::is_directory(base / name, ec))
      return bad(errc::file_error, cat((base / name).string(), ": missing (an image folder has train/ and test/)"));
    auto listed_set = list_set(base / name, classes);
    if (!listed_set)
      return std::move(listed_set.error());
    shuffle(*listed_set);
    sets.emplace_back(name, std::move(*listed_set));
  }
  // the shape: the first training image's (its channels unless data.color says), or data.resize
  auto first = decode(sets[0].second.files[0], options.color == color_mode::grey ? 1 : options.color == color_mode::rgb ? 3 : 0);
  if (!first)
    return std::move(first.error());
  image_shape shape = first->shape;
  if (options.resize) {
    shape.height = options.resize->height;
    shape.width = options.resize->width;
  }
  std::vector<dataset> decoded;
  for (auto& [name, set] : sets) {
    auto d = decode_set(set, shape, options.resize, options.threads);
    if (!d)
      return std::move(d.error());
    decoded.push_back(std::move(*d));
  }
  caf::expected<data_splits> out{caf::error{}};
  if (decoded.size() == 3) {
    data_splits s;
    s.train = std::move(decoded[0]);
    s.test = std::move(decoded[1]);
    s.validation = std::move(decoded[2]);
    out = std::move(s);
  } else {
    out = split_validation(std::move(decoded[0]), std::move(decoded[1]), validation_size, root);
  }
  if (out)
    out->class_names = classes;
  return out;
}

} // namespace actorps
