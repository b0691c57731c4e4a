// Converting between shard snapshots and checkpoints: what a checkpoint's files hold and where
// each piece of them is read, and a checkpoint cut into the setups that restore each shard.
#include "actors/chief_checkpoints.hpp"

#include <cstdio>

#include "control/parameter_store.hpp"
#include "control/placement.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"
#include "saved_model/saved_model.hpp"

#include <algorithm>

namespace actorps {

std::vector<checkpoint_variable> checkpoint_variables(const placement_plan& plan) {
  std::vector<checkpoint_variable> out;
  for (uint32_t k = 0; k < plan.variables.size(); ++k)
    out.push_back({plan.variables[k].name, plan.variables[k].rows, plan.variables[k].cols, home_shard(plan, k)});
  return out;
}

namespace {

// Reads into `to` the part of array `a` (the whole variable k, in row order, in file `file`) that
// shard parts hold from stored row `begin` for `rows` rows: one read, or (a table whose parts
// hold every stride-th row) windows of rows of at most 16 MiB, each part row picked from them.
caf::error read_part(const placement_plan& plan, uint32_t k, const std::string& file, const shard_file_index::array& a,
                     uint32_t begin, uint32_t rows, float* to) {
  const auto cols = static_cast<size_t>(plan.variables[k].cols);
  if (!rows_permuted(plan, k))
    return read_floats(file, a.offset + uint64_t{begin} * cols * sizeof(float), to, size_t{rows} * cols);
  const size_t first = table_row(plan, k, begin), stride = row_stride(plan, k);
  const size_t per = std::max<size_t>(1, (size_t{1} << 22) / (stride * cols)); // part rows per window
  std::vector<float> window;
  for (size_t j = 0; j < rows; j += per) {
    const size_t n = std::min<size_t>(per, rows - j), top = first + j * stride; // (table rows top, top + stride, ...)
    window.resize(((n - 1) * stride + 1) * cols);
    if (auto err = read_floats(file, a.offset + top * cols * sizeof(float), window.data(), window.size()))
      return err;
    for (size_t i = 0; i < n; ++i)
      std::copy(window.data() + i * stride * cols, window.data() + (i * stride + 1) * cols, to + (j + i) * cols);
  }
  return caf::none;
}

} // namespace

checkpoint_manifest checkpoint_manifest_for(const placement_plan& plan, const model_spec& spec,
                                            const optimizer_params& shard_opt, const train_settings& train,
                                            const run_settings& cluster, const run_position& at,
                                            const data_splits& data) {
  checkpoint_manifest m;
  record_scaling(data.scaling, m);
  m.class_names = data.class_names; // (what the model tools show)
  m.global_step = at.global_step;
  m.examples = at.examples;
  m.train_seconds = at.train_seconds;
  m.validation_accuracy = at.validation_accuracy;
  m.members = at.members;
  m.data_plan = at.data_plan;
  m.model = spec.text();
  m.placement = plan.strategy;
  m.variables = checkpoint_variables(plan);
  auto o = to_optimizer_config(shard_opt);
  m.optimizer = {o.kind, o.learning_rate, o.momentum, o.beta1, o.beta2, o.epsilon, o.decay_rate, o.decay_steps};
  m.mode = to_string(cluster.mode);
  m.batch_size = train.batch_size;
  m.seed = train.seed;
  m.workers = static_cast<uint32_t>(cluster.workers.size());
  m.partitioner = plan.partitioner;
  return m;
}

checkpoint_reads::checkpoint_reads(const placement_plan& plan, uint64_t id, const std::vector<snapshot_piece>& layouts,
                                   size_t chunk_floats)
  : id_(id) {
  auto has_slot = [&](uint32_t k, std::vector<slice_ref> snapshot_piece::*slot) {
    for (auto& layout : layouts)
      for (auto& r : layout.*slot)
        if (r.variable == k)
          return true;
    return false;
  };
  for (uint32_t k = 0; k < plan.variables.size(); ++k)
    sweeps_.emplace_back(plan, k, chunk_floats);
  for (uint32_t s = 0; s < layouts.size(); ++s) {
    file f;
    f.shard = s;
    f.version = layouts[s].version;
    for (uint32_t k = 0; k < plan.variables.size(); ++k) {
      if (home_shard(plan, k) != s)
        continue;
      const size_t n = static_cast<size_t>(plan.variables[k].rows) * static_cast<size_t>(plan.variables[k].cols);
      f.entries.push_back({k, n, has_slot(k, &snapshot_piece::slot0) ? n : 0, has_slot(k, &snapshot_piece::slot1) ? n : 0});
      const auto& e = f.entries.back();
      for (uint32_t which = 0; which < 3; ++which)
        if ((which == 0 ? e.values : which == 1 ? e.slot0 : e.slot1) > 0)
          for (size_t i = 0; i < sweeps_[k].chunks(); ++i)
            steps_.push_back({s, static_cast<uint32_t>(f.entries.size() - 1), k, which, i});
    }
    files_.push_back(std::move(f));
  }
}

size_t checkpoint_reads::floats(const step& st) const {
  return sweeps_[st.variable].rows_of(st.chunk) * sweeps_[st.variable].cols();
}

size_t checkpoint_reads::offset(const step& st) const {
  return sweeps_[st.variable].first_row(st.chunk) * sweeps_[st.variable].cols();
}

std::vector<std::pair<uint32_t, snapshot_read>> checkpoint_reads::reads(const step& st) const {
  std::vector<std::pair<uint32_t, snapshot_read>> out;
  for (auto& [shard, range] : sweeps_[st.variable].reads(st.chunk))
    out.push_back({shard, snapshot_read{snapshot_op::read, id_, st.which, range}});
  return out;
}

caf::error checkpoint_reads::place(const step& st, const variable_slice& got, float* chunk) const {
  return sweeps_[st.variable].place(st.chunk, got, chunk);
}

caf::error check_same_placement(const checkpoint_manifest& m, const placement_plan& plan, const std::string& path) {
  if (m.files.size() != plan.shards || m.variables != checkpoint_variables(plan) || m.partitioner != plan.partitioner)
    return caf::make_error(errc::invalid_config,
                           cat("the checkpoint", path.empty() ? "" : " " + path, " places its variables on ",
                               m.files.size(), " shards (placement ", m.placement, ", partitioner ", m.partitioner,
                               ") differently from this run (", plan.shards, " shards, placement ", plan.strategy,
                               ", partitioner ", plan.partitioner,
                               "): restore with the same cluster.ps, cluster.placement and cluster.partitioner"));
  return caf::none;
}

restore_pieces::restore_pieces(checkpoint_on_disk c, const placement_plan& plan, uint32_t shard, size_t max_floats)
  : c_(std::move(c)), plan_(plan) {
  for (uint32_t i : parts_of(plan_, shard)) {
    auto& part = plan_.parts[i];
    const uint32_t home = home_shard(plan_, part.variable);
    const shard_file_index::entry* whole = nullptr;
    if (home < c_.files.size())
      for (auto& e : c_.files[home].entries)
        if (e.index == part.variable)
          whole = &e;
    if (whole == nullptr) { // (verify_checkpoint checked the files against the manifest)
      missing_ = plan_.variables[part.variable].name;
      return;
    }
    const size_t cols = static_cast<size_t>(plan_.variables[part.variable].cols);
    const auto window = static_cast<uint32_t>(std::min<size_t>(std::max<size_t>(1, max_floats / cols), UINT32_MAX));
    for (uint32_t which = 0; which < 3; ++which) {
      const auto& array = which == 0 ? whole->values : which == 1 ? whole->slot0 : whole->slot1;
      if (array.count == 0) // (no such slot)
        continue;
      for (uint32_t row = 0; row < static_cast<uint32_t>(part.rows); row += window)
        steps_.push_back({i, which, home, row, std::min<uint32_t>(window, static_cast<uint32_t>(part.rows) - row), array});
    }
  }
}

caf::expected<setup_piece> restore_pieces::piece(size_t i) const {
  if (!missing_.empty())
    return caf::make_error(errc::corrupt_data, cat("the checkpoint ", c_.path, " lacks ", missing_));
  if (i == steps_.size())
    return setup_piece{0, {}, true};
  const auto& st = steps_.at(i);
  const auto& part = plan_.parts[st.part];
  const auto cols = static_cast<size_t>(plan_.variables[part.variable].cols);
  float_vector values(size_t{st.rows} * cols);
  const auto file = c_.path + "/" + c_.manifest.files[st.home].file;
  if (auto err = read_part(plan_, part.variable, file, st.array, static_cast<uint32_t>(part.row_begin) + st.first_row,
                           st.rows, values.data()))
    return err;
  return setup_piece{st.which, {part.variable, part_offset(plan_, part) + st.first_row * static_cast<uint32_t>(cols),
                                {std::move(values)}}, false};
}

caf::error restore_into(const checkpoint_on_disk& c, shard_setup& setup) {
  if (auto err = check_same_placement(c.manifest, setup.plan, c.path))
    return err;
  setup.initial.clear();
  setup.slot0.clear();
  setup.slot1.clear();
  restore_pieces pieces{c, setup.plan, setup.shard, SIZE_MAX}; // (one piece per array: whole parts)
  for (size_t i = 0; i + 1 < pieces.count(); ++i) {
    auto piece = pieces.piece(i);
    if (!piece)
      return std::move(piece.error());
    auto& to = piece->which == 0 ? setup.initial : piece->which == 1 ? setup.slot0 : setup.slot1;
    to.push_back(std::move(piece->slice));
  }
  if (auto last = pieces.piece(pieces.count() - 1); !last) // (a part the checkpoint lacks)
    return std::move(last.error());
  setup.version = c.files[setup.shard].version;
  return caf::none;
}

} // namespace actorps
