// Layer texts, shapes, variable naming and validation of a layer-list model.
#include "model/model_spec.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <cstdlib>
#include <sstream>

namespace actorps {

namespace {

// The shortest text of v that reads back as v (6 to 9 significant digits).
std::string float_text(float v) {
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(v));
    if (std::strtof(buf, nullptr) == v)
      break;
  }
  return buf;
}

} // namespace

const char* to_string(layer_kind k) {
  switch (k) {
    case layer_kind::dense: return "dense";
    case layer_kind::conv: return "conv";
    case layer_kind::maxpool: return "maxpool";
    case layer_kind::dropout: return "dropout";
    case layer_kind::batchnorm: return "batchnorm";
    case layer_kind::avgpool: return "avgpool";
    case layer_kind::residual: return "residual";
    case layer_kind::depthwise: return "depthwise";
    case layer_kind::separable: return "separable";
    case layer_kind::lrn: return "lrn";
  }
  return "unknown";
}

const char* to_string(padding_mode p) {
  return p == padding_mode::same ? "same" : "valid";
}

bool operator==(const layer_spec& a, const layer_spec& b) {
  return a.kind == b.kind && a.units == b.units && a.kernel == b.kernel && a.stride == b.stride
         && a.padding == b.padding && a.act == b.act && a.rate == b.rate && a.body == b.body && a.lrn == b.lrn
         && a.decay == b.decay;
}

std::string layer_spec::text() const {
  std::string out = to_string(kind);
  switch (kind) {
    case layer_kind::dense: out += cat(" ", units); break;
    case layer_kind::conv:
    case layer_kind::depthwise:
    case layer_kind::separable:
      out += cat(" ", kernel, "x", kernel);
      if (kind != layer_kind::depthwise)
        out += cat("x", units);
      if (stride != 1)
        out += cat(" stride ", stride);
      if (padding != padding_mode::same)
        out += " valid";
      break;
    case layer_kind::maxpool:
      out += cat(" ", kernel);
      if (stride != kernel)
        out += cat(" stride ", stride);
      if (padding != padding_mode::valid)
        out += " same";
      break;
    case layer_kind::dropout: out += cat(" ", rate); break;
    case layer_kind::batchnorm:
      if (decay != layer_spec{}.decay)
        out += " decay " + float_text(decay);
      break;
    case layer_kind::avgpool: out += " global"; break;
    case layer_kind::lrn: {
      const lrn_params defaults;
      if (lrn.radius != defaults.radius)
        out += cat(" radius ", lrn.radius);
      if (lrn.bias != defaults.bias)
        out += " bias " + float_text(lrn.bias);
      if (lrn.alpha != defaults.alpha)
        out += " alpha " + float_text(lrn.alpha);
      if (lrn.beta != defaults.beta)
        out += " beta " + float_text(lrn.beta);
      break;
    }
    case layer_kind::residual: {
      std::vector<std::string> inner;
      for (auto& l : body)
        inner.push_back(l.text());
      out += " [" + join(inner, ", ") + "]";
      break;
    }
  }
  if (act)
    out += cat(" ", to_string(*act));
  return out;
}

std::string image_shape::text() const {
  return cat(height, "x", width, "x", channels);
}

int model_spec::classes() const {
  return layers.empty() ? 0 : layers.back().units;
}

namespace {

// Output side and leading padding of a window of side k moved by stride over `in` cells;
// out <= 0 when a valid window does not fit.
void window_side(int in, int k, int stride, padding_mode p, int& out, int& pad) {
  if (p == padding_mode::same) {
    out = (in + stride - 1) / stride;
    int total = (out - 1) * stride + k - in;
    pad = total > 0 ? total / 2 : 0;
  } else {
    out = in >= k ? (in - k) / stride + 1 : 0;
    pad = 0;
  }
}

} // namespace

