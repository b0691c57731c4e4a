// Converting between checkpoints, .npz exports and the in-memory saved model.
#include "saved_model/saved_model.hpp"

#include "model/partitioner.hpp"

#include "checkpoint/checkpoint_store.hpp"
#include "common/errc.hpp"
#include "common/json.hpp"
#include "common/json_reader.hpp"
#include "common/log.hpp"
#include "data/npz_file.hpp"

#include <cstdio>
#include <filesystem>
#include <map>

namespace actorps {

namespace fs = std::filesystem;

namespace {

std::string shape_list(const std::vector<size_t>& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i > 0 ? ", " : "") + std::to_string(shape[i]);
  return out + "]";
}

// Floats with 9 significant digits: they read back bit for bit.
std::string float_list(const std::vector<float>& xs) {
  std::string out = "[";
  for (size_t i = 0; i < xs.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.9g", static_cast<double>(xs[i]));
    out += (i > 0 ? ", " : "") + std::string{buf};
  }
  return out + "]";
}

std::string shape_text(const std::vector<size_t>& shape) {
  std::string out;
  for (size_t i = 0; i < shape.size(); ++i)
    out += (i > 0 ? "x" : "") + std::to_string(shape[i]);
  return shape.empty() ? "scalar" : out;
}

caf::expected<std::vector<float>> floats_of(const json_value* v, const std::string& what) {
  std::vector<float> out;
  if (v == nullptr)
    return out;
  if (!v->is(json_value::kind::array))
    return caf::make_error(errc::corrupt_data, cat(what, " is not a list of numbers"));
  for (auto& x : v->items) {
    if (!x.is(json_value::kind::number))
      return caf::make_error(errc::corrupt_data, cat(what, " is not a list of numbers"));
    out.push_back(static_cast<float>(x.number));
  }
  return out;
}

// The model described by an .npz's model.json.
caf::expected<saved_model> describe_npz(const std::string& json, const std::string& path) {
  const std::string where = cat(path, ": ", model_entry);
  auto doc = parse_json(json, where);
  if (!doc)
    return std::move(doc.error());
  auto format = doc->find("format");
  if (format == nullptr || format->text != "actorps-model")
    return caf::make_error(errc::corrupt_data, cat(where, ": \"format\" is not \"actorps-model\""));
  auto text = doc->find("model");
  if (text == nullptr || !text->is(json_value::kind::string))
    return caf::make_error(errc::corrupt_data, cat(where, ": no \"model\" text"));
  auto spec = parse_model_text(text->text, where);
  if (!spec)
    return std::move(spec.error());
  saved_model m;
  m.spec = std::move(*spec);
  if (auto scaling = doc->find("scaling")) {
    auto mean = floats_of(scaling->find("mean"), where + ": scaling.mean");
    auto stddev = floats_of(scaling->find("stddev"), where + ": scaling.stddev");
    if (!mean)
      return std::move(mean.error());
    if (!stddev)
      return std::move(stddev.error());
    m.scaling.mean = std::move(*mean);
    m.scaling.stddev = std::move(*stddev);
    if (auto crop = scaling->find("crop"); crop && crop->is(json_value::kind::number))
      m.scaling.crop_size = static_cast<int>(crop->number);
    if (auto source = scaling->find("source"); source && source->is(json_value::kind::array) && source->items.size() == 2) {
      m.scaling.source_height = static_cast<int>(source->items[0].number);
      m.scaling.source_width = static_cast<int>(source->items[1].number);
    }
    if (auto standardize = scaling->find("standardize"))
      m.scaling.standardize = standardize->is(json_value::kind::boolean) && standardize->flag;
    if (auto bigrams = scaling->find("bigrams"); bigrams && bigrams->is(json_value::kind::boolean))
      m.scaling.bigrams = bigrams->flag;
  }
  if (m.scaling.per_channel()
      && (m.scaling.mean.size() != static_cast<size_t>(m.spec.input.channels)
          || m.scaling.stddev.size() != m.scaling.mean.size()))
    return caf::make_error(errc::corrupt_data, cat(where, ": the scaling needs one mean and one stddev per channel (",
                                                   m.spec.input.channels, ")"));
  if (m.scaling.crop_size != 0 && (m.scaling.crop_size != m.spec.input.height || m.scaling.crop_size != m.spec.input.width))
    return caf::make_error(errc::corrupt_data, cat(where, ": scaling.crop ", m.scaling.crop_size,
                                                   " is not the model's input (", m.spec.input.text(), ")"));
  if (m.scaling.crop_size != 0
      && (m.scaling.source_height < m.scaling.crop_size || m.scaling.source_width < m.scaling.crop_size
          || m.scaling.source_height > 65536 || m.scaling.source_width > 65536))
    return caf::make_error(errc::corrupt_data, cat(where, ": scaling.source must be the [height, width] of the images "
                                                          "the crop of ", m.scaling.crop_size, " is taken from"));
  if (auto step = doc->find("step"); step && step->is(json_value::kind::number))
    m.step = static_cast<int64_t>(step->number);
  if (auto acc = doc->find("validation_accuracy"); acc && acc->is(json_value::kind::number))
    m.validation_accuracy = acc->number;
  if (auto names = doc->find("class_names"); names && names->is(json_value::kind::array)) {
    for (auto& n : names->items) {
      if (!n.is(json_value::kind::string))
        return caf::make_error(errc::corrupt_data, cat(where, ": class_names must be strings"));
      m.class_names.push_back(n.text);
    }
  }
  return m;
}

caf::expected<saved_model> load_npz(const std::string& path) {
  auto arrays = read_npz(path);
  if (!arrays)
    return std::move(arrays.error());
  const npy_array* description = nullptr;
  std::map<std::string, const npy_array*> by_name;
  for (auto& a : *arrays) {
    if (a.name == model_entry && a.is_text)
      description = &a;
    else
      by_name[a.name] = &a;
  }
  if (description == nullptr)
    return caf::make_error(errc::corrupt_data, cat(path, ": has no ", model_entry,
                                                   " entry (not written by actorps-export?); it can still "
                                                   "start a training run with --model.init-from"));
  auto m = describe_npz(description->text, path);
  if (!m)
    return m;
  auto vars = m->spec.variables();
  auto shapes = export_shapes(m->spec);
  for (size_t k = 0; k < vars.size(); ++k) {
    auto found = by_name.find(vars[k].name);
    const auto& want = shapes[k];
    if (found == by_name.end())
      return caf::make_error(errc::corrupt_data, cat(path, ": lacks the model's variable ", vars[k].name,
                                                     by_name.count(vars[k].name + "/part_0") > 0
                                                       ? " (exported in parts, --table-parts: actorps' tools read a "
                                                         "table whole)"
                                                       : ""));
    if (found->second->is_text || found->second->shape != want)
      return caf::make_error(errc::corrupt_data, cat(path, ": ", vars[k].name, " has shape ",
                                                     shape_text(found->second->shape), ", the model needs ",
                                                     shape_text(want)));
    m->values.push_back(found->second->values);
  }
  m->source = path;
  return m;
}

// The checkpoint a path names: itself, or the best (else final) model of a model or run directory.
std::string checkpoint_dir_of(const std::string& path) {
  if (fs::exists(fs::path{path} / "manifest.bin"))
    return path;
  for (const char* sub : {"best", "model/best", "final", "model/final"})
    if (fs::exists(fs::path{path} / sub / "manifest.bin"))
      return (fs::path{path} / sub).string();
  return path;
}

} // namespace

