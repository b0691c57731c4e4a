// Reading a layer-list model from its text: "HxWxC: layer, layer, ..." and each layer's words
// (docs/config.md, model.layers), every mistake named with the text it is in. (Writing one, shapes
// and validation: model_spec.cpp.)
#include "model/model_spec.hpp"

#include "common/enum_names.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace actorps {

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
  } else if (kind == "embedding") {
    out.kind = layer_kind::embedding;
    i = 3;
    if (words.size() < 3 || !parse_int(words[1], out.bucket_bits) || !parse_int(words[2], out.units)
        || out.bucket_bits < 1 || out.bucket_bits > 30 || out.units <= 0)
      return "expected \"embedding B D [mean|sum]\" (a table of 2^B rows of D values, B in [1, 30]), e.g. "
             "\"embedding 22 32 mean\"";
    if (words.size() > 3 && (words[3] == "mean" || words[3] == "sum")) {
      out.combine = words[3] == "sum" ? combiner::sum : combiner::mean;
      i = 4;
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
               "lrn, avgpool, residual, embedding or flatten)");
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
               && out.kind != layer_kind::lrn && out.kind != layer_kind::embedding && parse_activation(w)) {
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