image_shape output_shape(const layer_spec& l, const image_shape& in) {
  switch (l.kind) {
    case layer_kind::dense: return {1, 1, l.units};
    case layer_kind::dropout:
    case layer_kind::lrn:
    case layer_kind::batchnorm: return in;
    case layer_kind::avgpool: return {1, 1, in.channels};
    case layer_kind::residual: {
      image_shape out = in;
      for (auto& inner : l.body)
        out = output_shape(inner, out);
      return out;
    }
    case layer_kind::conv:
    case layer_kind::separable:
    case layer_kind::depthwise:
    case layer_kind::maxpool: {
      const bool new_channels = l.kind == layer_kind::conv || l.kind == layer_kind::separable;
      image_shape out{0, 0, new_channels ? l.units : in.channels};
      int pad = 0;
      window_side(in.height, l.kernel, l.stride, l.padding, out.height, pad);
      window_side(in.width, l.kernel, l.stride, l.padding, out.width, pad);
      return out;
    }
  }
  return in;
}

window_geometry geometry_of(const layer_spec& layer, const image_shape& in) {
  window_geometry g;
  g.in_h = in.height;
  g.in_w = in.width;
  g.channels = in.channels;
  g.k_h = g.k_w = layer.kernel;
  g.stride = layer.stride;
  window_side(in.height, layer.kernel, layer.stride, layer.padding, g.out_h, g.pad_top);
  window_side(in.width, layer.kernel, layer.stride, layer.padding, g.out_w, g.pad_left);
  return g;
}

namespace {

// The stride of a 1x1 projection from `in` to `out` sides, or 0 when none gives out's sides.
int projection_stride(const image_shape& in, const image_shape& out) {
  if (out.height <= 0 || out.width <= 0)
    return 0;
  const int s = (in.height + out.height - 1) / out.height;
  return s > 0 && (in.height + s - 1) / s == out.height && (in.width + s - 1) / s == out.width ? s : 0;
}

} // namespace

std::optional<window_geometry> shortcut_geometry(const image_shape& in, const image_shape& out) {
  if (in == out)
    return std::nullopt;
  layer_spec proj;
  proj.kind = layer_kind::conv;
  proj.kernel = 1;
  proj.units = out.channels;
  proj.stride = std::max(1, projection_stride(in, out));
  return geometry_of(proj, in);
}

std::vector<image_shape> model_spec::output_shapes() const {
  std::vector<image_shape> out;
  image_shape shape = input;
  for (auto& l : layers) {
    shape = output_shape(l, shape);
    out.push_back(shape);
  }
  return out;
}

window_geometry model_spec::geometry(size_t l) const {
  return geometry_of(layers[l], l == 0 ? input : output_shapes()[l - 1]);
}

