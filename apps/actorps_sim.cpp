// actorps-sim: runs seeded simulated clusters (sim/) and reports the first broken invariant with
// its transcript and the command that replays it. Exit 0: every run kept every invariant;
// 1: a violation; 2: a bad command line.
#include "common/log.hpp"
#include "sim/cluster.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>

using namespace actorps;
using namespace actorps::sim;

namespace {

const char* usage =
  "usage: actorps-sim [--seed N] [--seeds COUNT] [--mode async|sync|ssp|elastic|in-graph|model-parallel|all]\n"
  "                   [--scale small|large] [--slices K]\n"
  "                   [--workers W] [--shards S] [--max-steps N] [--report-every N]\n"
  "                   [--replicas-to-aggregate R] [--staleness K] [--compute-us T] [--latency-us T]\n"
  "                   [--step-timeout-us T] [--request-timeout-us T] [--checkpoint-every N] [--elastic]\n"
  "                   [--eval-every N] [--eval-time-us T]\n"
  "                   [--train-rows N] [--lease-rows N]\n"
  "                   [--in-graph] [--shard-crashes] [--storage-faults] [--shard-freezes] [--links]\n"
  "                   [--scopes] [--kept V0,V1,...]\n"
  "                   [--overlap-steps 0|1] [--table] [--rows-with-push]\n"
  "                   [--fault crash|freeze|slow|crash-chief|crash-shard|freeze-shard|sigterm-chief|sigterm-shard|\n"
  "                            corrupt-checkpoint|leave|join|partition:NODE@TIME(+DURATION|xFACTOR)]...\n"
  "                   [--transcript] [--quiet]\n"
  "Draws COUNT scenarios from seeds N, N+1, ... (the shape, limits and faults from each seed);\n"
  "any shape option or --fault replaces what the seed drew. Prints one line per run (--quiet:\n"
  "only violations and the total), the transcript of a run that breaks an invariant (or of\n"
  "every run with --transcript), and the command that replays it. --mode elastic (or --elastic):\n"
  "an async elastic job, its data in leases from the chief's epoch ledger, with leaves and joins;\n"
  "--mode in-graph (or --in-graph): the chief drives each sync step, the workers compute its parts.\n"
  "--mode model-parallel: groups of --slices K workers, each slice a part of the model's columns.\n"
  "--shard-crashes: the seeds also draw shards killed and restored from the chief's checkpoint.\n"
  "--storage-faults: the seeds also draw damaged checkpoints (missing, truncated, failing their\n"
  "checksum): a restart restores the newest that verifies, or fails by name when none does.\n"
  "--shard-freezes (not model-parallel or in-graph): the seeds also draw shard processes frozen\n"
  "(SIGSTOP) for up to 3 request timeouts, and the workers reach the shards through links (as\n"
  "--links): an exchange's deadline ends the worker's link, failing its requests to that shard;\n"
  "the worker reaches the shard again, the same process once it wakes.\n"
  "--links: a request's deadline is its link's (the tensor stream's ShardLink), not CAF's timer.\n"
  "--scopes: each run, then a session in the same scope (twice the max-steps) attaching to the\n"
  "variables the shards kept (--kept: the versions it attaches at, as its replay names them).\n"
  "--overlap-steps 1 (async, ssp): workers compute the next step while a step's exchange travels\n"
  "(cluster.overlap-steps); a push may then miss at most one of its worker's own updates.\n"
  "--table: every run trains an embedding table (a third of the seeds draw one): each step pulls\n"
  "its rows first and gives the step up when a pull fails; a fetch must read its own updates.\n"
  "--rows-with-push (with --table; half of the table seeds draw it): each push asks its shard back\n"
  "for the next step's rows, read after its update (sync: its step's; ssp: as its answer goes;\n"
  "cluster.rows-with-push).\n";

/// A kind of run: a train mode, elastic or not.
struct run_kind {
  train_mode mode;
  bool elastic = false;
  bool in_graph = false;
};

struct options {
  uint64_t seed = 1;
  uint64_t seeds = 1;
  std::vector<run_kind> modes{{train_mode::async, false}};
  bool elastic = false;  // --elastic: every run elastic (async)
  bool in_graph = false; // --in-graph: every run in-graph (sync)
  bool shard_crashes = false; // --shard-crashes: the seeds draw shard kills too
  bool storage_faults = false; // --storage-faults: the seeds draw damaged checkpoints too
  bool shard_freezes = false; // --shard-freezes: the seeds draw frozen shards too (over links)
  bool links = false;         // --links: the workers reach the shards through links (a deadline ends one)
  int overlap_steps = 0;      // --overlap-steps: cluster.overlap-steps of every (async) run
  bool table = false;         // --table: every run trains an embedding table (its rows pulled per step)
  bool rows_with_push = false; // --rows-with-push: (--table) the rows asked back with each push
  bool scopes = false;        // --scopes: each run, then a session attaching to the scope it kept
  std::optional<std::vector<uint64_t>> kept; // --kept: the versions the shards keep (a replay)
  std::optional<int64_t> train_rows, lease_rows;
  scale size = scale::small;
  bool transcript = false;
  bool quiet = false;
  std::optional<uint32_t> workers, shards, replicas, staleness, slices;
  std::optional<int64_t> max_steps, report_every, compute, latency, step_timeout, request_timeout, checkpoint_every,
    eval_every, eval_time;
  std::optional<std::vector<fault>> faults;
};

[[noreturn]] void bad(const std::string& what) {
  std::fprintf(stderr, "actorps-sim: %s\n%s", what.c_str(), usage);
  std::exit(2);
}

int64_t number(const std::string& flag, const char* text, int64_t min) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || v < min)
    bad(cat(flag, " expects an integer of at least ", min, ", got \"", text, "\""));
  return v;
}

