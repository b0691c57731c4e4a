// See run_data.hpp.
#include "tools/run_data.hpp"

#include "common/errc.hpp"
#include "common/file_io.hpp"
#include "common/json_reader.hpp"
#include "common/log.hpp"

#include <filesystem>

namespace actorps {

namespace fs = std::filesystem;

std::optional<data_settings> recorded_data(const std::string& model_path) {
  std::error_code ec;
  fs::path at = fs::absolute(model_path, ec);
  for (int up = 0; up < 3 && !at.empty(); ++up, at = at.parent_path()) { // runs/NAME[/model[/best]]
    const auto summary = at / "summary.json";
    if (!fs::is_regular_file(summary, ec))
      continue;
    auto text = read_whole_file(summary.string());
    if (!text)
      return std::nullopt;
    auto doc = parse_json(*text, summary.string());
    const json_value* data = doc ? doc->find("data") : nullptr;
    const json_value* dir = data ? data->find("dir") : nullptr;
    if (dir == nullptr || !dir->is(json_value::kind::string) || dir->text.empty())
      return std::nullopt;
    data_settings out;
    out.dir = dir->text;
    if (const json_value* f = data->find("format"); f && f->is(json_value::kind::string))
      out.format = parse_data_format(f->text).value_or(data_format::automatic);
    if (const json_value* v = data->find("validation_size"); v && v->is(json_value::kind::number))
      out.validation_size = static_cast<int>(v->number);
    return out;
  }
  return std::nullopt;
}

caf::error check_same_classes(const std::vector<std::string>& model_names, const std::string& model,
                              const std::vector<std::string>& data_names, const std::string& data) {
  if (model_names.empty() || data_names.empty() || model_names == data_names)
    return caf::none;
  return caf::make_error(errc::shape_mismatch, cat(model, " knows the classes ", join(model_names, ", "), "; ", data,
                                                   " has ", join(data_names, ", "), ": another data set (give the "
                                                   "model's own with --data.dir)"));
}

} // namespace actorps