namespace {

// Names and shapes variables as TensorFlow's layers do: conv<i>, dense<i>, bn<i>, depthwise<i>,
// separable<i>, block<i> (and inside a block its own conv<j>, bn<j>, ... and the shortcut), the
// last layer "logits".
struct variable_namer {
  int conv = 0, dense = 0, bn = 0, block = 0, depthwise = 0, separable = 0;
};

void add_variables(const layer_spec& layer, const image_shape& in, bool logits, const std::string& prefix,
                   variable_namer& n, std::vector<variable_spec>& out) {
  auto add = [&](const std::string& name, int rows, int cols, std::vector<int> shape) {
    out.push_back({prefix + name, rows, cols, std::move(shape)});
  };
  switch (layer.kind) {
    case layer_kind::conv: {
      const std::string p = cat("conv", n.conv++);
      add(p + "/weights", layer.kernel * layer.kernel * in.channels, layer.units, {layer.kernel, layer.kernel, in.channels, layer.units});
      add(p + "/bias", 1, layer.units, {layer.units});
      break;
    }
    case layer_kind::dense: {
      const std::string p = logits ? std::string{"logits"} : cat("dense", n.dense++);
      add(p + "/weights", static_cast<int>(in.size()), layer.units, {static_cast<int>(in.size()), layer.units});
      add(p + "/bias", 1, layer.units, {layer.units});
      break;
    }
    case layer_kind::depthwise: {
      const std::string p = cat("depthwise", n.depthwise++);
      add(p + "/weights", layer.kernel * layer.kernel, in.channels, {layer.kernel, layer.kernel, in.channels, 1});
      add(p + "/bias", 1, in.channels, {in.channels});
      break;
    }
    case layer_kind::separable: {
      const std::string p = cat("separable", n.separable++);
      add(p + "/depthwise_weights", layer.kernel * layer.kernel, in.channels, {layer.kernel, layer.kernel, in.channels, 1});
      add(p + "/pointwise_weights", in.channels, layer.units, {1, 1, in.channels, layer.units});
      add(p + "/bias", 1, layer.units, {layer.units});
      break;
    }
    case layer_kind::batchnorm: {
      const std::string p = cat("bn", n.bn++);
      for (auto stat : {"/gamma", "/beta", "/moving_mean", "/moving_variance"})
        add(p + stat, 1, in.channels, {in.channels});
      out[out.size() - 2].moving_decay = out.back().moving_decay = layer.decay;
      break;
    }
    case layer_kind::residual: {
      const std::string p = cat(prefix, "block", n.block++, "/");
      variable_namer inner;
      image_shape shape = in;
      for (auto& l : layer.body) {
        add_variables(l, shape, false, p, inner, out);
        shape = output_shape(l, shape);
      }
      if (auto g = shortcut_geometry(in, shape)) {
        out.push_back({p + "shortcut/weights", in.channels, shape.channels, {1, 1, in.channels, shape.channels}});
        out.push_back({p + "shortcut/bias", 1, shape.channels, {shape.channels}});
      }
      break;
    }
    case layer_kind::maxpool:
    case layer_kind::dropout:
    case layer_kind::lrn:
    case layer_kind::avgpool: break;
  }
}

} // namespace

std::vector<variable_spec> model_spec::variables() const {
  std::vector<variable_spec> out;
  variable_namer n;
  image_shape in = input;
  for (size_t l = 0; l < layers.size(); ++l) {
    add_variables(layers[l], in, l + 1 == layers.size(), "", n, out);
    in = output_shape(layers[l], in);
  }
  return out;
}

std::vector<int> model_spec::variable_counts() const {
  std::vector<int> out;
  std::vector<variable_spec> vars;
  variable_namer n;
  image_shape in = input;
  for (size_t l = 0; l < layers.size(); ++l) {
    const size_t before = vars.size();
    add_variables(layers[l], in, l + 1 == layers.size(), "", n, vars);
    out.push_back(static_cast<int>(vars.size() - before));
    in = output_shape(layers[l], in);
  }
  return out;
}

std::vector<int> model_spec::first_variable() const {
  std::vector<int> out;
  int next = 0;
  for (int count : variable_counts()) {
    out.push_back(count > 0 ? next : -1);
    next += count;
  }
  return out;
}