fault parse_fault(const std::string& text) {
  // crash:3@1000+5000, freeze:0@200+90000, slow:2@0x4
  fault f;
  auto colon = text.find(':');
  auto atsign = text.find('@');
  if (colon == std::string::npos || atsign == std::string::npos || atsign < colon)
    bad(cat("--fault expects KIND:NODE@TIME(+DURATION|xFACTOR), got \"", text, "\""));
  auto kind = text.substr(0, colon);
  if (kind == "crash")
    f.what = fault::kind::crash_worker;
  else if (kind == "freeze")
    f.what = fault::kind::freeze_worker;
  else if (kind == "slow")
    f.what = fault::kind::slow_worker;
  else if (kind == "crash-chief")
    f.what = fault::kind::crash_chief;
  else if (kind == "crash-shard")
    f.what = fault::kind::crash_shard;
  else if (kind == "sigterm-chief")
    f.what = fault::kind::sigterm_chief;
  else if (kind == "leave")
    f.what = fault::kind::leave_worker;
  else if (kind == "join")
    f.what = fault::kind::join_worker;
  else if (kind == "partition")
    f.what = fault::kind::partition;
  else if (kind == "sigterm-shard")
    f.what = fault::kind::sigterm_shard;
  else if (kind == "corrupt-checkpoint")
    f.what = fault::kind::corrupt_checkpoint;
  else if (kind == "freeze-shard")
    f.what = fault::kind::freeze_shard;
  else
    bad(cat("--fault: unknown kind \"", kind, "\" (crash, freeze, slow, crash-chief, crash-shard, freeze-shard, sigterm-chief, sigterm-shard, corrupt-checkpoint, leave, join or partition)"));
  f.node = static_cast<uint32_t>(number("--fault node", text.substr(colon + 1, atsign - colon - 1).c_str(), 0));
  auto rest = text.substr(atsign + 1);
  auto sep = rest.find_first_of("+x");
  f.at = number("--fault time", rest.substr(0, sep).c_str(), 0);
  if (sep != std::string::npos) {
    auto tail = rest.substr(sep + 1);
    if (rest[sep] == '+')
      f.duration = number("--fault duration", tail.c_str(), 0);
    else
      f.factor = static_cast<double>(number("--fault factor", tail.c_str(), 1));
  }
  return f;
}

