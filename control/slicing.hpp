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

/// Returns the ranges of shard s's variable parts that a worker holds: every part whole, or in
/// model-parallel mode slice k of K's columns of each (one range per row of a weight matrix,
/// one for a bias; columns as model/column_split.hpp divides them). Offsets are those of the
/// whole variable: a part of rows [r, r + n) is the range [r * cols, (r + n) * cols).
std::vector<slice_ref> held_ranges(const placement_plan& plan, uint32_t shard, uint32_t slice = 0,
                                   uint32_t slices = 1);

/// Returns pull requests for the ranges `held`, each carrying at most max_floats values (a
/// larger range is split over several requests).
std::vector<pull_request> pull_requests_for(const std::vector<slice_ref>& held, uint32_t worker,
                                            uint32_t max_floats);

/// The ranges the slices cover, in their order: the ranges a push is answered with (row slices
/// are answered with no values, so they have none).
std::vector<slice_ref> ranges_of(const std::vector<variable_slice>& slices);

/// Copies the slices of a pull reply into values (one vector per variable, sized by the plan).
/// Fails with protocol_error for a slice outside its variable.
caf::error scatter_slices(const pull_reply& reply, std::vector<std::vector<float>>& values);

/// Fills count floats at dst with variable var's gradient from offset on.
using gradient_source = std::function<caf::error(uint32_t var, uint32_t offset, uint32_t count, float* dst)>;

/// Returns push requests carrying the gradients of the ranges `held`, each with at most
/// max_floats values, filled by `fill`; the first error of `fill` is returned instead.
caf::expected<std::vector<push_request>> push_requests_for(const std::vector<slice_ref>& held,
                                                           uint32_t worker, uint64_t step,
                                                           uint32_t max_floats, const gradient_source& fill);

} // namespace actorps