void weights_digester::add(const float* xs, size_t n) {
  auto* bytes = reinterpret_cast<const unsigned char*>(xs);
  for (size_t i = 0; i < n * sizeof(float); ++i) {
    h_ ^= bytes[i];
    h_ *= 1099511628211ULL;
  }
}

std::string weights_digester::text() const {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h_));
  return buf;
}

std::string weights_digest(const std::vector<std::vector<float>>& params) {
  weights_digester d;
  for (auto& var : params)
    d.add(var.data(), var.size());
  return d.text();
}

caf::expected<std::string> weights_digest(network& net) {
  weights_digester d;
  std::vector<float> piece;
  const auto vars = net.spec().variables();
  for (size_t k = 0; k < vars.size(); ++k)
    for (size_t at = 0; at < vars[k].size(); at += piece.size()) {
      piece.resize(std::min<size_t>(vars[k].size() - at, size_t{1} << 22));
      if (auto err = net.download_parameter(k, at, piece.data(), piece.size()))
        return err;
      d.add(piece.data(), piece.size());
    }
  return d.text();
}

std::vector<std::vector<size_t>> export_shapes(const model_spec& spec) {
  std::vector<std::vector<size_t>> out;
  for (auto& v : spec.variables())
    out.emplace_back(v.shape.begin(), v.shape.end());
  return out;
}