options parse(int argc, char** argv) {
  options o;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    auto value = [&]() -> const char* {
      if (i + 1 >= argc)
        bad(cat(flag, " expects a value"));
      return argv[++i];
    };
    if (flag == "--help" || flag == "-h") {
      std::fputs(usage, stdout);
      std::exit(0);
    } else if (flag == "--seed") {
      o.seed = static_cast<uint64_t>(number(flag, value(), 0));
    } else if (flag == "--seeds") {
      o.seeds = static_cast<uint64_t>(number(flag, value(), 1));
    } else if (flag == "--mode") {
      std::string m = value();
      if (m == "all")
        o.modes = {{train_mode::async}, {train_mode::sync}, {train_mode::ssp}, {train_mode::async, true},
                   {train_mode::sync, false, true}, {train_mode::model_parallel}};
      else if (m == "elastic")
        o.modes = {{train_mode::async, true}};
      else if (m == "in-graph")
        o.modes = {{train_mode::sync, false, true}};
      else if (auto parsed = parse_train_mode(m))
        o.modes = {{*parsed}};
      else
        bad(cat("--mode expects async, sync, ssp, elastic, in-graph, model-parallel or all, got \"", m, "\""));
    } else if (flag == "--scale") {
      std::string s = value();
      if (s != "small" && s != "large")
        bad(cat("--scale expects small or large, got \"", s, "\""));
      o.size = s == "large" ? scale::large : scale::small;
    } else if (flag == "--workers") {
      o.workers = static_cast<uint32_t>(number(flag, value(), 1));
    } else if (flag == "--shards") {
      o.shards = static_cast<uint32_t>(number(flag, value(), 1));
    } else if (flag == "--max-steps") {
      o.max_steps = number(flag, value(), 1);
    } else if (flag == "--report-every") {
      o.report_every = number(flag, value(), 1);
    } else if (flag == "--replicas-to-aggregate") {
      o.replicas = static_cast<uint32_t>(number(flag, value(), 1));
    } else if (flag == "--staleness") {
      o.staleness = static_cast<uint32_t>(number(flag, value(), 0));
    } else if (flag == "--compute-us") {
      o.compute = number(flag, value(), 1);
    } else if (flag == "--latency-us") {
      o.latency = number(flag, value(), 1);
    } else if (flag == "--step-timeout-us") {
      o.step_timeout = number(flag, value(), 1);
    } else if (flag == "--request-timeout-us") {
      o.request_timeout = number(flag, value(), 0);
    } else if (flag == "--checkpoint-every") {
      o.checkpoint_every = number(flag, value(), 0);
    } else if (flag == "--eval-every") {
      o.eval_every = number(flag, value(), 0);
    } else if (flag == "--eval-time-us") {
      o.eval_time = number(flag, value(), 1);
    } else if (flag == "--elastic") {
      o.elastic = true;
    } else if (flag == "--in-graph") {
      o.in_graph = true;
    } else if (flag == "--slices") {
      o.slices = static_cast<uint32_t>(number(flag, value(), 2));
    } else if (flag == "--scopes") {
      o.scopes = true;
    } else if (flag == "--kept") {
      o.kept.emplace();
      std::string list = value();
      for (size_t at = 0; at <= list.size();) {
        auto comma = std::min(list.find(',', at), list.size());
        o.kept->push_back(static_cast<uint64_t>(number(flag, list.substr(at, comma - at).c_str(), 0)));
        at = comma + 1;
      }
    } else if (flag == "--shard-crashes") {
      o.shard_crashes = true;
    } else if (flag == "--storage-faults") {
      o.storage_faults = true;
    } else if (flag == "--shard-freezes") {
      o.shard_freezes = true;
    } else if (flag == "--links") {
      o.links = true;
    } else if (flag == "--overlap-steps") {
      o.overlap_steps = static_cast<int>(number(flag, value(), 0));
      if (o.overlap_steps > 1)
        bad("--overlap-steps must be 0 or 1 (as cluster.overlap-steps)");
    } else if (flag == "--table") {
      o.table = true;
    } else if (flag == "--rows-with-push") {
      o.rows_with_push = true;
    } else if (flag == "--train-rows") {
      o.train_rows = number(flag, value(), 1);
    } else if (flag == "--lease-rows") {
      o.lease_rows = number(flag, value(), 1);
    } else if (flag == "--fault") {
      if (!o.faults)
        o.faults.emplace();
      o.faults->push_back(parse_fault(value()));
    } else if (flag == "--transcript") {
      o.transcript = true;
    } else if (flag == "--quiet") {
      o.quiet = true;
    } else {
      bad(cat("unknown option \"", flag, "\""));
    }
  }
  return o;
}

