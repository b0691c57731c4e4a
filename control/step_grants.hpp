// The chief's step grants (run_control_config::grant_steps: async, ssp and model-parallel runs with
// a step limit; max-epochs' per-worker budgets): the steps each worker holds and has reported,
// the pool they come from (the step limit, which max-epochs' estimate extends a step at a time
// while the stop rule says the epochs are not done), and when an ssp worker is out of steps. One
// job of run_control, which asks it and turns its answers into grant and stop commands.
#pragma once

#include "control/train_mode.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace actorps {

struct step_grant_config {
  train_mode mode = train_mode::async;
  uint32_t workers = 1;
  uint32_t slices = 1;              ///< model-parallel: a group's first slice holds its grant
  int64_t grant_steps = 0;          ///< the most one worker holds (0: no grants)
  int64_t max_steps = 0;            ///< the pool: global steps to grant
  bool budget_from_epochs = false;  ///< max_steps is max-epochs' estimate (see run_control_config)
  std::vector<int64_t> worker_budgets; ///< per worker: its partition's steps (empty: none)
  /// The stop rule: a reason after `steps` global steps and `examples` examples, or nullopt.
  std::function<std::optional<std::string>(int64_t steps, int64_t examples)> should_stop;
};

class step_grants {
public:
  explicit step_grants(step_grant_config cfg);

  /// Whether the run grants steps at all.
  bool enabled() const { return cfg_.grant_steps > 0; }
  /// Makes room for worker id j (elastic ids above the configured workers).
  void grow(uint32_t j);
  /// Steps granted to worker j that it has not reported yet.
  int64_t granted(uint32_t j) const { return j < granted_.size() ? granted_[j] : 0; }
  /// Steps granted and not reported yet, over every worker.
  int64_t held() const;
  /// The steps worker j's own partition has left beyond what it reported and holds (no limit
  /// without per-worker budgets, and for an elastic joiner above them).
  int64_t own_steps_left(uint32_t j) const;

  /// Tops worker j's grant up from the pool at global step `steps` (`examples` trained); returns
  /// the steps added (0: none left for it, or its grant is full).
  int64_t grant(uint32_t j, int64_t steps, int64_t examples);
  /// ssp: worker j's grant is used up and nothing is left to grant it at global step `steps`: it
  /// would hold the others back at the staleness bound for good, so it stops (async: it waits).
  bool out_of_steps(uint32_t j, int64_t steps) const;
  /// Worker j reported `steps` steps (`final`: it takes no more; what it holds goes back).
  void reported(uint32_t j, int64_t steps, bool final);
  /// Worker j's grant goes back to the pool (it left, went down, or is welcomed afresh).
  void release(uint32_t j);

private:
  step_grant_config cfg_;
  int64_t limit_ = 0;            ///< the pool's step limit: max_steps, extended past an epochs estimate
  std::vector<int64_t> granted_; ///< per worker: granted steps it has not reported yet
  std::vector<int64_t> done_;    ///< per worker: steps it reported (against worker_budgets)
};

} // namespace actorps
