// How workers' updates reach the variables (train.mode): the one fact about the configuration that
// the controllers' rules depend on, kept here so that control/ reaches no config/ code.
#pragma once

#include "common/enum_names.hpp"

#include <optional>
#include <string>

namespace actorps {

/// train.mode, parsed once at validation (config/cluster_options).
enum class train_mode { async, sync, ssp, model_parallel };

/// Returns the config spelling: "async", "sync", "ssp", "model-parallel".
inline const char* to_string(train_mode m) {
  switch (m) {
    case train_mode::async: return "async";
    case train_mode::sync: return "sync";
    case train_mode::ssp: return "ssp";
    case train_mode::model_parallel: return "model-parallel";
  }
  return "unknown";
}

inline std::optional<train_mode> parse_train_mode(const std::string& name) {
  constexpr train_mode all[] = {train_mode::async, train_mode::sync, train_mode::ssp, train_mode::model_parallel};
  return parse_by_name(name, all);
}

} // namespace actorps
