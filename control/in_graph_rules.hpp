// In-graph replication's step, without CAF: the chief cuts one global batch into parts (one per
// configured worker), hands each live worker its parts one at a time, moves a lost worker's parts
// to the others, and averages the parts' gradients -- weighted by rows, summed in part order, so
// the result does not depend on who computed which part or when. The in-graph driver
// (control/in_graph_driver) carries out what it returns. Single-threaded.
#pragma once

#include "messages/shard_protocol.hpp"

#include <caf/expected.hpp>

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

namespace actorps {

class in_graph_round {
public:
  /// Rows [begin, begin + rows) of the step's global batch.
  struct part {
    int begin = 0;
    int rows = 0;
  };
  /// Send part `part` to worker `worker`.
  struct assignment {
    uint32_t worker = 0;
    uint32_t part = 0;
  };
  /// What a delivery did.
  enum class verdict {
    accepted, ///< the part's gradient counts
    ignored,  ///< another step's, or a part already in (a late answer after a reassignment)
  };
  struct delivery {
    verdict what = verdict::ignored;
    std::optional<assignment> next; ///< the deliverer's next part, to send now
  };
  /// The step's result once every part is in.
  struct result {
    uint64_t step = 0;
    std::vector<variable_slice> average; ///< sum over parts of rows_p * g_p / rows, in part order
    int rows = 0;
    double loss_sum = 0.0;
  };

  /// `workers`: the configured workers; every global batch is cut into that many parts (fewer
  /// when it has fewer rows). REQUIRES: workers > 0.
  explicit in_graph_round(uint32_t workers);

  uint64_t step() const { return step_; }
  /// Whether a step is in progress (begun, not completed or abandoned).
  bool running() const { return running_; }
  const part& part_at(uint32_t p) const { return parts_.at(p); }
  bool live(uint32_t w) const { return live_.at(w); }
  uint32_t live_workers() const;

  /// Begins `step` over a global batch of `rows` examples; returns each live worker's first
  /// part. Errors: no live worker, or rows < 1.
  caf::expected<std::vector<assignment>> begin(uint64_t step, int rows);

  /// Worker w's gradient of part p of `step`: `rows` examples (must be the part's), the sum of
  /// their losses and the mean gradient, one slice per variable. Errors: protocol_error for a
  /// part that does not exist, a row count that is not the part's, or slices laid out unlike
  /// the first part's.
  caf::expected<delivery> deliver(uint32_t w, uint64_t step, uint32_t p, int rows, double loss_sum,
                                  std::vector<variable_slice> grads);

  /// Worker w cannot compute what it holds: its process went down (`gone`: no parts until
  /// rejoin()), or a request failed or outlived the step deadline (benched for this step only).
  /// Its parts go to the eligible workers with the fewest parts; returns the ones to send now.
  /// An empty answer with stalled() true: nobody is left for this step (begin it again).
  std::vector<assignment> lose(uint32_t w, bool gone);

  /// Nobody eligible is left to compute the step's remaining parts.
  bool stalled() const { return stalled_; }

  /// What to do with a stalled step: begin it again (after a pause), or give up.
  enum class stall_action { retry, give_up };
  /// The step stalled at `now`: abandons it; gives up once steps have stalled for `timeout`
  /// (cluster.step-timeout) since the first stall after the last completed step.
  stall_action stall(std::chrono::steady_clock::time_point now, std::chrono::nanoseconds timeout);

  /// A restarted worker w takes parts again from the next step on.
  void rejoin(uint32_t w);

  /// Whether every part of the step is in.
  bool ready() const;

  /// REQUIRES: ready(). Averages the parts and ends the step.
  result complete();

  /// Ends the step without a result (a shard went down): its answers are ignored from now on.
  void abandon();

private:
  std::optional<assignment> next_for(uint32_t w);
  bool eligible(uint32_t w) const { return live_[w] && !benched_[w]; }

  uint32_t workers_;
  uint64_t step_ = 0;
  bool running_ = false;
  bool stalled_ = false;
  std::vector<part> parts_;
  std::vector<bool> live_;
  std::vector<bool> benched_;                    ///< this step only
  std::vector<std::optional<uint32_t>> busy_;    ///< per worker: the part it computes now
  std::vector<std::deque<uint32_t>> queued_;     ///< per worker: parts after that one
  std::vector<std::optional<std::vector<variable_slice>>> grads_; ///< per part
  std::vector<double> losses_;                   ///< per part
  std::optional<std::chrono::steady_clock::time_point> stalled_since_; ///< since the last completed step
};

} // namespace actorps
