// The node's event folder, labels and configuration text.
#include "train/run_telemetry.hpp"

#include "common/log.hpp"
#include "train/model_report.hpp"

namespace actorps {

std::string node_name(const std::string& role, uint32_t index) {
  return role == "chief" || role == "trainer" ? role : cat(role, "-", index);
}

caf::expected<std::shared_ptr<telemetry>> open_run_telemetry(const train_settings& s, const std::string& role,
                                                             uint32_t index,
                                                             const std::vector<std::pair<std::string, std::string>>& more) {
  telemetry_settings ts;
  ts.run = s.name;
  ts.role = role;
  ts.index = index;
  if (s.tensorboard)
    ts.tensorboard_dir = cat(s.run_dir, "/", s.name, "/tensorboard/", node_name(role, index));
  auto t = telemetry::open(ts);
  if (!t)
    return t;
  std::string text = "| setting | value |\n|---|---|\n";
  auto row = [&](const std::string& k, const std::string& v) { text += cat("| ", k, " | ", v, " |\n"); };
  row("node", node_name(role, index));
  row("preset", s.preset);
  for (auto& line : model_table(s.model))
    row("layer", line);
  row("optimizer", cat(to_string(s.optimizer.kind), ", learning rate ", s.optimizer.learning_rate, " (",
                       to_string(s.optimizer.schedule), ")"));
  row("batch size", std::to_string(s.batch_size));
  row("seed", std::to_string(s.seed));
  for (auto& [k, v] : more)
    row(k, v);
  (*t)->text("config", text);
  return t;
}

void report_progress(telemetry& t, const optimizer_params& opt, int64_t step, double examples_per_sec,
                     double steps_per_sec, double loss) {
  t.metrics().set("actorps_global_step", static_cast<double>(step));
  t.scalars(step, {{"examples/sec", examples_per_sec},
                   {"global_step/sec", steps_per_sec},
                   {"loss", loss},
                   {"learning_rate", learning_rate_at(opt, std::max<long>(1, static_cast<long>(step)))}});
}

} // namespace actorps
