// A shard's held ranges and the checks of a message's ranges against them.
#include "control/shard_layout.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/host_ops.hpp"
#include "control/placement.hpp"

namespace actorps {

shard_layout::shard_layout(const placement_plan& plan, uint32_t shard)
  : shard_(shard), held_(plan.variables.size()) {
  for (uint32_t i : parts_of(plan, shard)) {
    auto& info = plan.parts[i];
    held_[info.variable].push_back(parts_.size());
    auto& var = plan.variables[info.variable];
    parts_.push_back({part_offset(plan, info), part_floats(plan, info), part_name(plan, i),
                      static_cast<uint32_t>(info.row_begin), static_cast<uint32_t>(info.rows),
                      static_cast<uint32_t>(var.cols), var.table});
    floats_ += parts_.back().floats;
  }
}

caf::expected<size_t> shard_layout::locate(uint32_t var, uint32_t offset, size_t count) const {
  if (var >= held_.size() || held_[var].empty())
    return caf::make_error(errc::unknown_variable, cat("shard ", shard_, " does not hold variable ", var));
  for (size_t pos : held_[var]) {
    auto& p = parts_[pos];
    if (offset >= p.offset && static_cast<size_t>(offset - p.offset) + count <= p.floats)
      return pos;
  }
  std::string mine;
  for (size_t pos : held_[var])
    mine += cat(mine.empty() ? "" : ", ", "[", parts_[pos].offset, ", ", parts_[pos].offset + parts_[pos].floats, ")");
  return caf::make_error(errc::shape_mismatch, cat("shard ", shard_, ": ", parts_[held_[var][0]].name, " range [",
                                                   offset, ", ", static_cast<size_t>(offset) + count,
                                                   ") is outside the values held here: ", mine));
}

caf::expected<size_t> shard_layout::locate_rows(uint32_t var, uint32_t offset, const row_ids& rows,
                                               size_t values) const {
  if (var >= held_.size() || held_[var].empty())
    return caf::make_error(errc::unknown_variable, cat("shard ", shard_, " does not hold variable ", var));
  for (size_t pos : held_[var]) {
    auto& p = parts_[pos];
    if (p.offset != offset)
      continue;
    if (!p.table)
      return caf::make_error(errc::protocol_error, cat("shard ", shard_, ": ", p.name,
                                                       " is not an embedding table; it is read and written by ranges"));
    if (values != rows.size() * p.cols)
      return caf::make_error(errc::shape_mismatch, cat("shard ", shard_, ": ", rows.size(), " rows of ", p.name,
                                                       " with ", values, " values (", p.cols, " per row)"));
    for (uint32_t r : rows.ids)
      if (r < p.row_begin || r - p.row_begin >= p.rows)
        return caf::make_error(errc::shape_mismatch, cat("shard ", shard_, ": row ", r, " is outside ", p.name,
                                                         " (rows [", p.row_begin, ", ", p.row_begin + p.rows, "))"));
    return pos;
  }
  return caf::make_error(errc::shape_mismatch, cat("shard ", shard_, ": no part of ", parts_[held_[var][0]].name,
                                                   " starts at offset ", offset));
}

caf::expected<std::vector<size_t>> shard_layout::check_gradients(uint32_t worker,
                                                                 const std::vector<variable_slice>& grads,
                                                                 const gradient_spans* values) const {
  std::vector<size_t> at;
  at.reserve(grads.size());
  for (size_t i = 0; i < grads.size(); ++i) {
    auto& g = grads[i];
    const auto v = gradient_of(g, values, i);
    auto pos = g.by_rows() ? locate_rows(g.variable, g.offset, g.rows, v.size) : locate(g.variable, g.offset, v.size);
    if (!pos)
      return std::move(pos.error());
    if (!all_finite(v.data, v.size))
      return caf::make_error(errc::non_finite, cat("shard ", shard_, ": gradient of ", parts_[*pos].name,
                                                   " from worker ", worker, " is not finite"));
    at.push_back(*pos);
  }
  return at;
}

caf::error shard_layout::check_pull(uint32_t worker, const std::vector<slice_ref>& ranges) const {
  size_t asked = 0;
  for (auto& r : ranges)
    asked += r.count;
  if (asked > floats_)
    return caf::make_error(errc::invalid_argument, cat("shard ", shard_, ": worker ", worker, " asks for ", asked,
                                                       " floats in one pull; the shard holds ", floats_));
  return caf::none;
}

caf::expected<std::vector<size_t>> shard_layout::check_reads(uint32_t worker, const std::vector<slice_ref>& reads) const {
  std::vector<size_t> at;
  at.reserve(reads.size());
  for (auto& r : reads) {
    if (!r.by_rows())
      return caf::make_error(errc::protocol_error, cat("worker ", worker, "'s push asks back a range that names no rows "
                                                       "(a push's reads are a table's rows)"));
    auto pos = locate_rows(r.variable, r.offset, r.rows, r.count);
    if (!pos)
      return std::move(pos.error());
    at.push_back(*pos);
  }
  if (auto err = check_pull(worker, reads))
    return err;
  return at;
}

caf::error shard_layout::check_push_form(const push_request& req) const {
  if (req.parts == 0 || req.part >= req.parts)
    return caf::make_error(errc::protocol_error, cat("shard ", shard_, ": worker ", req.worker, " pushed part ",
                                                     req.part, " of ", req.parts));
  auto precision = static_cast<unsigned>(req.reply_precision);
  if (precision > static_cast<unsigned>(wire_precision::fp16))
    return caf::make_error(errc::protocol_error, cat("shard ", shard_, ": worker ", req.worker,
                                                     " asked for reply precision ", precision,
                                                     " (0 fp32, 1 bf16, 2 fp16)"));
  if (!req.reads.empty() && req.part + 1 < req.parts) // (ssp answers an earlier part at once, before any wait)
    return caf::make_error(errc::protocol_error, cat("shard ", shard_, ": worker ", req.worker, " asks rows back with part ",
                                                     req.part, " of ", req.parts, "; they ride a push's last part"));
  if (!(req.reply_topk >= 0.0 && req.reply_topk <= 1.0)) // (NaN fails both)
    return caf::make_error(errc::invalid_argument, cat("shard ", shard_, ": worker ", req.worker,
                                                       " asked for a top-k share of ", req.reply_topk,
                                                       " of the values (0 to 1)"));
  return caf::none;
}

} // namespace actorps
