// The chief's reads of the model into its evaluation net: every variable, or (an embedding
// table's run, whose net holds the evaluation sets' rows alone) those rows, or the whole model
// without holding the table: read a chunk at a time, each chunk's evaluation rows kept and every
// value written on into the kept models' staged file and the weights digest.
#include "actors/chief_state.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "saved_model/saved_model.hpp"

#include <algorithm>

namespace actorps {

using namespace detail;

namespace {

// Where a whole read's values go, in creation order: the kept models' file and the digest; and
// the evaluation's rows it finds on the way (its own: a read given up may still be sweeping).
struct whole_sink {
  std::unique_ptr<staged_model> staged;
  std::optional<weights_digester> digest;
  std::vector<float> local;

  caf::error put(const float* values, size_t n) {
    if (digest)
      digest->add(values, n);
    return staged ? staged->append(values, n) : caf::none;
  }

  // Variables [from, to) as the net holds them, a piece at a time.
  caf::error put_from(network& net, const std::vector<variable_spec>& vars, size_t from, size_t to) {
    std::vector<float> piece;
    for (size_t k = from; k < to; ++k)
      for (size_t at = 0; at < vars[k].size(); at += piece.size()) {
        piece.resize(std::min<size_t>(vars[k].size() - at, size_t{1} << 20));
        if (auto err = net.download_parameter(k, at, piece.data(), piece.size()))
          return err;
        if (auto err = put(piece.data(), piece.size()))
          return err;
      }
    return caf::none;
  }
};

// The evaluation rows of a chunk of the table (rows [first, first + rows) by table row) into
// local (by local row).
void keep_evaluation_rows(const chief_state::evaluation_rows& eval, size_t cols, size_t first, size_t rows,
                          const float* chunk, float* local) {
  auto at = std::lower_bound(eval.by_row.begin(), eval.by_row.end(), std::pair<uint32_t, uint32_t>{static_cast<uint32_t>(first), 0});
  for (; at != eval.by_row.end() && at->first < first + rows; ++at)
    std::copy(chunk + (at->first - first) * cols, chunk + (at->first - first + 1) * cols, local + size_t{at->second} * cols);
}

// An embedding table's run: the whole model read without holding the table (see the top). A read
// whose op is given up stops at its next chunk and changes nothing.
void read_whole_table_model(chief_pointer self, uint64_t op, bool digest, std::function<void()> next, failed_fn failed) {
  auto& st = self->state;
  auto sink = std::make_shared<whole_sink>();
  sink->local.assign(st.eval_rows->local.size(), 0.0f);
  if (digest)
    sink->digest.emplace();
  if (st.cfg.train.save_model != model_saving::none) {
    auto folder = st.monitor->model_folder();
    if (!folder)
      return failed(describe(folder.error()));
    std::vector<size_t> sizes;
    for (auto& v : st.spec.variables())
      sizes.push_back(v.size());
    auto staged = staged_model::open(*folder, std::move(sizes));
    if (!staged)
      return failed(describe(staged.error()));
    sink->staged = std::move(*staged);
  }
  const uint32_t table = st.eval_rows->variable;
  auto vars = st.spec.variables();
  if (auto err = sink->put_from(*st.net, vars, 0, table)) // (the dense variables are in the net already)
    return failed(describe(err));
  // (chunks of 16 MiB: what the chief holds at once, its chunk and the reply being read, is a few
  // of them, and the heap keeps what it freed: common/memory_policy)
  table_sweep sweep{st.plan, table, std::min<size_t>(st.cfg.cluster.max_slice_floats, size_t{1} << 22)};
  const size_t cols = sweep.cols();
  auto on_chunk = [self, op, sink, sweep, cols](size_t i, const float* chunk) -> caf::error {
    if (!self->state.ctl->wanted(op))
      return caf::make_error(errc::invalid_argument, "the read was given up"); // (its failure is dropped too)
    keep_evaluation_rows(*self->state.eval_rows, cols, sweep.first_row(i), sweep.rows_of(i), chunk, sink->local.data());
    return sink->put(chunk, sweep.rows_of(i) * cols);
  };
  auto after = [self, op, sink, vars, table, next, failed] {
    auto& st = self->state;
    if (!st.ctl->wanted(op))
      return;
    if (auto err = st.net->upload_parameter(table, 0, sink->local.data(), sink->local.size()))
      return failed(describe(err));
    if (auto err = sink->put_from(*st.net, vars, table + 1, vars.size()))
      return failed(describe(err));
    if (sink->staged)
      if (auto err = sink->staged->finish())
        return failed(describe(err));
    st.staged = std::move(sink->staged);
    if (sink->digest)
      st.swept_digest = sink->digest->text();
    next();
  };
  sweep_table(self, st.cfg.shards, st.plan, st.cfg.cluster.request_timeout, std::move(sweep), on_chunk, after, failed);
}

} // namespace

void detail::pull_model_then(chief_pointer self, uint64_t op, model_read how, std::function<void()> next, failed_fn failed) {
  auto& st = self->state;
  auto then = [=] {
    if (self->state.ctl->wanted(op))
      next();
  };
  if (!st.eval_rows)
    return pull_every_variable(self, st.cfg.shards, st.plan, st.cfg.cluster.max_slice_floats,
                               st.cfg.cluster.request_timeout, *st.net, then, failed);
  pull_every_variable(
    self, st.cfg.shards, st.plan, st.cfg.cluster.max_slice_floats, st.cfg.cluster.request_timeout, *st.net,
    [=] {
      auto& st = self->state;
      if (!st.ctl->wanted(op))
        return;
      if (how != model_read::rows)
        return read_whole_table_model(self, op, how == model_read::last, then, failed);
      auto& eval = *st.eval_rows;
      const auto& from = st.cfg.row_links.empty() ? st.cfg.shards : st.cfg.row_links;
      pull_rows(self, from, st.plan, st.cfg.cluster.request_timeout, eval.rows, eval.asks,
                st.cfg.cluster.max_slice_floats, eval.local.data(),
                [=] {
                  if (!self->state.ctl->wanted(op))
                    return;
                  auto& eval = *self->state.eval_rows;
                  if (auto err = self->state.net->upload_parameter(eval.variable, 0, eval.local.data(), eval.local.size()))
                    return failed(describe(err));
                  next();
                },
                failed);
    },
    failed, false);
}

caf::expected<std::string> detail::final_digest(chief_state& st) {
  if (st.eval_rows)
    return st.swept_digest;
  return weights_digest(*st.net);
}

} // namespace actorps
