// Data loading with its log line, and the model's table and summary fields.
#include "train/model_report.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>

namespace actorps {

caf::expected<data_splits> load_training_data(const train_settings& s, const std::string& tag) {
  auto t0 = std::chrono::steady_clock::now();
  auto data = load_data(s.data);
  if (!data)
    return std::move(data.error());
  int max_label = std::max({data->train.max_label, data->validation.max_label, data->test.max_label});
  if (max_label >= s.model.classes())
    return caf::make_error(errc::invalid_config, cat("the model has ", s.model.classes(), " classes but ",
                                                     s.data.dir, " has label ", max_label,
                                                     " (set model.classes or the logits layer)"));
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  log_line(tag, cat("loaded ", data->train.rows, " training, ", data->validation.rows, " validation and ",
                    data->test.rows, " test examples (", data->train.shape.text(), ") from ", s.data.dir,
                    " in ", seconds, " s", s.data.normalize == normalization::none ? "" : "; normalised per channel",
                    s.data.augment.any() ? "; distorted (" + describe(s.data.augment) + ")" : std::string{}));
  return data;
}

namespace {

size_t parameters(const model_spec& spec) {
  size_t n = 0;
  for (auto& v : spec.variables())
    n += v.size();
  return n;
}

} // namespace

std::vector<std::string> model_table(const model_spec& spec) {
  std::vector<std::string> out;
  auto shapes = spec.output_shapes();
  auto vars = spec.variables();
  auto first = spec.first_variable();
  auto counts = spec.variable_counts();
  char line[400];
  std::snprintf(line, sizeof line, "  %-3s %-28s %-12s %10s", "#", "layer", "output", "parameters");
  out.emplace_back(line);
  std::snprintf(line, sizeof line, "  %-3s %-28s %-12s %10s", "", "input", spec.input.text().c_str(), "");
  out.emplace_back(line);
  for (size_t l = 0; l < spec.layers.size(); ++l) {
    size_t params = 0;
    for (int k = 0; k < counts[l]; ++k)
      params += vars[static_cast<size_t>(first[l] + k)].size();
    std::string name = spec.layers[l].text();
    if (first[l] >= 0)
      name += "  (" + vars[first[l]].name.substr(0, vars[first[l]].name.find('/')) + ")";
    std::snprintf(line, sizeof line, "  %-3zu %-28s %-12s %10zu", l, name.c_str(), shapes[l].text().c_str(),
                  params);
    out.emplace_back(line);
  }
  std::snprintf(line, sizeof line, "  total: %zu parameters in %zu variables, %zu multiply-adds per example",
                parameters(spec), vars.size(), spec.forward_macs());
  out.emplace_back(line);
  return out;
}

void log_model(const std::string& tag, const train_settings& s, const model_spec& spec) {
  log_line(tag, cat("model (preset ", s.preset, ", init ", to_string(s.init.scheme), "):"));
  for (auto& line : model_table(spec))
    log_line(tag, line);
}

void add_model(json_object& out, const std::string& preset, const model_spec& spec) {
  std::string layers = "[";
  for (auto& text : spec.layer_texts())
    layers += (layers.size() > 1 ? ", " : "") + json_quote(text);
  layers += "]";
  out.add("preset", preset).add("input", spec.input.text()).add_raw("layers", layers)
    .add("parameters", static_cast<int64_t>(parameters(spec)));
}

} // namespace actorps