scenario build(const options& o, uint64_t seed, run_kind kind) {
  const bool elastic = kind.elastic || o.elastic;
  const bool in_graph = kind.in_graph || o.in_graph;
  if (elastic && in_graph)
    bad("--elastic and --in-graph do not go together (as cluster.elastic refuses in-graph replication)");
  if (elastic && kind.mode == train_mode::model_parallel)
    bad("--elastic jobs are data-parallel (as cluster.elastic refuses model-parallel)");
  if (in_graph && kind.mode != train_mode::sync)
    bad("--in-graph steps are synchronous (--mode sync or in-graph)");
  auto sc = scenario_for(seed, kind.mode, draw{o.size, elastic, in_graph, o.shard_crashes, o.storage_faults, false,
                                               o.shard_freezes});
  sc.links = sc.links || o.links;
  sc.elastic = elastic;
  sc.in_graph = in_graph;
  if (o.overlap_steps > 0 && ((kind.mode != train_mode::async && kind.mode != train_mode::ssp) || elastic || in_graph))
    bad("--overlap-steps is for async and ssp runs that are not elastic (as cluster.overlap-steps refuses the others)");
  sc.overlap_steps = o.overlap_steps;
  if (o.table && !table_allowed(sc))
    bad("--table is for async, sync and ssp runs that are not elastic or in-graph, and overlapped only in async (as a "
        "cluster refuses the others)");
  sc.table = o.table || (sc.table && table_allowed(sc));
  if (o.rows_with_push && !sc.table) // (overlapped async table runs always ask back)
    bad("--rows-with-push is for runs with --table (as cluster.rows-with-push asks back a table's rows)");
  sc.rows_with_push = o.rows_with_push || rows_with_push_drawn(sc);
  if (o.train_rows)
    sc.train_rows = static_cast<int>(*o.train_rows);
  if (o.lease_rows)
    sc.lease_rows = static_cast<int>(*o.lease_rows);
  if (o.slices && kind.mode != train_mode::model_parallel)
    bad("--slices splits the model: --mode model-parallel");
  if (o.slices)
    sc.slices = *o.slices;
  if (o.workers)
    sc.workers = *o.workers;
  if (sc.workers % sc.slices != 0)
    bad(cat("--slices ", sc.slices, " must divide the ", sc.workers, " workers (groups of slices)"));
  if (o.shards)
    sc.shards = *o.shards;
  if (o.max_steps)
    sc.max_steps = *o.max_steps;
  if (o.report_every)
    sc.report_every = static_cast<int>(*o.report_every);
  if (o.replicas)
    sc.replicas_to_aggregate = *o.replicas;
  if (sc.replicas_to_aggregate > sc.workers)
    sc.replicas_to_aggregate = sc.workers;
  if (o.staleness)
    sc.staleness = *o.staleness;
  if (o.compute)
    sc.compute = *o.compute;
  if (o.latency)
    sc.latency = *o.latency;
  if (o.step_timeout)
    sc.step_timeout = *o.step_timeout;
  if (o.request_timeout)
    sc.request_timeout = *o.request_timeout;
  if (o.checkpoint_every)
    sc.checkpoint_every = *o.checkpoint_every;
  if (o.eval_every)
    sc.eval_every = *o.eval_every;
  if (o.eval_time)
    sc.eval_time = *o.eval_time;
  if (o.faults)
    sc.faults = *o.faults;
  if (o.kept) {
    if (o.kept->size() != sc.shards)
      bad(cat("--kept names ", o.kept->size(), " versions for ", sc.shards, " shards"));
    sc.kept = *o.kept;
  }
  for (auto& f : sc.faults) {
    if (f.what == fault::kind::crash_shard || f.what == fault::kind::sigterm_shard || f.what == fault::kind::freeze_shard
          ? f.node >= sc.shards
                                           : f.what != fault::kind::crash_chief && f.what != fault::kind::sigterm_chief
                                               && f.what != fault::kind::join_worker
                                               && f.what != fault::kind::corrupt_checkpoint && f.node >= sc.workers)
      bad(cat("--fault names node ", f.node, ", outside the cluster"));
    if ((f.what == fault::kind::join_worker || f.what == fault::kind::leave_worker) && !sc.elastic)
      bad("--fault leave and join need an elastic job (--elastic)");
  }
  return sc;
}

} // namespace

