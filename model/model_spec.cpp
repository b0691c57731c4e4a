// Layer texts, shapes, variable naming and validation of a layer-list model. (Reading one from
// its text: model_spec_text.cpp.)
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
    case layer_kind::embedding: return "embedding";
  }
  return "unknown";
}

const char* to_string(padding_mode p) {
  return p == padding_mode::same ? "same" : "valid";
}

bool operator==(const layer_spec& a, const layer_spec& b) {
  return a.kind == b.kind && a.units == b.units && a.kernel == b.kernel && a.stride == b.stride
         && a.padding == b.padding && a.act == b.act && a.rate == b.rate && a.body == b.body && a.lrn == b.lrn
         && a.decay == b.decay && a.bucket_bits == b.bucket_bits && a.combine == b.combine;
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
    case layer_kind::embedding: out += cat(" ", bucket_bits, " ", units, combine == combiner::sum ? " sum" : " mean"); break;
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
    case layer_kind::dense:
    case layer_kind::embedding: return {1, 1, l.units};
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
  int conv = 0, dense = 0, bn = 0, block = 0, depthwise = 0, separable = 0, embedding = 0;
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
    case layer_kind::embedding: {
      const int rows = 1 << layer.bucket_bits;
      add(cat("embedding", n.embedding++, "/weights"), rows, layer.units, {rows, layer.units});
      out.back().table = true;
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
    case layer_kind::embedding: return in.size() * static_cast<size_t>(l.units); // (at most: the ids' rows summed)
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
      case layer_kind::embedding:
        if (layer.units <= 0 || layer.bucket_bits < 1 || layer.bucket_bits > 30)
          return cat(where(l), ": needs B in [1, 30] (2^B rows) and a positive width D");
        if (&layer != &layers.front() || flat)
          return cat(where(l), ": an embedding reads the data's token ids: only as the first layer");
        break;
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
          if (b.kind == layer_kind::residual || b.kind == layer_kind::embedding)
            return cat(where(l), b.kind == layer_kind::residual ? ": blocks do not nest" : ": a block holds no embedding");
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

} // namespace actorps