std::string model_json(const saved_model& m) {
  std::string layers = "[";
  for (size_t i = 0; i < m.spec.layers.size(); ++i)
    layers += (i > 0 ? ", " : "") + json_quote(m.spec.layers[i].text());
  layers += "]";
  std::string variables = "[";
  auto vars = m.spec.variables();
  auto shapes = export_shapes(m.spec);
  for (size_t k = 0; k < vars.size(); ++k) {
    json_object v;
    v.add("name", vars[k].name).add_raw("shape", shape_list(shapes[k]));
    variables += (k > 0 ? ", " : "") + v.str();
  }
  variables += "]";
  json_object scaling;
  scaling.add("divide", 255.0)
    .add_raw("mean", float_list(m.scaling.mean))
    .add_raw("stddev", float_list(m.scaling.stddev))
    .add("crop", m.scaling.crop_size)
    .add_raw("source", cat("[", m.scaling.source_height, ", ", m.scaling.source_width, "]"))
    .add("standardize", m.scaling.standardize)
    .add("bigrams", m.scaling.bigrams);
  json_object out;
  out.add("format", "actorps-model")
    .add("version", 1)
    .add("model", m.spec.text())
    .add_raw("input", shape_list({static_cast<size_t>(m.spec.input.height), static_cast<size_t>(m.spec.input.width),
                                  static_cast<size_t>(m.spec.input.channels)}))
    .add_raw("layers", layers)
    .add("classes", m.spec.classes())
    .add_raw("scaling", scaling.str())
    .add_raw("variables", variables)
    .add("step", m.step)
    .add("validation_accuracy", m.validation_accuracy)
    .add_raw("class_names", json_array(m.class_names));
  return out.str();
}

std::string saved_model::class_name(int c) const {
  return c >= 0 && static_cast<size_t>(c) < class_names.size() ? class_names[static_cast<size_t>(c)] : std::to_string(c);
}

caf::expected<saved_model> from_checkpoint(const checkpoint& c, const std::string& path) {
  auto spec = parse_model_text(c.manifest.model, path + "/manifest.bin");
  if (!spec)
    return std::move(spec.error());
  saved_model m;
  m.spec = std::move(*spec);
  auto vars = m.spec.variables();
  const auto& listed = c.manifest.variables;
  bool same = listed.size() == vars.size();
  for (size_t k = 0; same && k < vars.size(); ++k)
    same = listed[k].name == vars[k].name && listed[k].rows == vars[k].rows && listed[k].cols == vars[k].cols;
  if (!same)
    return caf::make_error(errc::corrupt_data, cat(path, "/manifest.bin: its variables are not those of its model \"",
                                                   c.manifest.model, "\""));
  m.values.resize(vars.size());
  for (auto& shard : c.shards)
    for (auto& v : shard.variables)
      m.values[v.index] = v.values; // read_checkpoint verified indices and sizes
  m.scaling = recorded_scaling(c.manifest);
  m.step = c.manifest.global_step;
  m.validation_accuracy = c.manifest.validation_accuracy;
  m.class_names = c.manifest.class_names;
  m.source = path;
  return m;
}

void record_scaling(const input_scaling& s, checkpoint_manifest& m) {
  m.input_mean = s.mean;
  m.input_stddev = s.stddev;
  m.input_crop = s.crop_size;
  m.input_source_height = s.source_height;
  m.input_source_width = s.source_width;
  m.input_standardize = s.standardize;
  m.input_bigrams = s.bigrams;
}

input_scaling recorded_scaling(const checkpoint_manifest& m) {
  input_scaling s{m.input_mean, m.input_stddev, m.input_crop, m.input_source_height, m.input_source_width, m.input_standardize};
  s.bigrams = m.input_bigrams;
  return s;
}

checkpoint_manifest saved_manifest(const saved_model& m) {
  checkpoint_manifest man;
  man.global_step = m.step;
  man.validation_accuracy = m.validation_accuracy;
  man.model = m.spec.text();
  man.placement = "single";
  for (auto& v : m.spec.variables())
    man.variables.push_back({v.name, v.rows, v.cols, 0});
  record_scaling(m.scaling, man);
  man.class_names = m.class_names;
  return man;
}

shard_checkpoint saved_shard(std::vector<std::vector<float>> values) {
  shard_checkpoint shard;
  for (uint32_t k = 0; k < values.size(); ++k)
    shard.variables.push_back({k, std::move(values[k]), {}, {}});
  return shard;
}

checkpoint to_checkpoint(saved_model m) {
  checkpoint c;
  c.manifest = saved_manifest(m);
  c.shards.push_back(saved_shard(std::move(m.values)));
  return c;
}

