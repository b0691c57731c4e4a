// Slot allocation and update dispatch of the optimizer.
#include "model/optimizer.hpp"

#include <algorithm>

namespace actorps {

caf::expected<optimizer> optimizer::make(backend& be, const optimizer_params& params,
                                         const std::vector<variable_spec>& variables) {
  optimizer out{be, params};
  const int per_var = slot_count(params.kind);
  for (auto& var : variables) {
    out.per_variable_.push_back(for_variable(params, var.name, var.moving_decay));
    out.cols_.push_back(static_cast<size_t>(var.cols));
    for (int s = 0; s < per_var; ++s) {
      auto slot = be.allocate(var.size());
      if (!slot)
        return std::move(slot.error());
      if (float start = slot_initial_value(params, s); start != 0.0f) { // (Adagrad's accumulator)
        // uploaded a block at a time: an embedding table's slot as one host copy was 512 MiB
        // more at a 2^22 x 32 table's peak
        const std::vector<float> block(std::min<size_t>(var.size(), size_t{1} << 16), start);
        for (size_t at = 0; at < var.size(); at += block.size())
          be.upload(block.data(), std::min(block.size(), var.size() - at), slot->data() + at);
      }
      out.slots_.push_back(std::move(*slot));
    }
  }
  return out;
}

void optimizer::apply(std::vector<buffer>& variables, const std::vector<buffer>& gradients,
                      const std::vector<const std::vector<size_t>*>& rows) {
  ++step_;
  const size_t per_var = static_cast<size_t>(slot_count(params_.kind));
  for (size_t i = 0; i < variables.size(); ++i) {
    float* slot0 = per_var > 0 ? slots_[i * per_var].data() : nullptr;
    float* slot1 = per_var > 1 ? slots_[i * per_var + 1].data() : nullptr;
    const std::vector<size_t>* sparse = i < rows.size() ? rows[i] : nullptr;
    if (sparse == nullptr) {
      be_->apply_update(per_variable_[i], step_, variables[i].size(), variables[i].data(), gradients[i].data(), slot0,
                        slot1);
      continue;
    }
    const size_t n = cols_[i];
    row_offsets_.resize(sparse->size()); // (row j of the gradient is the table's row (*sparse)[j])
    for (size_t j = 0; j < sparse->size(); ++j)
      row_offsets_[j] = (*sparse)[j] * n;
    be_->apply_update_rows(per_variable_[i], step_, n, row_offsets_.data(), row_offsets_.size(), variables[i].data(),
                           gradients[i].data(), slot0, slot1);
  }
}

} // namespace actorps