namespace {

size_t macs_of(const layer_spec& l, const image_shape& in) {
  const image_shape out = output_shape(l, in);
  switch (l.kind) {
    case layer_kind::dense: return in.size() * static_cast<size_t>(l.units);
    case layer_kind::conv: return out.size() * static_cast<size_t>(l.kernel * l.kernel * in.channels);
    case layer_kind::depthwise: return out.size() * static_cast<size_t>(l.kernel * l.kernel);
    case layer_kind::separable:
      return static_cast<size_t>(out.height * out.width) * static_cast<size_t>(in.channels)
             * static_cast<size_t>(l.kernel * l.kernel + l.units);
    case layer_kind::residual: {
      size_t macs = 0;
      image_shape shape = in;
      for (auto& inner : l.body) {
        macs += macs_of(inner, shape);
        shape = output_shape(inner, shape);
      }
      if (shortcut_geometry(in, shape))
        macs += shape.size() * static_cast<size_t>(in.channels);
      return macs;
    }
    default: return 0;
  }
}

// Checks layers in order from input shape `in` (updated to their output); `flat` says whether
// the input is a dense layer's output. Returns what is wrong, naming the layer by where(i).
std::string check_layers(const std::vector<layer_spec>& layers, image_shape& in, bool& flat,
                         const std::function<std::string(size_t)>& where) {
  for (size_t l = 0; l < layers.size(); ++l) {
    const auto& layer = layers[l];
    switch (layer.kind) {
      case layer_kind::dense:
      case layer_kind::conv:
      case layer_kind::separable:
        if (layer.units <= 0)
          return cat(where(l), ": needs a positive number of ", layer.kind == layer_kind::dense ? "units" : "channels");
        break;
      case layer_kind::depthwise: break;
      case layer_kind::dropout:
        if (!(layer.rate >= 0.0f && layer.rate < 1.0f))
          return cat(where(l), ": the rate must be in [0, 1)");
        break;
      case layer_kind::residual: {
        if (layer.body.empty())
          return cat(where(l), ": an empty block");
        image_shape out = in;
        bool inner_flat = flat;
        auto inner = [&](size_t j) { return cat(where(l), ": its layer ", j, " (", layer.body[j].text(), ")"); };
        for (auto& b : layer.body)
          if (b.kind == layer_kind::residual)
            return cat(where(l), ": blocks do not nest");
        if (auto why = check_layers(layer.body, out, inner_flat, inner); !why.empty())
          return why;
        if (!(out == in) && (inner_flat || projection_stride(in, out) == 0))
          return cat(where(l), ": its block turns ", in.text(), " into ", out.text(),
                     "; the shortcut needs the same shape or a 1x1 projection to it (an image, its sides divided by one stride)");
        break;
      }
      case layer_kind::lrn:
        if (layer.lrn.radius < 0 || !(layer.lrn.bias > 0.0f) || !(layer.lrn.alpha >= 0.0f) || !(layer.lrn.beta >= 0.0f))
          return cat(where(l), ": needs radius >= 0, bias > 0, alpha >= 0 and beta >= 0");
        break;
      case layer_kind::maxpool:
      case layer_kind::batchnorm:
      case layer_kind::avgpool: break;
    }
    const bool windowed = layer.kind == layer_kind::conv || layer.kind == layer_kind::maxpool
                          || layer.kind == layer_kind::depthwise || layer.kind == layer_kind::separable;
    if ((windowed || layer.kind == layer_kind::avgpool) && flat)
      return cat(where(l), ": follows a dense layer; convolution and pooling need an image input");
    if (windowed) {
      if (layer.kernel <= 0 || layer.stride <= 0)
        return cat(where(l), ": window and stride must be positive");
      if (layer.padding == padding_mode::valid && (in.height < layer.kernel || in.width < layer.kernel))
        return cat(where(l), ": its input is ", in.text(), ", smaller than the ", layer.kernel, "x", layer.kernel,
                   " window (valid padding)");
    }
    if (layer.kind == layer_kind::dense)
      flat = true;
    in = output_shape(layer, in);
  }
  return {};
}

} // namespace

size_t model_spec::forward_macs() const {
  size_t macs = 0;
  image_shape in = input;
  for (auto& l : layers) {
    macs += macs_of(l, in);
    in = output_shape(l, in);
  }
  return macs;
}

std::string model_spec::validate() const {
  if (input.height <= 0 || input.width <= 0 || input.channels <= 0)
    return cat("model input shape ", input.text(), " must be positive");
  if (layers.empty())
    return "the model has no layers";
  image_shape in = input;
  bool flat = false;
  if (auto why = check_layers(layers, in, flat, [&](size_t l) { return cat("layer ", l, " (", layers[l].text(), ")"); });
      !why.empty())
    return why;
  const auto& last = layers.back();
  if (last.kind != layer_kind::dense || last.act)
    return cat("the last layer must be the logits layer (\"dense CLASSES\", no activation), got \"",
               last.text(), "\"");
  if (last.units < 2)
    return cat("the logits layer needs at least 2 classes, got ", last.units);
  return {};
}

