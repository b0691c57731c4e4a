// The chief's progress lines (see progress_lines.hpp).
#include "control/progress_lines.hpp"

#include "common/log.hpp"

namespace actorps {

progress_lines::progress_lines(int64_t every, int64_t train_rows) : every_(every), train_rows_(train_rows) {
}

void progress_lines::start(int64_t step, time_point now) {
  start_ = now;
  step_ = step;
  next_step_ = step + every_;
}

std::optional<progress_lines::line> progress_lines::add(int64_t step, int64_t examples_total, int64_t examples,
                                                        double loss_sum, time_point now) {
  loss_ += loss_sum;
  examples_ += examples;
  if (step < next_step_)
    return std::nullopt;
  const double span = std::chrono::duration<double>(now - start_).count();
  // (reports that arrive together, e.g. a backlog, span no time: no rate to speak of)
  auto rate = span >= 0.01 ? cat(static_cast<int64_t>(examples_ / span), " examples/s") : std::string{"- examples/s"};
  const double loss = examples_ > 0 ? loss_ / examples_ : 0.0;
  line out{cat("step ", step, " epoch ", static_cast<double>(examples_total) / train_rows_, " | ", rate, " | loss ", loss),
           std::nullopt};
  if (span >= 0.01)
    out.figures = progress_figures{step, examples_ / span, (step - step_) / span, loss};
  step_ = step;
  loss_ = 0.0;
  examples_ = 0;
  start_ = now;
  while (next_step_ <= step)
    next_step_ += every_;
  return out;
}

} // namespace actorps
