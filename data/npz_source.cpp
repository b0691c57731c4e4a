// Keras-layout arrays into the trainers' data sets.
#include "data/npz_source.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/npz_file.hpp"

#include <cmath>
#include <map>

namespace actorps {

const char* to_string(pixel_layout l) {
  switch (l) {
    case pixel_layout::automatic: return "auto";
    case pixel_layout::nhwc: return "nhwc";
    case pixel_layout::nchw: return "nchw";
  }
  return "unknown";
}

std::optional<pixel_layout> parse_pixel_layout(const std::string& name) {
  constexpr pixel_layout all[] = {pixel_layout::automatic, pixel_layout::nhwc, pixel_layout::nchw};
  return parse_by_name(name, all);
}

namespace {

caf::error bad(const std::string& path, const std::string& what) {
  return caf::make_error(errc::corrupt_data, cat(path, ": ", what));
}

// The images of x as a data set (labels from y), NHWC floats.
caf::expected<dataset> to_dataset(const std::string& path, const npy_array& x, const npy_array& y, pixel_layout layout,
                                  int classes) {
  const auto& s = x.shape;
  if (s.size() != 3 && s.size() != 4)
    return bad(path, cat(x.name, " has shape of rank ", s.size(), "; images are N x H x W, N x H x W x C or N x C x H x W"));
  const bool nhwc_fits = s.size() == 3 || s[3] == 1 || s[3] == 3;
  const bool nchw_fits = s.size() == 4 && (s[1] == 1 || s[1] == 3);
  bool channels_first = false;
  if (s.size() == 4) {
    if (layout == pixel_layout::automatic) {
      if (nhwc_fits && nchw_fits && s[1] != s[3])
        return bad(path, cat(x.name, " of shape ", s[0], "x", s[1], "x", s[2], "x", s[3],
                             " reads as N x H x W x C and as N x C x H x W: set data.layout to nhwc or nchw"));
      if (!nhwc_fits && !nchw_fits)
        return bad(path, cat(x.name, " of shape ", s[0], "x", s[1], "x", s[2], "x", s[3],
                             " has neither 1 nor 3 channels first or last"));
      channels_first = !nhwc_fits;
    } else {
      channels_first = layout == pixel_layout::nchw;
    }
  }
  dataset d;
  d.rows = static_cast<int>(s[0]);
  d.shape = channels_first ? image_shape{static_cast<int>(s[2]), static_cast<int>(s[3]), static_cast<int>(s[1])}
                           : image_shape{static_cast<int>(s[1]), static_cast<int>(s[2]), s.size() == 4 ? static_cast<int>(s[3]) : 1};
  d.cols = static_cast<int>(d.shape.size());
  const size_t per = d.shape.size();
  if (y.shape.empty() || y.shape[0] != s[0] || (y.shape.size() == 2 && y.shape[1] != 1) || y.shape.size() > 2)
    return bad(path, cat(x.name, " holds ", s[0], " images but ", y.name, " has shape ",
                         y.shape.empty() ? std::string{"()"} : cat(y.shape[0], y.shape.size() > 1 ? cat("x", y.shape[1]) : ""),
                         ": one label per image"));
  const float scale = x.dtype == "u1" ? 1.0f / 255.0f : 1.0f;
  if (x.dtype == "U")
    return bad(path, cat(x.name, " holds strings, not pixels"));
  d.images.resize(static_cast<size_t>(d.rows) * per);
  for (int n = 0; n < d.rows; ++n) {
    const float* src = x.values.data() + static_cast<size_t>(n) * per;
    float* dst = d.images.data() + static_cast<size_t>(n) * per;
    if (!channels_first) {
      for (size_t i = 0; i < per; ++i)
        dst[i] = src[i] * scale;
    } else {
      const size_t plane = static_cast<size_t>(d.shape.height) * d.shape.width;
      for (int c = 0; c < d.shape.channels; ++c)
        for (size_t p = 0; p < plane; ++p)
          dst[p * d.shape.channels + c] = src[c * plane + p] * scale;
    }
  }
  d.labels.resize(static_cast<size_t>(d.rows));
  for (int n = 0; n < d.rows; ++n) {
    const float v = y.values[static_cast<size_t>(n)];
    if (v != std::floor(v) || v < 0 || (classes > 0 && v >= static_cast<float>(classes)))
      return bad(path, cat(y.name, "[", n, "] = ", v, " is not a class: labels are whole numbers in [0, ",
                           classes > 0 ? cat(classes, ") (class_names has ", classes, ")") : std::string{"classes)"}));
    d.labels[static_cast<size_t>(n)] = v;
    d.max_label = std::max(d.max_label, static_cast<int>(v));
  }
  return d;
}

} // namespace

caf::expected<data_splits> load_npz_data(const std::string& path, int validation_size, pixel_layout layout) {
  auto arrays = read_npz(path);
  if (!arrays)
    return std::move(arrays.error());
  std::map<std::string, const npy_array*> by;
  for (auto& a : *arrays)
    by[a.name] = &a;
  for (auto name : {"x_train", "y_train", "x_test", "y_test"})
    if (!by.count(name))
      return bad(path, cat("has no array ", name, " (Keras' layout: x_train, y_train, x_test, y_test; optionally "
                                                  "x_val, y_val, class_names)"));
  if (by.count("x_val") != by.count("y_val"))
    return bad(path, "has one of x_val and y_val but not the other");
  std::vector<std::string> names;
  if (by.count("class_names")) {
    const auto& c = *by["class_names"];
    if (c.dtype != "U" || c.shape.size() > 1)
      return bad(path, "class_names must be a one-dimensional array of strings");
    names = c.texts;
  }
  const int classes = static_cast<int>(names.size());
  auto train = to_dataset(path, *by["x_train"], *by["y_train"], layout, classes);
  if (!train)
    return std::move(train.error());
  auto test = to_dataset(path, *by["x_test"], *by["y_test"], layout, classes);
  if (!test)
    return std::move(test.error());
  caf::expected<data_splits> out{caf::error{}};
  if (by.count("x_val")) {
    auto val = to_dataset(path, *by["x_val"], *by["y_val"], layout, classes);
    if (!val)
      return std::move(val.error());
    if (!(val->shape == train->shape) || !(test->shape == train->shape))
      return bad(path, cat("x_train is ", train->shape.text(), ", x_val ", val->shape.text(), ", x_test ",
                           test->shape.text(), ": one image shape"));
    data_splits s;
    s.train = std::move(*train);
    s.validation = std::move(*val);
    s.test = std::move(*test);
    out = std::move(s);
  } else {
    out = split_validation(std::move(*train), std::move(*test), validation_size, path);
  }
  if (out)
    out->class_names = std::move(names);
  return out;
}

} // namespace actorps