caf::expected<saved_model> load_saved_model(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec))
    return caf::make_error(errc::file_error, cat(path, ": no such file or directory"));
  if (fs::is_directory(path, ec)) {
    auto dir = checkpoint_dir_of(path);
    if (!fs::exists(fs::path{dir} / "manifest.bin"))
      return caf::make_error(errc::file_error, cat(path, ": neither a checkpoint (no manifest.bin) nor a run or "
                                                   "model directory holding best/ or final/"));
    auto c = read_checkpoint(dir);
    if (!c)
      return std::move(c.error());
    return from_checkpoint(*c, dir);
  }
  if (!looks_like_npz(path))
    return caf::make_error(errc::corrupt_data, cat(path, ": neither an .npz file nor a checkpoint directory"));
  return load_npz(path);
}

caf::error export_npz(const saved_model& m, const std::string& path, const table_export& tables) {
  std::vector<npy_array> arrays;
  auto vars = m.spec.variables();
  auto shapes = export_shapes(m.spec);
  bool split = false;
  for (size_t k = 0; k < vars.size(); ++k) {
    if (!vars[k].table || tables.parts == 1) {
      arrays.push_back(float_array(vars[k].name, shapes[k], m.values[k]));
      continue;
    }
    if (tables.parts == 0 || tables.parts > static_cast<uint32_t>(vars[k].rows))
      return caf::make_error(errc::invalid_config, cat("--table-parts ", tables.parts, ": ", vars[k].name, " has ",
                                                       vars[k].rows, " rows"));
    split = true;
    const auto cols = static_cast<size_t>(vars[k].cols);
    const auto rows = tables.mod ? mod_split(vars[k].rows, tables.parts)
                                 : partition_rows(vars[k], partitioner{partitioner::rule::fixed, tables.parts});
    size_t first = 0;
    for (uint32_t j = 0; j < tables.parts; ++j) {
      std::vector<float> part;
      const auto n = static_cast<size_t>(rows[j]);
      part.reserve(n * cols);
      for (size_t i = 0; i < n; ++i) {
        const size_t row = tables.mod ? j + i * tables.parts : first + i;
        part.insert(part.end(), m.values[k].begin() + static_cast<std::ptrdiff_t>(row * cols),
                    m.values[k].begin() + static_cast<std::ptrdiff_t>((row + 1) * cols));
      }
      first += n;
      arrays.push_back(float_array(cat(vars[k].name, "/part_", j), {n, cols}, part));
    }
  }
  auto json = model_json(m);
  if (split) // (how to put the table together again)
    json.insert(json.size() - 1, cat(", \"table_parts\": ", tables.parts, ", \"table_partition\": \"",
                                     tables.mod ? "mod" : "div", "\""));
  arrays.push_back(text_array(model_entry, json));
  return write_npz(arrays, path);
}

caf::expected<std::vector<std::vector<float>>> starting_values(const model_spec& spec, const init_options& init,
                                                               uint64_t seed, bool tables) {
  if (init.from.empty())
    return initial_values(spec, init, seed, tables);
  // Named arrays with their shapes, from an .npz (any arrays: model.json is optional here) or a
  // saved model's checkpoint.
  std::map<std::string, std::pair<std::vector<size_t>, std::vector<float>>> found;
  std::error_code ec;
  if (!fs::exists(init.from, ec))
    return caf::make_error(errc::invalid_config, cat("model.init-from ", init.from, ": no such file or directory"));
  if (!fs::is_directory(init.from, ec) && fs::exists(init.from, ec) && looks_like_npz(init.from)) {
    auto arrays = read_npz(init.from);
    if (!arrays)
      return std::move(arrays.error());
    for (auto& a : *arrays)
      if (!a.is_text)
        found[a.name] = {a.shape, a.values};
  } else {
    auto m = load_saved_model(init.from);
    if (!m)
      return std::move(m.error());
    auto vars = m->spec.variables();
    auto shapes = export_shapes(m->spec);
    for (size_t k = 0; k < vars.size(); ++k)
      found[vars[k].name] = {shapes[k], m->values[k]};
  }
  auto bad = [&](const std::string& why) {
    return caf::make_error(errc::invalid_config, cat("model.init-from ", init.from, ": ", why));
  };
  auto vars = spec.variables();
  auto shapes = export_shapes(spec);
  std::vector<std::vector<float>> out;
  for (size_t k = 0; k < vars.size(); ++k) {
    const auto& want = shapes[k];
    auto i = found.find(vars[k].name);
    if (i == found.end())
      return bad(cat("lacks the variable ", vars[k].name, " (shape ", shape_text(want), ")"));
    if (i->second.first != want)
      return bad(cat(vars[k].name, " has shape ", shape_text(i->second.first), ", this model's is ", shape_text(want)));
    out.push_back(std::move(i->second.second));
    found.erase(i);
  }
  if (!found.empty())
    return bad(cat("holds ", found.begin()->first, ", which this model does not have"));
  return out;
}

} // namespace actorps
