// Validation and updates of a shard's variables.
#include "control/parameter_store.hpp"
#include "control/snapshot_refusals.hpp"

#include "control/placement.hpp"
#include "control/slicing.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "compute/host_ops.hpp"
#include "compute/row_prefetch.hpp"
#include "model/init.hpp"

#include <algorithm>
#include <cmath>

namespace actorps {

caf::expected<optimizer_params> to_optimizer_params(const optimizer_config& cfg) {
  auto kind = parse_optimizer(cfg.kind);
  if (!kind)
    return caf::make_error(errc::invalid_argument, cat("unknown optimizer \"", cfg.kind, "\""));
  auto schedule = parse_schedule(cfg.schedule);
  if (!schedule)
    return caf::make_error(errc::invalid_argument, cat("unknown learning-rate schedule \"", cfg.schedule, "\""));
  optimizer_params p;
  p.kind = *kind;
  p.learning_rate = cfg.learning_rate;
  p.momentum = cfg.momentum;
  p.beta1 = cfg.beta1;
  p.beta2 = cfg.beta2;
  p.epsilon = cfg.epsilon;
  p.decay_rate = cfg.decay_rate;
  p.decay_steps = static_cast<long>(cfg.decay_steps);
  p.rho = cfg.rho;
  p.initial_accumulator = cfg.initial_accumulator;
  p.weight_decay = cfg.weight_decay;
  p.schedule = *schedule;
  p.staircase = cfg.staircase;
  p.boundaries.assign(cfg.boundaries.begin(), cfg.boundaries.end());
  p.values = cfg.values;
  p.cosine_alpha = cfg.cosine_alpha;
  if (auto why = check(p); !why.empty())
    return caf::make_error(errc::invalid_argument, why);
  return p;
}

optimizer_config to_optimizer_config(const optimizer_params& p) {
  optimizer_config c;
  c.kind = to_string(p.kind);
  c.learning_rate = p.learning_rate;
  c.momentum = p.momentum;
  c.beta1 = p.beta1;
  c.beta2 = p.beta2;
  c.epsilon = p.epsilon;
  c.decay_rate = p.decay_rate;
  c.decay_steps = static_cast<int64_t>(p.decay_steps);
  c.rho = p.rho;
  c.initial_accumulator = p.initial_accumulator;
  c.weight_decay = p.weight_decay;
  c.schedule = to_string(p.schedule);
  c.staircase = p.staircase;
  c.boundaries.assign(p.boundaries.begin(), p.boundaries.end());
  c.values = p.values;
  c.cosine_alpha = p.cosine_alpha;
  return c;
}

namespace {

template <class Floats>
bool all_finite(const Floats& xs) {
  return actorps::all_finite(xs.data(), xs.size());
}

// Where each of a slice's rows starts in its part's values (validated: shard_layout::locate_rows).
template <class Part>
std::vector<size_t> row_offsets(const Part& p, const row_ids& rows) {
  std::vector<size_t> at(rows.size());
  for (size_t j = 0; j < rows.size(); ++j)
    at[j] = size_t{rows.ids[j]} * p.cols - p.offset;
  return at;
}

} // namespace

caf::error parameter_store::init(const shard_setup& setup) {
  const auto& plan = setup.plan;
  if (setup.shard >= plan.shards)
    return caf::make_error(errc::invalid_argument, cat("shard ", setup.shard, ": the placement plan has only ",
                                                       plan.shards, " shards"));
  if (auto why = check_parts(plan); !why.empty())
    return caf::make_error(errc::invalid_argument,
                           cat("shard ", setup.shard, ": inconsistent placement plan (", plan.shards, " shards, ",
                               plan.variables.size(), " variables): ", why));
  auto opt = to_optimizer_params(setup.optimizer);
  if (!opt)
    return std::move(opt.error());
  std::vector<std::vector<int>> held(plan.variables.size());
  std::vector<part> parts;
  for (uint32_t i : parts_of(plan, setup.shard)) {
    auto& info = plan.parts[i];
    auto& var = plan.variables[info.variable];
    held[info.variable].push_back(static_cast<int>(parts.size()));
    part v;
    v.index = info.variable;
    v.offset = part_offset(plan, info);
    v.name = part_name(plan, i);
    v.cols = static_cast<uint32_t>(var.cols);
    v.table = var.table;
    v.values.assign(part_floats(plan, info), 0.0f);
    v.optimizer = for_variable(*opt, var.name, var.moving_decay);
    parts.push_back(std::move(v));
  }
  // Returns the part a setup slice fills: held here, starting where the part starts.
  auto part_for = [&](const variable_slice& slice) -> part* {
    if (slice.variable >= held.size())
      return nullptr;
    for (int pos : held[slice.variable])
      if (parts[pos].offset == slice.offset)
        return &parts[pos];
    return nullptr;
  };
  std::vector<bool> seen(parts.size(), false);
  for (auto& slice : setup.initial) {
    auto* v = part_for(slice);
    if (v == nullptr)
      return caf::make_error(errc::unknown_variable, cat("shard ", setup.shard, ": initial value for variable ",
                                                         slice.variable, " at offset ", slice.offset,
                                                         ", which this shard does not hold"));
    if (slice.data.values.size() != v->values.size())
      return caf::make_error(errc::shape_mismatch, cat("shard ", setup.shard, ": initial value of ", v->name,
                                                       " has ", slice.data.values.size(), " floats, expected ",
                                                       v->values.size()));
    if (!all_finite(slice.data.values))
      return caf::make_error(errc::non_finite, cat("shard ", setup.shard, ": initial value of ", v->name,
                                                   " is not finite"));
    v->values.assign(slice.data.values.begin(), slice.data.values.end());
    seen[v - parts.data()] = true;
  }
  for (size_t i = 0; i < parts.size(); ++i) {
    auto& p = parts[i];
    const bool generated = std::find(setup.generated.begin(), setup.generated.end(), p.index) != setup.generated.end();
    if (seen[i] || !generated || !plan.variables[p.index].table)
      continue;
    const uint32_t begin = p.offset / p.cols, rows = static_cast<uint32_t>(p.values.size() / p.cols);
    const uint32_t first = table_row(plan, p.index, begin), stride = row_stride(plan, p.index);
    // (each row from its own stream: any split, and any number of threads, makes the same rows)
    table_rows_initial(setup.table_seed, first, stride, rows, static_cast<int>(p.cols), p.values.data());
    seen[i] = true;
  }
  for (size_t i = 0; i < parts.size() && !setup.pieces; ++i) // (pieces: they bring the values)
    if (!seen[i])
      return caf::make_error(errc::invalid_argument, cat("shard ", setup.shard, ": no initial value for ",
                                                         parts[i].name));
  const int slots = slot_count(opt->kind);
  for (auto& v : parts) {
    if (slots > 0)
      v.slot0.assign(v.values.size(), slot_initial_value(*opt, 0));
    if (slots > 1)
      v.slot1.assign(v.values.size(), slot_initial_value(*opt, 1));
  }
  // restored optimizer state (a checkpoint): whole parts, finite, held here
  for (auto [slices, which] : {std::pair{&setup.slot0, 0}, std::pair{&setup.slot1, 1}})
    for (auto& slice : *slices) {
      auto* v = part_for(slice);
      auto* dst = v == nullptr ? nullptr : which == 0 ? &v->slot0 : &v->slot1;
      if (dst == nullptr || slice.data.values.size() != dst->size())
        return caf::make_error(errc::shape_mismatch, cat("shard ", setup.shard, ": restored optimizer slot ", which,
                                                         " of variable ", slice.variable, " at offset ", slice.offset,
                                                         " does not fit"));
      if (!all_finite(slice.data.values))
        return caf::make_error(errc::non_finite, cat("shard ", setup.shard, ": restored optimizer slot ", which,
                                                     " of variable ", slice.variable, " is not finite"));
      dst->assign(slice.data.values.begin(), slice.data.values.end());
    }
  shard_ = setup.shard;
  scope_ = plan.scope;
  workers_ = setup.workers;
  pushers_ = setup.session.mode == session_kind::in_graph ? pushers::chief : pushers::workers;
  mode_ = setup.session.mode;
  optimizer_ = *opt;
  layout_ = shard_layout{plan, setup.shard};
  parts_ = std::move(parts);
  held_.end(); // (a snapshot of the values before: gone with them)
  version_ = setup.version;
  filled_.assign(setup.pieces ? parts_.size() : 0, {0, 0, 0});
  phase_ = setup.pieces ? phase::filling : phase::ready;
  return caf::none;
}

caf::error parameter_store::fill(const setup_piece& piece) {
  if (phase_ != phase::filling)
    return caf::make_error(errc::not_initialized, cat("shard ", shard_, ": a restore piece without a setup that announced pieces"));
  if (piece.last) {
    for (size_t i = 0; i < parts_.size(); ++i) {
      auto& p = parts_[i];
      const size_t sizes[3] = {p.values.size(), p.slot0.size(), p.slot1.size()};
      for (int which = 0; which < 3; ++which)
        if (filled_[i][which] != sizes[which] && (which == 0 || filled_[i][which] != 0))
          return caf::make_error(errc::shape_mismatch, cat("shard ", shard_, ": the restore ended with ", filled_[i][which],
                                                           " of ", sizes[which], which == 0 ? " values" : " slot values",
                                                           " of ", p.name));
    }
    filled_.clear();
    phase_ = phase::ready;
    return caf::none;
  }
  const auto& s = piece.slice;
  auto at = locate(s.variable, s.offset, s.data.values.size());
  if (!at)
    return std::move(at.error());
  auto& p = parts_[*at];
  auto* array = piece.which == 0 ? &p.values : piece.which == 1 ? &p.slot0 : piece.which == 2 ? &p.slot1 : nullptr;
  auto& done = filled_[*at];
  if (array == nullptr || s.by_rows() || s.offset - p.offset != done[piece.which] || array->size() < done[piece.which] + s.data.values.size())
    return caf::make_error(errc::shape_mismatch, cat("shard ", shard_, ": a restore piece of ", p.name, " (array ", piece.which,
                                                     ", at ", s.offset, ", ", s.data.values.size(), " values) out of place",
                                                     " or order: ", array == nullptr ? 0 : done[piece.which % 3],
                                                     " of its values came before"));
  if (!all_finite(s.data.values))
    return caf::make_error(errc::non_finite, cat("shard ", shard_, ": a restore piece of ", p.name, " is not finite"));
  std::copy(s.data.values.begin(), s.data.values.end(), array->begin() + static_cast<std::ptrdiff_t>(done[piece.which]));
  done[piece.which] += s.data.values.size();
  return caf::none;
}

caf::expected<size_t> parameter_store::locate(uint32_t var, uint32_t offset, size_t count) const {
  return layout_.locate(var, offset, count);
}

caf::expected<size_t> parameter_store::locate(const slice_ref& r) const {
  return r.by_rows() ? layout_.locate_rows(r.variable, r.offset, r.rows, r.count) : locate(r.variable, r.offset, r.count);
}

caf::error parameter_store::check_worker(uint32_t worker, bool chief_allowed) const {
  if (phase_ != phase::ready)
    return caf::make_error(errc::not_initialized, cat("shard ", shard_, phase_ == phase::filling ? " is being restored"
                                                                                                : " is not initialised yet"));
  if (worker == chief_worker_id && chief_allowed) // the chief pulls to evaluate
    return caf::none;
  if (worker >= workers_)
    return caf::make_error(errc::unknown_worker, cat("shard ", shard_, ": worker ", worker,
                                                     " is not in the cluster (", workers_, " workers)"));
  return caf::none;
}

caf::error parameter_store::check_pusher(uint32_t worker) const {
  if (pushers_ == pushers::workers) // (also before the setup: check_worker says not_initialized)
    return check_worker(worker, false);
  if (worker != chief_worker_id)
    return caf::make_error(errc::protocol_error, cat("shard ", shard_, ": worker ", worker,
                                                     " pushed to an in-graph session, where only the chief pushes"));
  return caf::none;
}

caf::error parameter_store::check_scope(const std::string& scope) const {
  if (phase_ != phase::ready || scope == scope_)
    return caf::none;
  return caf::make_error(errc::unknown_scope, cat("shard ", shard_, " holds scope \"", scope_, "\", not \"", scope, "\""));
}

caf::expected<pull_reply> parameter_store::pull(const pull_request& req, std::vector<store_view>* in_place) {
  if (auto err = check_scope(req.scope))
    return err;
  const bool remembered = req.keep_view && req.worker != chief_worker_id; // (value-compression: copies, kept)
  auto out = read(req, remembered ? nullptr : in_place);
  if (out && remembered)
    for (auto& s : out->slices)
      views_.record(req.worker, s.variable, s.offset, s.data.values.data(), s.data.values.size());
  return out;
}

caf::expected<std::vector<size_t>> parameter_store::check_read(const pull_request& req) const {
  if (auto err = check_worker(req.worker, true))
    return err;
  std::vector<size_t> at; // the part of each range
  at.reserve(req.ranges.size());
  for (auto& r : req.ranges) {
    auto pos = locate(r);
    if (!pos)
      return std::move(pos.error());
    at.push_back(*pos);
  }
  if (auto err = layout_.check_pull(req.worker, req.ranges)) // (each range is fine: is the sum?)
    return err;
  return at;
}

caf::error parameter_store::check_reads(const push_request& req) const {
  if (auto err = layout_.check_push_form(req))
    return err;
  auto at = layout_.check_reads(req.worker, req.reads);
  return at ? caf::none : std::move(at.error());
}

caf::expected<pull_reply> parameter_store::read(const pull_request& req, std::vector<store_view>* in_place) const {
  auto checked = check_read(req);
  if (!checked)
    return std::move(checked.error());
  pull_reply out;
  out.version = version_;
  gather(req.ranges, *checked, out.slices, in_place);
  return out;
}

void store_view::copy_to(float* out) const {
  if (rows.empty())
    return round_copy(precision, data, floats, out);
  gather_rows(data, cols, rows.data(), rows.size(), out);
  round_to_precision(precision, out, floats);
}

namespace {

// Appends the n values of a range to out: left in place where `in_place` is given (the slice
// empty, a view of it listed), else copied at precision p.
void add_values(std::vector<variable_slice>& out, std::vector<store_view>* in_place, uint32_t variable,
                uint32_t offset, const float* values, size_t n, wire_precision p = wire_precision::fp32) {
  if (in_place) {
    in_place->push_back({out.size(), values, n, p});
    out.push_back({variable, offset, {}});
    out.back().data.precision = p;
  } else {
    out.push_back({variable, offset, tensor_copy(values, n, p)});
  }
}

} // namespace

void parameter_store::gather(const std::vector<slice_ref>& ranges, const std::vector<size_t>& at,
                             std::vector<variable_slice>& out, std::vector<store_view>* in_place) const {
  out.reserve(out.size() + ranges.size());
  for (size_t i = 0; i < ranges.size(); ++i) {
    auto& r = ranges[i];
    auto& p = parts_[at[i]];
    if (!r.by_rows()) {
      add_values(out, in_place, r.variable, r.offset, p.values.data() + (r.offset - p.offset), r.count);
      continue;
    }
    if (in_place) { // (gathered where the reply's values are copied: into a same-host worker's heap)
      in_place->push_back({out.size(), p.values.data(), r.count, wire_precision::fp32, row_offsets(p, r.rows), p.cols});
      out.push_back({r.variable, r.offset, {}, false, r.rows});
      continue;
    }
    float_vector rows(r.count);
    const auto from = row_offsets(p, r.rows);
    gather_rows(p.values.data(), p.cols, from.data(), from.size(), rows.data());
    out.push_back({r.variable, r.offset, {std::move(rows)}, false, r.rows});
  }
}

caf::expected<push_reply> parameter_store::push(const push_request& req, std::vector<store_view>* in_place,
                                                const gradient_spans* values) {
  if (auto err = check_pusher(req.worker))
    return err;
  if (auto err = check_scope(req.scope))
    return err;
  if (auto err = layout_.check_push_form(req))
    return err;
  if (values != nullptr && values->size() != req.grads.size())
    return caf::make_error(errc::protocol_error, cat("worker ", req.worker, "'s push names ", req.grads.size(),
                                                     " slices and gives the values of ", values->size()));
  auto checked = layout_.check_gradients(req.worker, req.grads, values); // the part of each gradient slice
  if (!checked)
    return std::move(checked.error());
  const auto& at = *checked;
  // The rows of the worker's next batch it asks back: the part of each (checked before anything applies)
  std::vector<size_t> reads_at;
  if (!req.reads.empty()) {
    auto reads = layout_.check_reads(req.worker, req.reads);
    if (!reads)
      return std::move(reads.error());
    reads_at = std::move(*reads);
  }
  // A sync shard's version is the steps applied: one set up from a checkpoint behind the cluster
  // (its aggregator caught up with the step) takes the step's count, as the other shards have.
  const uint64_t next = mode_ == session_kind::sync ? std::max<uint64_t>(version_ + 1, req.step + 1) : version_ + 1;
  const long t = static_cast<long>(next);
  for (size_t i = 0; i < req.grads.size(); ++i) {
    auto& g = req.grads[i];
    const auto grad = gradient_of(g, values, i);
    auto& v = parts_[at[i]];
    float* slot0 = v.slot0.empty() ? nullptr : v.slot0.data();
    float* slot1 = v.slot1.empty() ? nullptr : v.slot1.data();
    if (!g.by_rows()) {
      const size_t from = g.offset - v.offset;
      keep_held(at[i], {from}, grad.size);
      apply_update_host(v.optimizer, t, grad.size, v.values.data() + from, grad.data,
                        slot0 ? slot0 + from : nullptr, slot1 ? slot1 + from : nullptr);
      continue;
    }
    const auto rows_at = row_offsets(v, g.rows); // (only these rows and their slots move: TF's sparse apply)
    keep_held(at[i], rows_at, v.cols);
    apply_rows_host(v.optimizer, t, v.cols, rows_at.data(), rows_at.size(), v.values.data(), grad.data, slot0, slot1);
  }
  if (req.part + 1 == req.parts) { // a step in parts counts once, at its last part
    if (lag_histogram_.empty())
      lag_histogram_.assign(lag_buckets, 0);
    uint64_t lag = version_ >= req.base_version ? version_ - req.base_version : 0;
    ++lag_histogram_[std::min<uint64_t>(lag, lag_buckets - 1)];
    version_ = next;
  }
  auto out = push_reply::applied(version_, req.step + 1);
  // (values left in place are rounded where they are copied out; top-k's are picked from copies)
  const bool viewed = in_place && req.reply_topk <= 0.0;
  const auto copied_at = req.reply_topk > 0.0 ? wire_precision::fp32 : req.reply_precision;
  if (req.return_values)
    for (size_t i = 0; i < req.grads.size(); ++i) {
      auto& g = req.grads[i];
      if (g.by_rows()) // (the worker's next batch names other rows: it pulls them)
        continue;
      auto& p = parts_[at[i]];
      add_values(out.values, viewed ? in_place : nullptr, g.variable, g.offset, p.values.data() + (g.offset - p.offset),
                 gradient_of(g, values, i).size, copied_at);
    }
  if (req.reply_topk > 0.0)
    for (auto& slice : out.values)
      views_.encode(req.worker, slice, req.reply_topk, req.reply_precision);
  // The rows asked back: at fp32, as a pull's rows, after this update, so they hold it (left in
  // place where the values are: gathered where they are copied out)
  gather(req.reads, reads_at, out.values, in_place);
  return out;
}

shard_stats parameter_store::stats() const {
  shard_stats out;
  out.version = version_;
  out.lag_histogram = lag_histogram_;
  return out;
}

caf::expected<std::vector<variable_slice>> parameter_store::values_of(const std::vector<slice_ref>& ranges) const {
  auto reply = read(pull_request::of(chief_worker_id, ranges));
  if (!reply)
    return std::move(reply.error());
  return std::move(reply->slices);
}

std::string parameter_store::describe() const {
  std::string names;
  size_t bytes = 0;
  for (auto& v : parts_) {
    names += (names.empty() ? "" : ", ") + v.name;
    bytes += v.values.size() * sizeof(float);
  }
  return cat("holds ", parts_.size(), " variables (", bytes, " bytes): ", names,
             "; optimizer ", to_string(optimizer_.kind), " lr ", optimizer_.learning_rate);
}

void parameter_store::keep_held(size_t p, const std::vector<size_t>& from, size_t n) {
  if (!held_.holding())
    return;
  auto& v = parts_[p];
  const std::array<const store_floats*, 3> arrays{&v.values, &v.slot0, &v.slot1};
  for (size_t a = 0; a < arrays.size(); ++a)
    if (!arrays[a]->empty())
      for (size_t at : from)
        held_.before_write(p, a, arrays[a]->data(), at, n);
}

namespace {

// The ranges a snapshot_piece names: each part's array that is not empty.
template <class Parts, class Array>
std::vector<slice_ref> held_ranges(const Parts& parts, Array array) {
  std::vector<slice_ref> out;
  for (auto& v : parts)
    if (!(v.*array).empty())
      out.push_back({v.index, v.offset, static_cast<uint32_t>((v.*array).size())});
  return out;
}

} // namespace

caf::expected<snapshot_piece> parameter_store::hold(uint64_t id) {
  if (phase_ != phase::ready)
    return caf::make_error(errc::not_initialized, cat("shard ", shard_, ": nothing to save before the setup"));
  std::vector<snapshot_overlay::part_shape> shapes;
  for (auto& v : parts_) {
    const size_t block = v.table ? v.cols : held_block_floats; // (a table's rows are written one by one)
    shapes.push_back({{{v.values.size(), block}, {v.slot0.size(), block}, {v.slot1.size(), block}}});
  }
  held_.begin(id, shapes);
  held_version_ = version_;
  snapshot_piece out;
  out.version = version_;
  out.values = held_ranges(parts_, &part::values);
  out.slot0 = held_ranges(parts_, &part::slot0);
  out.slot1 = held_ranges(parts_, &part::slot1);
  return out;
}

caf::expected<snapshot_piece> parameter_store::read_held(uint64_t id, uint32_t which, const slice_ref& range) const {
  if (!held_.holding(id))
    return snapshot_not_kept(id);
  if (which > 2)
    return snapshot_slot_unknown(which);
  for (size_t p = 0; p < parts_.size(); ++p) {
    auto& v = parts_[p];
    const auto& array = which == 0 ? v.values : which == 1 ? v.slot0 : v.slot1;
    if (array.empty() || v.index != range.variable || range.by_rows() || range.offset < v.offset
        || size_t{range.offset} + range.count > size_t{v.offset} + array.size())
      continue;
    float_vector values(range.count);
    held_.read(p, which, array.data(), range.offset - v.offset, range.count, values.data());
    snapshot_piece out;
    out.version = held_version_;
    out.piece = {range.variable, range.offset, {std::move(values)}};
    return out;
  }
  return snapshot_range_not_held(which, range);
}

void parameter_store::drop_held(uint64_t id) {
  if (held_.holding(id))
    held_.end();
}

caf::expected<shard_snapshot> parameter_store::snapshot() const {
  if (phase_ != phase::ready)
    return caf::make_error(errc::not_initialized, cat("shard ", shard_, ": nothing to save before the setup"));
  shard_snapshot out;
  out.version = version_;
  for (auto& v : parts_) {
    out.values.push_back({v.index, v.offset, tensor_copy(v.values.data(), v.values.size())});
    if (!v.slot0.empty())
      out.slot0.push_back({v.index, v.offset, tensor_copy(v.slot0.data(), v.slot0.size())});
    if (!v.slot1.empty())
      out.slot1.push_back({v.index, v.offset, tensor_copy(v.slot1.data(), v.slot1.size())});
  }
  return out;
}

} // namespace actorps