bool model_spec::dense_only() const {
  for (auto& l : layers)
    if (l.kind != layer_kind::dense)
      return false;
  return true;
}

std::vector<std::string> model_spec::layer_texts() const {
  std::vector<std::string> out;
  for (auto& l : layers)
    out.push_back(l.text());
  return out;
}

std::string model_spec::text() const {
  std::string out = input.text() + ":";
  for (size_t i = 0; i < layers.size(); ++i)
    out += (i == 0 ? " " : ", ") + layers[i].text();
  return out;
}

std::optional<image_shape> parse_image_shape(const std::string& text) {
  image_shape out;
  char x1 = 0, x2 = 0;
  int used = 0;
  if (std::sscanf(text.c_str(), "%d%c%d%c%d%n", &out.height, &x1, &out.width, &x2, &out.channels, &used) != 5
      || x1 != 'x' || x2 != 'x' || used != static_cast<int>(text.size()) || out.height <= 0 || out.width <= 0
      || out.channels <= 0)
    return std::nullopt;
  return out;
}

namespace {

// Splits "a, b [c, d] e, f" at the commas outside brackets: {"a", "b [c, d] e", "f"}.
std::vector<std::string> split_layer_list(const std::string& text) {
  std::vector<std::string> out{""};
  int depth = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (c == ',' && depth == 0) {
      out.emplace_back();
      if (i + 1 < text.size() && text[i + 1] == ' ')
        ++i;
    } else {
      out.back() += c;
    }
  }
  return out;
}

} // namespace

caf::expected<model_spec> parse_model_text(const std::string& text, const std::string& what) {
  auto bad = [&](const std::string& why) {
    return caf::make_error(errc::corrupt_data, cat(what, ": the model \"", text, "\" ", why));
  };
  auto colon = text.find(": ");
  if (colon == std::string::npos)
    return bad("is not \"HxWxC: layer, layer, ...\"");
  auto input = parse_image_shape(text.substr(0, colon));
  if (!input)
    return bad(cat("has the input shape \"", text.substr(0, colon), "\", not HxWxC"));
  auto layers = parse_layers(split_layer_list(text.substr(colon + 2)), "layers");
  if (!layers)
    return bad(cat("does not parse: ", describe(layers.error())));
  model_spec out;
  out.input = *input;
  out.layers = std::move(*layers);
  if (auto why = out.validate(); !why.empty())
    return bad(cat("does not fit: ", why));
  return out;
}

model_spec dense_model(image_shape input, const std::vector<int>& hidden, activation act, int classes) {
  model_spec out;
  out.input = input;
  for (int units : hidden) {
    layer_spec l;
    l.units = units;
    l.act = act;
    out.layers.push_back(l);
  }
  layer_spec logits;
  logits.units = classes;
  out.layers.push_back(logits);
  return out;
}

