// Step phases and their means.
#include "control/step_timer.hpp"

namespace actorps {

void step_timer::compute_begins(time_point now) {
  if (at_ == phase::waiting)
    sums_.wait_ms += ms(since_, now);
  at_ = phase::computing;
  since_ = now;
}

void step_timer::compute_ends(time_point now) {
  if (at_ != phase::computing)
    return;
  sums_.compute_ms += ms(since_, now);
  ++sums_.steps;
  at_ = phase::idle;
  since_ = now;
}

void step_timer::push_begins(time_point now) {
  at_ = phase::pushing;
  since_ = now;
}

void step_timer::push_ends(time_point now) {
  if (at_ != phase::pushing)
    return;
  sums_.push_ms += ms(since_, now);
  at_ = phase::waiting;
  since_ = now;
}

step_timer::means step_timer::take() {
  means out = sums_;
  if (out.steps > 0) {
    out.compute_ms /= out.steps;
    out.push_ms /= out.steps;
    out.wait_ms /= out.steps;
  }
  sums_ = means{};
  return out;
}

} // namespace actorps
