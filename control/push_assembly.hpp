// A SyncAggregator's view of pushes that come in parts (cluster.push-bucket-bytes): a worker's
// gradients for a step count once every part is in, and the sync rule then sees them as one
// push, so the sum (and the digest of a seeded run) does not depend on how they were cut.
// Plain logic without CAF; each part carries a Ticket (the aggregator's reply promise).
#pragma once

#include "control/slicing.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "messages/shard_protocol.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace actorps {

template <class Ticket>
class push_assembly {
public:
  /// A part's ticket, the ranges it carried (its share of the reply) and the rows it asks back
  /// (push_request.reads: read once its step is applied).
  struct held_part {
    Ticket ticket;
    std::vector<slice_ref> ranges;
    std::vector<slice_ref> reads{};
  };

  explicit push_assembly(uint32_t workers) : pushes_(workers) {}

  /// Takes part `part` of `parts` of worker's push for `step`; returns true when the push is
  /// complete (take() then hands it out). Parts the worker left of another step are forgotten:
  /// a worker sends a step only after its last one was answered, so they are those of a
  /// crashed earlier life of it. Errors: unknown_worker; protocol_error for
  /// parts 0, part >= parts, a part twice, or a count differing from the step's earlier parts.
  caf::expected<bool> add(uint32_t worker, uint64_t step, uint32_t part, uint32_t parts,
                          std::vector<variable_slice> grads, Ticket ticket, std::vector<slice_ref> reads = {}) {
    if (worker >= pushes_.size())
      return caf::make_error(errc::unknown_worker, cat("worker ", worker, " is not in the cluster (",
                                                       pushes_.size(), " workers)"));
    if (parts == 0 || part >= parts)
      return caf::make_error(errc::protocol_error, cat("worker ", worker, " sent part ", part, " of ", parts));
    auto& p = pushes_[worker];
    if (p.step != step || p.slices.empty()) {
      p.step = step;
      p.slices.assign(parts, std::nullopt);
      p.tickets.clear();
      p.tickets.resize(parts);
      p.reads.assign(parts, {});
      p.count = 0;
    }
    if (p.slices.size() != parts)
      return caf::make_error(errc::protocol_error, cat("worker ", worker, " cut step ", step, " into ", parts,
                                                       " parts and into ", p.slices.size()));
    if (p.slices[part])
      return caf::make_error(errc::protocol_error, cat("worker ", worker, " sent part ", part, " of step ", step,
                                                       " twice"));
    p.slices[part] = std::move(grads);
    p.tickets[part] = std::move(ticket);
    p.reads[part] = std::move(reads);
    return ++p.count == parts;
  }

  /// After add() returned true: the worker's whole push (its parts' slices in part order) and
  /// each part's ticket and ranges, in part order.
  std::pair<std::vector<variable_slice>, std::vector<held_part>> take(uint32_t worker) {
    std::pair<std::vector<variable_slice>, std::vector<held_part>> out;
    release(pushes_[worker], &out.first, out.second);
    return out;
  }

  /// Forgets the parts of incomplete pushes of steps before `step` and returns them (a step
  /// went on without these workers: their parts came too late).
  std::vector<held_part> drop_before(uint64_t step) {
    std::vector<held_part> out;
    for (auto& p : pushes_)
      if (!p.slices.empty() && p.step < step)
        release(p, nullptr, out);
    return out;
  }

private:
  struct push {
    uint64_t step = 0;
    std::vector<std::optional<std::vector<variable_slice>>> slices; // per part (empty: none held)
    std::vector<std::optional<Ticket>> tickets;
    std::vector<std::vector<slice_ref>> reads; // per part
    uint32_t count = 0;
  };
  std::vector<push> pushes_; // per worker

  // Hands out p's held parts (their slices into whole, when given) and forgets them.
  static void release(push& p, std::vector<variable_slice>* whole, std::vector<held_part>& parts) {
    for (size_t i = 0; i < p.slices.size(); ++i) {
      if (!p.slices[i])
        continue;
      parts.push_back({std::move(*p.tickets[i]), ranges_of(*p.slices[i]), std::move(p.reads[i])});
      if (whole)
        for (auto& g : *p.slices[i])
          whole->push_back(std::move(g));
    }
    p.slices.clear();
    p.tickets.clear();
    p.reads.clear();
    p.count = 0;
  }
};

} // namespace actorps
