// The chief's step grants (see step_grants.hpp).
#include "control/step_grants.hpp"

#include <algorithm>
#include <limits>

namespace actorps {

step_grants::step_grants(step_grant_config cfg)
  : cfg_(std::move(cfg)), limit_(cfg_.max_steps), granted_(cfg_.workers, 0), done_(cfg_.workers, 0) {
}

void step_grants::grow(uint32_t j) {
  if (j >= granted_.size()) {
    granted_.resize(j + 1, 0);
    done_.resize(j + 1, 0);
  }
}

int64_t step_grants::held() const {
  int64_t out = 0;
  for (auto g : granted_)
    out += g;
  return out;
}

int64_t step_grants::own_steps_left(uint32_t j) const {
  if (j >= cfg_.worker_budgets.size())
    return std::numeric_limits<int64_t>::max();
  return cfg_.worker_budgets[j] - done_[j] - granted_[j];
}

int64_t step_grants::grant(uint32_t j, int64_t steps, int64_t examples) {
  const int64_t held = this->held();
  // max-epochs' step budget is an estimate (a worker's last batch of its partition is partial):
  // every step reported and the stop rule not met yet, a few more steps are granted
  if (cfg_.budget_from_epochs && cfg_.worker_budgets.empty() && limit_ - steps - held <= 0 && held == 0
      && cfg_.should_stop && !cfg_.should_stop(steps, examples))
    limit_ = steps + 1; // (one step at a time: the rule is asked again at each report)
  auto give = std::clamp<int64_t>(std::min(limit_ - steps - held, own_steps_left(j)), 0, cfg_.grant_steps - granted_[j]);
  granted_[j] += give;
  return give;
}

bool step_grants::out_of_steps(uint32_t j, int64_t steps) const {
  if (cfg_.mode != train_mode::ssp || granted_[j] > 0)
    return false;
  if (own_steps_left(j) <= 0) // its partition's epochs are done
    return true;
  const int64_t held = this->held();
  return limit_ - steps - held <= 0 && (!cfg_.budget_from_epochs || held > 0);
}

void step_grants::reported(uint32_t j, int64_t steps, bool final) {
  done_[j] += steps;
  if (!enabled())
    return;
  granted_[j] = final ? 0 : std::max<int64_t>(0, granted_[j] - steps);
}

void step_grants::release(uint32_t j) {
  if (enabled())
    granted_[j] = 0;
}

} // namespace actorps