namespace {

bool parse_int(const std::string& s, int& out) {
  if (s.empty() || s.size() > 9)
    return false;
  for (char c : s)
    if (c < '0' || c > '9')
      return false;
  out = std::atoi(s.c_str());
  return true;
}

// Parses text into out; returns what is wrong, empty on success.
std::string parse_into(const std::string& text, layer_spec& out) {
  std::istringstream in{text};
  std::vector<std::string> words;
  for (std::string w; in >> w;)
    words.push_back(w);
  if (words.empty())
    return "empty layer";
  const std::string& kind = words[0];
  size_t i = 2;
  if (kind == "dense") {
    if (words.size() < 2 || !parse_int(words[1], out.units) || out.units <= 0)
      return "expected \"dense UNITS [ACTIVATION]\" with UNITS a positive integer";
  } else if (kind == "depthwise") {
    out.kind = layer_kind::depthwise;
    int kh = 0, kw = 0;
    std::string dims = words.size() > 1 ? words[1] : "";
    auto x1 = dims.find('x');
    if (x1 == std::string::npos || !parse_int(dims.substr(0, x1), kh) || !parse_int(dims.substr(x1 + 1), kw) || kh <= 0)
      return "expected \"depthwise KxK [stride S] [same|valid] [ACTIVATION]\", e.g. \"depthwise 3x3 relu\"";
    if (kh != kw)
      return cat("only square kernels are supported, got ", kh, "x", kw);
    out.kernel = kh;
  } else if (kind == "conv" || kind == "separable") {
    out.kind = kind == "conv" ? layer_kind::conv : layer_kind::separable;
    int kh = 0, kw = 0;
    std::string dims = words.size() > 1 ? words[1] : "";
    auto x1 = dims.find('x'), x2 = dims.find('x', x1 == std::string::npos ? x1 : x1 + 1);
    if (x1 == std::string::npos || x2 == std::string::npos || !parse_int(dims.substr(0, x1), kh)
        || !parse_int(dims.substr(x1 + 1, x2 - x1 - 1), kw) || !parse_int(dims.substr(x2 + 1), out.units)
        || kh <= 0 || out.units <= 0)
      return cat("expected \"", kind, " KxKxCHANNELS [stride S] [same|valid] [ACTIVATION]\", e.g. \"", kind, " 3x3x32 relu\"");
    if (kh != kw)
      return cat("only square kernels are supported, got ", kh, "x", kw);
    out.kernel = kh;
  } else if (kind == "maxpool") {
    out.kind = layer_kind::maxpool;
    out.padding = padding_mode::valid;
    if (words.size() < 2 || !parse_int(words[1], out.kernel) || out.kernel <= 0)
      return "expected \"maxpool K [stride S] [same|valid]\" with K a positive integer";
    out.stride = out.kernel;
  } else if (kind == "dropout") {
    out.kind = layer_kind::dropout;
    char* end = nullptr;
    out.rate = words.size() > 1 ? std::strtof(words[1].c_str(), &end) : -1.0f;
    if (words.size() < 2 || end == nullptr || *end != '\0' || !(out.rate >= 0.0f && out.rate < 1.0f))
      return "expected \"dropout RATE\" with 0 <= RATE < 1";
  } else if (kind == "batchnorm") {
    out.kind = layer_kind::batchnorm;
    i = 1;
    if (words.size() > 1 && words[1].rfind("decay", 0) == 0) {
      std::string value;
      if (words[1] == "decay") {
        value = words.size() > 2 ? words[2] : "";
        i = 3;
      } else if (words[1].rfind("decay=", 0) == 0) {
        value = words[1].substr(6);
        i = 2;
      }
      char* end = nullptr;
      out.decay = value.empty() ? -1.0f : std::strtof(value.c_str(), &end);
      if (value.empty() || end == nullptr || *end != '\0' || !(out.decay > 0.0f && out.decay < 1.0f))
        return "expected \"batchnorm [decay D] [ACTIVATION]\" with 0 < D < 1 (the share of the moving statistics "
               "kept per step: TF1's 0.99, PyTorch's 0.9), e.g. \"batchnorm decay 0.9 relu\"";
    }
  } else if (kind == "lrn") {
    out.kind = layer_kind::lrn;
    for (i = 1; i < words.size(); i += 2) {
      const std::string& key = words[i];
      const std::string value = i + 1 < words.size() ? words[i + 1] : "";
      char* end = nullptr;
      const float v = std::strtof(value.c_str(), &end);
      const bool number = !value.empty() && end != nullptr && *end == '\0' && std::isfinite(v);
      if (key == "radius" && parse_int(value, out.lrn.radius))
        continue;
      if (number && key == "bias" && v > 0.0f)
        out.lrn.bias = v;
      else if (number && key == "alpha" && v >= 0.0f)
        out.lrn.alpha = v;
      else if (number && key == "beta" && v >= 0.0f)
        out.lrn.beta = v;
      else
        return cat("expected \"lrn [radius R] [bias B] [alpha A] [beta BETA]\" (TensorFlow's defaults 5, 1, 1, 0.5; R an "
                   "integer >= 0, B > 0, A and BETA >= 0), got \"", key, value.empty() ? "" : " " + value, "\"");
    }
  } else if (kind == "avgpool") {
    out.kind = layer_kind::avgpool;
    if (words.size() < 2 || words[1] != "global")
      return "expected \"avgpool global\" (the mean of each channel)";
  } else if (kind == "residual") {
    out.kind = layer_kind::residual;
    const auto open = text.find('['), close = text.rfind(']');
    if (open == std::string::npos || close == std::string::npos || close < open
        || text.find_first_not_of(' ', text.find("residual") + 8) != open)
      return "expected \"residual [LAYER, ...] [ACTIVATION]\", e.g. \"residual [conv 3x3x16, batchnorm relu, conv 3x3x16, "
             "batchnorm] relu\"";
    const std::string inner = text.substr(open + 1, close - open - 1);
    if (inner.find_first_not_of(' ') == std::string::npos)
      return "an empty block";
    auto parts = split_layer_list(inner);
    for (size_t j = 0; j < parts.size(); ++j) {
      if (parts[j].find('[') != std::string::npos)
        return cat("layer ", j, " of the block: blocks do not nest");
      layer_spec l;
      if (auto why = parse_into(parts[j], l); !why.empty())
        return cat("layer ", j, " of the block: ", why);
      out.body.push_back(std::move(l));
    }
    std::istringstream after{text.substr(close + 1)};
    words = {"residual", "[...]"};
    for (std::string w; after >> w;)
      words.push_back(w);
  } else {
    return cat("unknown layer kind \"", kind, "\" (expected dense, conv, depthwise, separable, maxpool, dropout, batchnorm, "
               "lrn, avgpool, residual or flatten)");
  }
  for (; i < words.size(); ++i) {
    const std::string& w = words[i];
    bool windowed = out.kind == layer_kind::conv || out.kind == layer_kind::maxpool || out.kind == layer_kind::depthwise
                    || out.kind == layer_kind::separable;
    if (windowed && w == "stride") {
      if (i + 1 >= words.size() || !parse_int(words[i + 1], out.stride) || out.stride <= 0)
        return "\"stride\" needs a positive integer after it";
      ++i;
    } else if (windowed && (w == "same" || w == "valid")) {
      out.padding = w == "same" ? padding_mode::same : padding_mode::valid;
    } else if (out.kind != layer_kind::maxpool && out.kind != layer_kind::dropout && out.kind != layer_kind::avgpool
               && out.kind != layer_kind::lrn && parse_activation(w)) {
      if (out.act)
        return "more than one activation";
      out.act = parse_activation(w);
    } else {
      return cat("unexpected \"", w, "\" (activations: ", names_of(all_activations),
                 windowed ? "; options: stride S, same, valid)" : ")");
    }
  }
  return {};
}

} // namespace

caf::expected<layer_spec> parse_layer(const std::string& text) {
  layer_spec out;
  if (auto why = parse_into(text, out); !why.empty())
    return caf::make_error(errc::invalid_config, why);
  return out;
}

caf::expected<std::vector<layer_spec>> parse_layers(const std::vector<std::string>& texts,
                                                    const std::string& key) {
  std::vector<layer_spec> out;
  for (size_t i = 0; i < texts.size(); ++i) {
    std::string trimmed = texts[i];
    if (trimmed.find_first_not_of(' ') != std::string::npos)
      trimmed = trimmed.substr(trimmed.find_first_not_of(' '));
    if (trimmed == "flatten")
      continue;
    layer_spec layer;
    if (auto why = parse_into(texts[i], layer); !why.empty())
      return caf::make_error(errc::invalid_config, cat(key, "[", i, "] \"", texts[i], "\": ", why));
    out.push_back(layer);
  }
  if (out.empty())
    return caf::make_error(errc::invalid_config, cat(key, " has no layers"));
  return out;
}

} // namespace actorps
