// Cutting a shard's variables into wire-sized pieces: pull ranges, push batches, and putting
// pulled slices back into whole variables. Plain logic shared by workers and the chief.
#pragma once

#include "messages/shard_protocol.hpp"

#include <caf/error.hpp>
#include <caf/expected.hpp>

#include <cstdint>
#include <functional>
#include <vector>

namespace actorps {

/// The worker id the chief uses to pull (shards accept it for pulls, never for pushes).
constexpr uint32_t chief_worker_id = 0xFFFFFFFFu;

/// Returns pull requests for every variable shard s holds, each carrying at most max_floats
/// values (variables larger than that are split into several ranges).
std::vector<pull_request> pull_requests_for(const placement_plan& plan, uint32_t shard,
                                            uint32_t worker, uint32_t max_floats);

/// Copies the slices of a pull reply into values (one vector per variable, sized by the plan).
/// Fails with protocol_error for a slice outside its variable.
caf::error scatter_slices(const pull_reply& reply, std::vector<std::vector<float>>& values);

/// Fills count floats at dst with variable var's gradient from offset on.
using gradient_source = std::function<caf::error(uint32_t var, uint32_t offset, uint32_t count, float* dst)>;

/// Returns push requests carrying the gradients of every variable shard s holds, each with at
/// most max_floats values, filled by `fill`; the first error of `fill` is returned instead.
caf::expected<std::vector<push_request>> push_requests_for(const placement_plan& plan, uint32_t shard,
                                                           uint32_t worker, uint64_t step,
                                                           uint32_t max_floats, const gradient_source& fill);

} // namespace actorps