int main(int argc, char** argv) {
  auto o = parse(argc, argv);
  uint64_t runs = 0, failed = 0, events = 0;
  auto t0 = std::chrono::steady_clock::now();
  for (uint64_t seed = o.seed; seed < o.seed + o.seeds; ++seed)
    for (auto kind : o.modes) {
      auto sc = build(o, seed, kind);
      // --scopes: a first session, then one attaching to the scope it kept (simulate_scopes)
      auto outs = o.scopes ? simulate_scopes(sc) : std::vector<outcome>{simulate(sc)};
      for (size_t k = 0; k < outs.size(); ++k) {
        auto& out = outs[k];
        ++runs;
        events += out.events;
        if (!o.quiet || !out.ok)
          std::printf("seed %llu %-7s W=%u S=%u%s: %s | steps %lld worker_steps %lld (stale %lld, split %lld) versions %llu stale pushes %llu | %llu events, %.1f ms virtual\n",
                      static_cast<unsigned long long>(seed), sc.elastic ? "elastic" : sc.in_graph ? "ingraph" : to_string(sc.mode), sc.workers, sc.shards,
                      o.scopes ? cat(" session ", k + 1, k > 0 ? cat(" (attached at ", out.attached, ")") : std::string{}).c_str() : "",
                      out.ok ? "ok" : ("VIOLATION: " + out.violation).c_str(), static_cast<long long>(out.steps),
                      static_cast<long long>(out.worker_steps), static_cast<long long>(out.stale_steps),
                      static_cast<long long>(out.split_steps),
                      static_cast<unsigned long long>(out.versions.empty() ? 0 : out.versions[0]),
                      static_cast<unsigned long long>(out.stale_dropped), static_cast<unsigned long long>(out.events),
                      static_cast<double>(out.end) / 1000.0);
        if (!out.ok || o.transcript)
          for (auto& line : out.transcript)
            std::printf("    %s\n", line.c_str());
        failed += out.ok ? 0 : 1;
      }
    }
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%llu runs, %llu violations, %llu events in %.2f s (%.0f simulated events/s)\n",
              static_cast<unsigned long long>(runs), static_cast<unsigned long long>(failed),
              static_cast<unsigned long long>(events), secs, secs > 0 ? static_cast<double>(events) / secs : 0.0);
  return failed > 0 ? 1 : 0;
}
