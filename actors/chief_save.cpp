// The chief's checkpoints, written without holding the model: every shard keeps its snapshot
// ((save_atom, snapshot_read) hold), the chief reads it a chunk at a time into the checkpoint's
// files as they are written (actors/chief_checkpoints' checkpoint_reads,
// checkpoint/shard_file_writer), publishes the checkpoint, and every shard drops its snapshot.
#include "actors/chief_state.hpp"

#include "actors/chief_checkpoints.hpp"
#include "common/errc.hpp"
#include "common/log.hpp"

#include <filesystem>

namespace actorps {

using namespace detail;

namespace {

const char* tag = "chief";

// (16 MiB read at a time: what the chief holds of the model)
constexpr size_t chunk_floats = size_t{1} << 22;

void drop_snapshots(chief_pointer self, uint64_t id) {
  for (auto& shard : self->state.cfg.shards)
    self->request(shard, self->state.cfg.cluster.request_timeout, save_atom_v, snapshot_read{snapshot_op::drop, id})
      .then([](const snapshot_piece&) {}, [](caf::error&) {}); // (a shard gone keeps nothing)
}

struct checkpoint_write : std::enable_shared_from_this<checkpoint_write> {
  checkpoint_write(chief_pointer self, run_command cmd) : self(self), cmd(std::move(cmd)) {}

  chief_pointer self;
  run_command cmd;
  checkpoint_manifest manifest;
  std::string tmp;
  std::unique_ptr<checkpoint_reads> reads;
  std::unique_ptr<shard_file_writer> file; // the file in hand
  uint32_t next_file = 0;                  // the files opened so far
  std::vector<float> chunk;
  failed_fn shard_failed; // a shard's read failed
  failed_fn failed;       // a file could not be written
  run_time started;

  ~checkpoint_write() {
    file.reset();
    if (!tmp.empty()) { // (not published: nothing half written stays)
      std::error_code ignored;
      std::filesystem::remove_all(tmp, ignored);
    }
  }

  // Makes file f the one in hand: finishes the one in hand, and writes every file before f on the
  // way (a file of no variables holds its header alone). f = the files' count: finishes them all.
  caf::error open_file(uint32_t f) {
    while (next_file <= f) { // (next_file: the files opened so far)
      if (file) {
        auto done = file->finish(cat("shard-", next_file - 1, ".bin"));
        if (!done)
          return std::move(done.error());
        manifest.files.push_back(*done);
        file.reset();
      }
      if (next_file == reads->files().size())
        return caf::none;
      auto& at = reads->files()[next_file];
      auto opened = shard_file_writer::open(cat(tmp, "/shard-", next_file, ".bin"), at.shard, at.version, at.entries);
      if (!opened)
        return std::move(opened.error());
      file = std::move(*opened);
      ++next_file;
    }
    return caf::none;
  }

  // Reads steps j, j + 1, ... (as many as fit one chunk together: a small model's every piece in
  // one round), writes them in order, then goes on.
  void run(size_t j) {
    auto& st = self->state;
    if (!st.ctl->wanted(cmd.op))
      return drop_snapshots(self, cmd.op);
    const auto& steps = reads->steps();
    if (j == steps.size())
      return publish();
    size_t end = j, floats = 0;
    std::vector<size_t> at; // per step of the round: where its floats start in chunk
    while (end < steps.size() && (end == j || floats + reads->floats(steps[end]) <= chunk_floats)) {
      at.push_back(floats);
      floats += reads->floats(steps[end++]);
    }
    chunk.assign(floats, 0.0f);
    std::vector<std::pair<size_t, std::pair<uint32_t, snapshot_read>>> asks; // (step, read)
    for (size_t i = j; i < end; ++i)
      for (auto& r : reads->reads(steps[i]))
        asks.emplace_back(i, std::move(r));
    auto me = shared_from_this();
    auto fan = fan_in<bool>::make(
      asks.size(),
      [me, j, end, at](std::vector<bool>&) {
        const auto& steps = me->reads->steps();
        for (size_t i = j; i < end; ++i) {
          if (auto err = me->open_file(steps[i].file))
            return me->failed(describe(err));
          if (auto err = me->file->append(me->chunk.data() + at[i - j], me->reads->floats(steps[i])))
            return me->failed(describe(err));
        }
        me->run(end);
      },
      shard_failed);
    for (size_t k = 0; k < asks.size(); ++k) {
      const size_t i = asks[k].first;
      const uint32_t s = asks[k].second.first;
      self->request(st.cfg.shards[s], st.cfg.cluster.request_timeout, save_atom_v, asks[k].second.second)
        .then(
          [me, fan, i, k, s, where = at[i - j]](const snapshot_piece& got) {
            if (auto err = me->reads->place(me->reads->steps()[i], got.piece, me->chunk.data() + where))
              return fan->fail(cat("reading the snapshot of shard ", s, " failed: ", describe(err)));
            fan->put(k, true);
          },
          [fan, s](caf::error& err) { fan->fail(cat("reading the snapshot of shard ", s, " failed: ", describe(err))); });
    }
  }

  void publish() {
    auto& st = self->state;
    if (auto err = open_file(static_cast<uint32_t>(reads->files().size())))
      return failed(describe(err));
    manifest.format = checkpoint_format_version;
    auto path = st.store->commit_save(tmp, manifest, cmd.best);
    if (!path)
      return failed(describe(path.error()));
    tmp.clear(); // (published)
    drop_snapshots(self, cmd.op);
    log_line(tag, cat(cmd.best ? "best model saved: " : "checkpoint saved: ", *path, " (step ", manifest.global_step,
                      ", ", std::chrono::duration<double>(self->clock().now() - started).count(), " s)"));
    execute(self, st.ctl->saved(cmd.op));
  }
};

} // namespace

void detail::save_checkpoint(chief_pointer self, const run_command& c, failed_fn shard_failed, failed_fn file_failed) {
  auto& st = self->state;
  run_position at{c.step, st.ctl->examples(), st.ctl->seconds(self->clock().now()),
                  st.monitor ? st.monitor->last_validation_accuracy() : 0.0,
                  st.cfg.cluster.elastic.on ? st.ctl->members() : std::vector<uint32_t>{},
                  st.elastic.desk ? st.elastic.desk->ledger().save() : std::vector<int64_t>{}};
  auto started = self->clock().now();
  auto dropping = [self, id = c.op](failed_fn then) {
    return [self, id, then](std::string why) {
      drop_snapshots(self, id);
      then(std::move(why));
    };
  };
  failed_fn failed = dropping(file_failed), unreachable = dropping(shard_failed);
  ask_every_shard<snapshot_piece>(
    self, st.cfg.shards, st.cfg.cluster.request_timeout, "taking the snapshot",
    [=](std::vector<snapshot_piece>& layouts) {
      auto& st = self->state;
      if (!st.ctl->wanted(c.op))
        return drop_snapshots(self, c.op);
      auto w = std::make_shared<checkpoint_write>(self, c);
      w->started = started;
      w->failed = failed;
      w->shard_failed = unreachable;
      w->manifest = checkpoint_manifest_for(st.plan, st.spec, st.shard_opt, st.cfg.train, st.cfg.cluster, at, *st.cfg.data);
      auto tmp = st.store->begin_save(c.step, c.best);
      if (!tmp)
        return failed(describe(tmp.error()));
      w->tmp = *tmp;
      w->reads = std::make_unique<checkpoint_reads>(st.plan, c.op, layouts, chunk_floats);
      w->run(0);
    },
    unreachable, save_atom_v, snapshot_read{snapshot_op::hold, c.op});
}

} // namespace actorps
