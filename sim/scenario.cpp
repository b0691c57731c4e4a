// Seeded scenarios: the shape, limits and faults of a simulated run from one number.
#include "sim/scenario.hpp"

#include "common/log.hpp"
#include "compute/dropout_mask.hpp"
#include "sim/cluster_nodes.hpp"

#include <algorithm>
#include <cstdlib>
#include <vector>

namespace actorps::sim {

const char* to_string(fault::kind k) {
  switch (k) {
    case fault::kind::crash_worker:
      return "crash";
    case fault::kind::freeze_worker:
      return "freeze";
    case fault::kind::slow_worker:
      return "slow";
    case fault::kind::crash_chief:
      return "crash-chief";
    case fault::kind::crash_shard:
      return "crash-shard";
    case fault::kind::sigterm_chief:
      return "sigterm-chief";
    case fault::kind::leave_worker:
      return "leave";
    case fault::kind::join_worker:
      return "join";
    case fault::kind::partition:
      return "partition";
    case fault::kind::corrupt_checkpoint:
      return "corrupt-checkpoint";
    case fault::kind::freeze_shard:
      return "freeze-shard";
    case fault::kind::sigterm_shard:
      break;
  }
  return "sigterm-shard";
}

uint32_t scenario::worker_slots() const {
  return workers + static_cast<uint32_t>(std::count_if(faults.begin(), faults.end(),
                                                       [](const fault& f) { return f.what == fault::kind::join_worker; }));
}

bool table_allowed(const scenario& sc) {
  return (sc.mode == train_mode::async || sc.mode == train_mode::sync || sc.mode == train_mode::ssp) && !sc.elastic
         && !sc.in_graph && (sc.overlap_steps == 0 || sc.mode == train_mode::async);
}

bool rows_with_push_drawn(const scenario& sc) { // (overlapped steps with a table need it: config/table_rules)
  return sc.table && (sc.overlap_steps > 0 || mix64(sc.seed ^ 0x5EEDA11EADull) % 2 == 0); // (table_allowed: async, sync, ssp)
}

std::string scenario::replay() const {
  std::string out = cat("actorps-sim --seed ", seed, " --mode ", to_string(mode), " --workers ", workers, " --shards ",
                        shards, " --max-steps ", max_steps, " --report-every ", report_every);
  if (mode == train_mode::sync)
    out += cat(" --replicas-to-aggregate ", replicas_to_aggregate);
  if (mode == train_mode::ssp)
    out += cat(" --staleness ", staleness);
  if (mode == train_mode::model_parallel)
    out += cat(" --slices ", slices);
  out += cat(" --compute-us ", compute, " --latency-us ", latency, " --step-timeout-us ", step_timeout);
  if (request_timeout > 0)
    out += cat(" --request-timeout-us ", request_timeout);
  if (checkpoint_every > 0)
    out += cat(" --checkpoint-every ", checkpoint_every);
  if (eval_every > 0)
    out += cat(" --eval-every ", eval_every, " --eval-time-us ", eval_time);
  if (elastic)
    out += cat(" --elastic --train-rows ", train_rows, " --lease-rows ", lease_rows);
  if (in_graph)
    out += " --in-graph";
  if (overlap_steps > 0)
    out += cat(" --overlap-steps ", overlap_steps);
  if (table)
    out += " --table";
  if (rows_with_push)
    out += " --rows-with-push";
  if (links)
    out += " --links";
  if (!kept.empty()) {
    out += " --kept ";
    for (size_t s = 0; s < kept.size(); ++s)
      out += cat(s == 0 ? "" : ",", kept[s]);
  }
  for (auto& f : faults)
    out += cat(" --fault ", to_string(f.what), ":", f.node, "@", f.at, f.what == fault::kind::slow_worker
                                                                     ? cat("x", f.factor)
                                                                     : cat("+", f.duration));
  return out;
}

scenario scenario_for(uint64_t seed, train_mode mode, draw d) {
  const scale size = d.size;
  const bool elastic = d.elastic, in_graph = d.in_graph;
  // (scrambled first: splitmix64 streams of nearby plain seeds overlap, shifted by one draw)
  rng r(rng(seed * 0x2545F4914F6CDD1Dull ^ (static_cast<uint64_t>(mode) << 56) ^ (size == scale::large ? 1ull << 48 : 0)
            ^ (elastic ? 1ull << 40 : 0) ^ (in_graph ? 1ull << 36 : 0)).next());
  scenario sc;
  sc.seed = seed;
  sc.mode = mode;
  if (size == scale::small) {
    sc.workers = 1 + static_cast<uint32_t>(r.below(8));
    sc.shards = 1 + static_cast<uint32_t>(r.below(4));
    sc.max_steps = 20 + static_cast<int64_t>(r.below(mode == train_mode::sync ? 60 : 300));
  } else {
    sc.workers = 16 + static_cast<uint32_t>(r.below(241));
    sc.shards = 1 + static_cast<uint32_t>(r.below(16));
    sc.max_steps = mode == train_mode::sync ? 5 + static_cast<int64_t>(r.below(10))
                                            : 200 + static_cast<int64_t>(r.below(800));
  }
  if (mode == train_mode::model_parallel) { // groups of 2-4 slices (small: 1-3 groups)
    sc.slices = 2 + static_cast<uint32_t>(r.below(3));
    sc.workers = sc.slices * (size == scale::small ? 1 + static_cast<uint32_t>(r.below(3))
                                                   : std::max<uint32_t>(1, sc.workers / sc.slices / 4));
  }
  if (mode == train_mode::ssp) // (fewer steps than workers: see docs/results.md, the simulator's findings)
    sc.max_steps = std::max<int64_t>(sc.max_steps, sc.workers);
  sc.report_every = 1 + static_cast<int>(r.below(20));
  sc.replicas_to_aggregate = r.below(2) == 0 ? sc.workers : 1 + static_cast<uint32_t>(r.below(sc.workers));
  sc.staleness = static_cast<uint32_t>(r.below(4));
  sc.compute = 1'000 + static_cast<vtime>(r.below(5'000));
  sc.latency = 50 + static_cast<vtime>(r.below(500));
  sc.step_timeout = 20 * sc.compute;
  sc.request_timeout = 2 * sc.step_timeout; // (the defaults' ratio: 60 s and 30 s)
  // About how long the run takes without faults: faults land inside it.
  const int64_t rounds = mode == train_mode::sync ? sc.max_steps : sc.max_steps / (sc.workers / sc.slices) + 1;
  const vtime span = std::max<vtime>(1, rounds * (sc.compute + 4 * sc.latency));
  sc.checkpoint_every = std::max<int64_t>(1, sc.max_steps / 4);
  sc.elastic = elastic && !in_graph && mode != train_mode::model_parallel;
  sc.in_graph = in_graph && mode == train_mode::sync;
  sc.overlap_steps = d.overlap && (mode == train_mode::async || mode == train_mode::ssp) && !sc.elastic ? 1 : 0;
  // (from the seed's hash, not its generator: the other draws stay as they were)
  sc.table = table_allowed(sc) && mix64(seed ^ 0x7AB1E5EEDull) % 3 == 0;
  sc.rows_with_push = rows_with_push_drawn(sc);
  // Half the seeds evaluate every few steps, each evaluation lasting 1-10 computes (from the
  // seed's hash as well): evaluations that shard losses and the step limit meet.
  if (const uint64_t h = mix64(seed ^ 0xE7A1EE7A1ull); h % 2 == 0) {
    sc.eval_every = 1 + static_cast<int64_t>((h >> 8) % static_cast<uint64_t>(std::max<int64_t>(1, sc.max_steps / 5)));
    sc.eval_time = sc.compute * static_cast<vtime>(1 + (h >> 32) % 10);
  }
  if (sc.elastic) {
    sc.train_rows = batch_rows * (5 + static_cast<int>(r.below(40)));
    sc.lease_rows = batch_rows * (1 + static_cast<int>(r.below(4)));
  }
  // The kinds drawn: crash, freeze, slow, crash-chief, partition; elastic also leave and join;
  // with shard_crashes also crash-shard.
  std::vector<fault::kind> kinds{fault::kind::crash_worker, fault::kind::freeze_worker, fault::kind::slow_worker,
                                 fault::kind::crash_chief, fault::kind::partition};
  if (sc.elastic)
    kinds.insert(kinds.end(), {fault::kind::leave_worker, fault::kind::join_worker});
  if (d.shard_crashes)
    kinds.push_back(fault::kind::crash_shard);
  if (mode == train_mode::model_parallel) // (a lost slice or shard fails the run, by design: no kills)
    kinds = {fault::kind::freeze_worker, fault::kind::slow_worker, fault::kind::crash_chief, fault::kind::partition};
  if (d.storage_faults) // (damaged checkpoints: what the chief and shard restarts read back)
    kinds.push_back(fault::kind::corrupt_checkpoint);
  if (d.shard_freezes && mode != train_mode::model_parallel && !sc.in_graph) { // (a shard lost to a slice fails the
    kinds.push_back(fault::kind::freeze_shard); // run by design; in-graph workers keep CAF's timers)
    sc.links = true;
  }
  const auto faults = r.below(2) == 0 ? 0 : 1 + r.below(sc.elastic ? 5 : 3);
  for (uint64_t k = 0; k < faults; ++k) {
    fault f;
    f.what = kinds[r.below(kinds.size())];
    f.at = 20 * sc.latency + static_cast<vtime>(r.below(static_cast<uint64_t>(span))); // (after the start-up:
    // a worker lost for good before training begins is a start-up failure, by design)
    f.node = static_cast<uint32_t>(r.below(sc.workers));
    if ((f.what == fault::kind::crash_worker || f.what == fault::kind::leave_worker) && sc.workers == 1)
      f.what = fault::kind::freeze_worker; // (losing the only worker fails a run by design)
    if (f.what == fault::kind::leave_worker) { // (worker 0 stays: someone is left to train)
      f.node = 1 + static_cast<uint32_t>(r.below(sc.workers - 1));
    } else if (f.what == fault::kind::join_worker) {
      f.node = 0;
    } else if (f.what == fault::kind::crash_worker) { // worker 0 is never killed: someone is left to train
      f.node = 1 + static_cast<uint32_t>(r.below(sc.workers - 1));
      const bool restart = r.below(2) == 0;
      f.duration = restart ? static_cast<vtime>(1 + r.below(static_cast<uint64_t>(span))) : 0;
    } else if (f.what == fault::kind::crash_shard) {
      f.node = static_cast<uint32_t>(r.below(sc.shards));
      f.duration = 1 + static_cast<vtime>(r.below(static_cast<uint64_t>(span)));
    } else if (f.what == fault::kind::freeze_shard) { // (past the request timeout in about two of three)
      f.node = static_cast<uint32_t>(r.below(sc.shards));
      f.duration = 1 + static_cast<vtime>(r.below(static_cast<uint64_t>(3 * sc.request_timeout)));
    } else if (f.what == fault::kind::corrupt_checkpoint) {
      f.node = static_cast<uint32_t>(r.below(3)); // missing, truncated, a checksum mismatch
    } else if (f.what == fault::kind::crash_chief) {
      f.node = 0;
      f.duration = 1 + static_cast<vtime>(r.below(static_cast<uint64_t>(span)));
    } else if (f.what == fault::kind::freeze_worker || f.what == fault::kind::partition) {
      f.duration = static_cast<vtime>(1 + r.below(static_cast<uint64_t>(3 * sc.step_timeout)));
      if (sc.in_graph && f.node == 0) // (every worker away for a step timeout fails the run, by design:
        f.duration = std::min<vtime>(f.duration, sc.step_timeout / 2); // worker 0 stays)
    } else
      f.factor = 2.0 + static_cast<double>(r.below(8));
    sc.faults.push_back(f);
  }
  // A restarted chief waits for every configured worker (non-elastic): one killed for good fails
  // the restart at cluster.startup-timeout, by design. With a chief crash, killed workers return.
  const bool chief_crash = std::any_of(sc.faults.begin(), sc.faults.end(),
                                       [](const fault& f) { return f.what == fault::kind::crash_chief; });
  for (auto& f : sc.faults)
    if (chief_crash && f.what == fault::kind::crash_worker && f.duration == 0)
      f.duration = std::max<vtime>(1, span / 2);
  return sc;
}

} // namespace actorps::sim
