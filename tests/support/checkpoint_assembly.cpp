// A checkpoint assembled from whole snapshots (see checkpoint_assembly.hpp).
#include "tests/support/checkpoint_assembly.hpp"

#include "tests/support/snapshot_hold.hpp"

#include <cstdint>

namespace actorps {

checkpoint make_checkpoint(const placement_plan& plan, const model_spec& spec, const optimizer_params& shard_opt,
                           const train_settings& train, const run_settings& cluster, const run_position& at,
                           const std::vector<shard_snapshot>& snapshots, const data_splits& data) {
  checkpoint c;
  c.manifest = checkpoint_manifest_for(plan, spec, shard_opt, train, cluster, at, data);
  std::vector<snapshot_hold> holds(snapshots.size());
  std::vector<snapshot_piece> layouts;
  for (size_t s = 0; s < snapshots.size(); ++s)
    layouts.push_back(holds[s].hold(1, snapshots[s]));
  checkpoint_reads reads{plan, 1, layouts, SIZE_MAX};
  for (auto& f : reads.files()) {
    shard_checkpoint sc;
    sc.shard = f.shard;
    sc.version = f.version;
    for (auto& e : f.entries)
      sc.variables.push_back({e.index, std::vector<float>(e.values), std::vector<float>(e.slot0), std::vector<float>(e.slot1)});
    c.shards.push_back(std::move(sc));
  }
  for (auto& st : reads.steps()) {
    auto& v = c.shards[st.file].variables[st.entry];
    auto& to = st.which == 0 ? v.values : st.which == 1 ? v.slot0 : v.slot1;
    for (auto& [shard, r] : reads.reads(st)) // (a snapshot without the range leaves zeros: the test's own)
      if (auto got = holds[shard].read(1, r.which, r.range))
        (void) reads.place(st, got->piece, to.data() + reads.offset(st));
  }
  return c;
}

} // namespace actorps
