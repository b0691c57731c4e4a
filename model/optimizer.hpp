// An optimizer's slots for a list of variables in backend memory, applying updates on the backend.
#pragma once

#include "compute/backend.hpp"
#include "compute/optimizer_rules.hpp"
#include "model/variable_spec.hpp"

#include <caf/expected.hpp>

#include <vector>

namespace actorps {

/// Threading: used by the thread that owns its backend.
class optimizer {
public:
  /// Allocates the slots of the given variables at their initial values (slot_initial_value);
  /// weight decay applies to the variables decays() names.
  static caf::expected<optimizer> make(backend& be, const optimizer_params& params,
                                       const std::vector<variable_spec>& variables);

  const optimizer_params& params() const { return params_; }

  /// Returns how many updates were applied so far.
  long steps() const { return step_; }

  /// Applies one update: variable i -= rule(gradient i). REQUIRES: the sizes given to make().
  /// With rows[i] (an embedding table's, network::sparse_rows): gradient i holds those rows
  /// alone, in that order, and only they move in variable i and its slots, as TF's sparse apply
  /// does (momentum decays lazily, when a row is touched).
  void apply(std::vector<buffer>& variables, const std::vector<buffer>& gradients,
             const std::vector<const std::vector<size_t>*>& rows = {});

private:
  optimizer(backend& be, const optimizer_params& params) : be_(&be), params_(params) {}
  std::vector<size_t> cols_; // per variable: its row length (sparse rows)
  std::vector<size_t> row_offsets_; // a sparse update's rows as offsets into the table (kept between steps)

  backend* be_;
  optimizer_params params_;
  long step_ = 0;
  std::vector<optimizer_params> per_variable_; // params with each variable's weight decay
  std::vector<buffer> slots_; // slot_count(kind) per variable, variable-major
};

} // namespace actorps
