// The simulated workers: their controllers' commands carried out as messages and compute.
#include "sim/cluster_nodes.hpp"

#include "common/log.hpp"
#include "control/worker_commands.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <deque>
#include <functional>

namespace actorps::sim {

void cluster::start_worker(uint32_t j) {
  auto& w = *workers_[j];
  replica_control_config c;
  c.mode = sc_.mode;
  c.max_steps = j < rc_.worker_budgets.size() ? rc_.worker_budgets[j] : sc_.max_steps; // (epochs: its own)
  c.report_every = sc_.report_every;
  c.chief_recoverable = true; // (its restart is reached again: the fault drills' chief case)
  // (and a shard's: the shard case; over links also a shard whose deadline passed, reached again
  // as the same process, as actors/worker_setup's reconnect_shard always allows; the chief's
  // restore decides about a shard lost for good)
  c.shards_recoverable = (sc_.checkpoint_every > 0 || sc_.links) && sc_.slices == 1;
  c.speaks_for_group = j % sc_.slices == 0; // (model-parallel: every slice computes the same loss)
  c.startup_timeout = std::chrono::hours(1);
  c.leased = sc_.elastic;
  c.in_graph = sc_.in_graph;
  c.index = j;
  c.batch_size = batch_rows;
  c.overlap_steps = sc_.overlap_steps;
  w.ctl = std::make_unique<replica_control>(c);
  // (a new process: no rows asked back by the one before; ahead, as config/table_rules allows)
  const size_t depth = sc_.rows_with_push ? 1 + static_cast<size_t>(sc_.overlap_steps) : 0;
  w.fetches = row_batches{depth};
  w.slot_rows.assign(depth + 1, 0);
  ++w.incarnation;
  if (sc_.slices > 1) // (made with the process, as the actor's: a faster slice's parts may come first)
    make_slice(j);
  w.shards.clear(); // its node connects to the shard processes running now
  w.links.assign(sc_.shards, 0);
  for (auto& sh : shards_)
    w.shards.push_back(sh->incarnation);
  w.alive = true;
  w.frozen_until = 0;
  log(cat("worker ", j), cat("starts (incarnation ", w.incarnation, ")"));
  worker_execute(j, w.ctl->begin(clock()));
  for (uint32_t s = 0; s < sc_.shards; ++s) // (its monitor of a process that is gone reports it at once)
    if (!shards_[s]->alive)
      to_worker(shard_id(s), j, w.incarnation, [this, j, s](worker_node& w) {
        worker_execute(j, w.ctl->shard_down(s, cat("shard ", s, " went down (killed)")));
      });
}

// The simulated worker's primitives of control/worker_commands (each command's meaning lives
// there, as for the actor).
struct cluster::worker_host final : worker_command_host {
  cluster& c;
  uint32_t j;
  uint64_t inc;
  std::string who;
  worker_host(cluster& owner, uint32_t index)
      : c(owner), j(index), inc(owner.workers_[index]->incarnation), who(cat("worker ", index)) {}
  worker_node& w() { return *c.workers_[j]; }
  bool ended() override { return c.over_ || !w().alive || w().incarnation != inc; }
  void register_hello() override { c.send_hello(j, inc); }
  void reconnect_chief() override { c.reach_chief(j, inc); }
  void pull() override { c.worker_pull(j); }
  void compute(const replica_command& cmd) override { c.worker_compute(j, c.sc_.elastic ? cmd.batch.count : batch_rows); }
  void push() override { c.worker_push(j); }
  void report(const replica_command& cmd) override {
    c.to_chief(c.worker_id(j), [&c = c, j = j, cmd, step = w().ctl->step()] { // (to the chief it is connected to)
      c.log("chief", cat("report of worker ", j, ": ", cmd.steps, " steps", cmd.final ? " (final)" : ""));
      c.chief_execute(c.chief_->progress(j, cmd.steps, cmd.examples, static_cast<double>(cmd.examples), cmd.final,
                                         c.clock(), step, cmd.stale_steps, cmd.split_steps));
    }, w().chief);
  }
  void reconnect_shards(const std::vector<uint32_t>& shards) override { c.reach_shards(j, inc, shards); }
  void ask_lease(const replica_command& cmd) override {
    c.to_chief(c.worker_id(j), [&c = c, j = j, inc = inc, epoch = cmd.epoch, req = cmd.lease] { c.on_lease(j, inc, epoch, req); },
               w().chief);
  }
  void arm(worker_timer t, std::chrono::milliseconds after) override {
    c.at(c.now_ + std::chrono::duration_cast<std::chrono::microseconds>(after).count(), [&c = c, j = j, inc = inc, t] {
      if (c.workers_[j]->alive && c.workers_[j]->incarnation == inc)
        c.worker_execute(j, timer_fired(*c.workers_[j]->ctl, t, c.clock()));
    });
  }
  void announce_stop() override {
    if (w().sequencer)
      w().sequencer->announce_stop();
  }
  void leave(const lease_request& progress) override {
    c.to_chief(c.worker_id(j), [&c = c, j = j, req = progress] {
      if (c.desk_) { // (its reports, then the rest of its leases back to the pool)
        if (!c.settle_leases(j, req))
          return;
        c.desk_->release(j);
      }
      c.chief_execute(c.chief_->worker_left(j, c.clock()));
    }, w().chief);
    c.worker_gone(j, false, "left");
  }
  void quit() override {
    c.log(who, cat("quits at step ", w().ctl->step()));
    c.worker_gone(j, false, "");
  }
  void fail(errc code, const std::string& text) override {
    c.log(who, cat("fails: ", to_string(code), ": ", text));
    c.worker_gone(j, true, text);
  }
  void log(const std::string& text) override { c.log(who, text); }
};

void cluster::worker_execute(uint32_t j, replica_commands cmds) {
  worker_host host{*this, j};
  carry_out(cmds, host);
}

void cluster::worker_pull(uint32_t j) {
  auto& w = *workers_[j];
  const uint64_t inc = w.incarnation;
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    const auto tag = open_request(j, s, false);
    to_shard(
      worker_id(j), s,
      [this, s, j, inc, tag] {
        if (!shards_[s]->restored)
          return shard_refuse(s, j, inc, tag);
        const uint64_t version = shards_[s]->version;
        to_worker(shard_id(s), j, inc, [this, s, j, tag, version](worker_node& w) {
          if (answered(w, s, tag))
            worker_execute(j, w.ctl->pulled(s, version));
        });
      },
      request_lost(s, j, inc, tag), w.shards[s]);
  }
}

void cluster::worker_compute(uint32_t j, int rows) {
  if (sc_.slices > 1)
    return slice_compute(j, rows);
  if (sc_.table && workers_[j]->fetches.ahead() > 0) // (asked back with earlier pushes)
    return worker_take_rows_ahead(j, rows);
  if (sc_.table) // (the rows first: sim/cluster_rows.cpp)
    return worker_fetch_rows(j, rows);
  compute_timer(j, rows);
}

void cluster::compute_timer(uint32_t j, int rows) {
  auto& w = *workers_[j];
  const auto span = static_cast<vtime>(static_cast<double>(sc_.compute) * w.slow);
  const vtime took = span + static_cast<vtime>(rng_.below(static_cast<uint64_t>(span / 2) + 1));
  auto done = [this, j, rows](worker_node& w) { worker_execute(j, w.ctl->step_status(replica_control::step_state::ready, rows)); };
  at(now_ + took, [this, j, inc = w.incarnation, done] { to_worker(worker_id(j), j, inc, done); });
}

void cluster::worker_push(uint32_t j) {
  auto& w = *workers_[j];
  const uint64_t inc = w.incarnation;
  const auto step = static_cast<uint64_t>(w.ctl->step());
  ++w.rounds;
  if (w.sequencer) // (the step's gradients are taken: the next step becomes current)
    w.sequencer->end_step();
  if (j % sc_.slices == 0) // (a group's step is one round: its first slice reports it)
    ++rounds_pushed_;
  // cluster.rows-with-push: the batches drawn now, up to the depth ahead (two with overlap: the
  // step computed ahead has its rows already); every push (the table has a part on every shard)
  // asks back the first one's rows, read after its update; any other is pulled after the pushes
  std::vector<std::pair<size_t, uint64_t>> begun;
  while (sc_.rows_with_push && w.fetches.ahead() < w.fetches.depth())
    begun.push_back(w.fetches.begin_ahead(sc_.shards));
  const uint64_t first_ahead = w.fetches.ahead() - begun.size() + 1; // (steps after this one)
  for (uint32_t s = 0; s < sc_.shards; ++s) {
    auto tag = open_request(j, s, true);
    if (!begun.empty()) {
      tag.slot = begun.front().first;
      tag.fetch = begun.front().second;
      tag.ahead = first_ahead;
    }
    const uint64_t base = w.ctl->base_version(s);
    to_shard(
      worker_id(j), s,
      [this, s, j, inc, tag, step, base] {
        if (!shards_[s]->restored)
          return shard_refuse(s, j, inc, tag);
        shard_push(s, j, inc, tag, step, base);
      },
      request_lost(s, j, inc, tag), w.shards[s]);
  }
  for (size_t k = 1; k < begun.size(); ++k)
    worker_pull_rows(j, begun[k].first, begun[k].second, step + first_ahead + k);
}

// The process of worker j ended (crashed: killed or failed; else it quit): its peers' monitors
// fire after the messages it sent before.
void cluster::worker_gone(uint32_t j, bool crashed, const std::string& why) {
  auto& w = *workers_[j];
  if (!w.alive)
    return;
  w.alive = false;
  const uint64_t inc = w.incarnation;
  to_chief(worker_id(j), [this, j, inc, crashed, why] {
    if (desk_) // (its unreported leases go back to the pool)
      desk_->release(j);
    if (workers_[j]->incarnation == inc) // (a restart's hello may be on its way: same link, after)
      chief_execute(chief_->worker_down(j, crashed ? why : "exited", clock()));
    else if (crashed)
      chief_execute(chief_->worker_down(j, why, clock()));
    if (chief_->phase() != run_phase::done && (crashed || workers_[j]->incarnation == inc))
      in_graph_worker_down(j);
  });
  for (uint32_t s = 0; s < sc_.shards; ++s)
    if (shards_[s]->seen[j] == inc)
      to_shard(worker_id(j), s, [this, s, j, inc] {
        if (shards_[s]->seen[j] == inc)
          shard_lose(s, j);
      });
}

// The run's end as each worker still running reads it: the chief stops the shards (they quit
// normally), then quits. A worker frozen through the end reads it all on waking, each connection
// in its order but the connections in any order: per shard, its requests in flight fail as the
// connection closes (lost), then the shard's exit; and the chief's exit. In a seeded order of the
// connections, none of it may make the worker reach a shard again or fail: it ends quietly.
void cluster::wind_down() {
  using kind = replica_command::kind;
  using input = std::function<replica_commands()>;
  for (uint32_t j = 0; j < workers_.size() && out_.ok; ++j) {
    auto& w = *workers_[j];
    if (!w.alive)
      continue;
    std::vector<std::deque<input>> sources; // per connection, in its order
    for (uint32_t s = 0; s < sc_.shards; ++s) {
      if (!shards_[s]->alive || w.shards[s] != shards_[s]->incarnation)
        continue; // (a killed process: its loss is on its way to the worker already)
      std::deque<input> from;
      for (const auto& [id, o] : w.open)
        if (o.shard == s)
          from.push_back([&w, s, epoch = o.epoch] {
            return w.ctl->answers(s, epoch) ? w.ctl->request_failed(s, request_failure::lost, errc::peer_unreachable,
                                                                    cat("shard ", s, ": the connection closed"))
                                            : replica_commands{};
          });
      from.push_back([&w, s] { return w.ctl->shard_down(s, cat("shard ", s, " quit"), true); });
      sources.push_back(std::move(from));
    }
    sources.push_back({[&w] { return w.ctl->chief_down("the chief quit", true); }});
    while (!sources.empty() && w.alive) {
      const auto k = static_cast<size_t>(rng_.below(sources.size()));
      auto cmds = sources[k].front()();
      sources[k].pop_front();
      if (sources[k].empty())
        sources.erase(sources.begin() + static_cast<std::ptrdiff_t>(k));
      for (auto& c : cmds)
        if (c.what == kind::reconnect_shards || c.what == kind::fail)
          return violate(cat("worker ", j, " at the run's end ",
                             c.what == kind::fail ? cat("fails: ", c.text) : std::string{"reaches a shard that quit normally again"}));
      worker_execute(j, std::move(cmds));
    }
    if (w.alive)
      return violate(cat("worker ", j, " did not end with the run (", to_string(w.ctl->phase()), ")"));
  }
}

// -- shards ------------------------------------------------------------------------------------

// A request of worker j to shard s goes out: counted by its controller, answered once -- by the
// shard's reply or failure, or by cluster.request-timeout (CAF's request: then the late reply
// is dropped; with links, the link's deadline: link_expired). The timer fires on the worker's
// process (a frozen one handles it when it thaws).
request_tag cluster::open_request(uint32_t j, uint32_t s, bool push) {
  auto& w = *workers_[j];
  const request_tag tag{w.ctl->requested(s), ++w.requests, push};
  w.open.emplace(tag.id, worker_node::open_request{s, tag.epoch, push});
  if (sc_.request_timeout > 0 && sc_.links) // (its link ticks a quarter of the timeout apart)
    at(now_ + sc_.request_timeout + static_cast<vtime>(rng_.below(static_cast<uint64_t>(sc_.request_timeout / 4) + 1)),
       [this, j, s, tag, inc = w.incarnation, link = w.links[s]] {
         to_worker(worker_id(j), j, inc, [this, j, s, tag, link](worker_node& w) {
           if (w.open.count(tag.id) > 0 && w.links[s] == link) // (an ended link's exchanges ended with it)
             link_expired(j, s);
         });
       });
  else if (sc_.request_timeout > 0)
    at(now_ + sc_.request_timeout, [this, j, s, tag, inc = w.incarnation] {
      to_worker(worker_id(j), j, inc, [this, j, s, tag](worker_node& w) {
        if (!answered(w, s, tag))
          return;
        pushes_timed_out_ += tag.push ? 1 : 0;
        worker_execute(j, w.ctl->request_failed(s, request_failure::timed_out, errc::timeout,
                                                  cat("shard ", s, ": no answer within cluster.request-timeout")));
        if (tag.fetch != 0)
          fetch_failed(j, tag.slot, tag.fetch);
      });
    });
  return tag;
}

// Worker j's link to shard s ends at an exchange's deadline (links): every request of j to s
// fails as a lost connection (the link fails its exchanges with request_receiver_down), then
// shard s is down for j (the link's end), which reaches it again: the same process once it
// answers (reach_shards). A push given up may still be applied by the shard (a frozen one, when
// it wakes): its round is no step.
void cluster::link_expired(uint32_t j, uint32_t s) {
  auto& w = *workers_[j];
  std::vector<std::pair<uint64_t, worker_node::open_request>> failing;
  for (const auto& [id, o] : w.open)
    if (o.shard == s)
      failing.emplace_back(id, o);
  log(cat("worker ", j), cat("its link to shard ", s, " ends: no answer within cluster.request-timeout (",
                             failing.size(), " requests)"));
  ++w.links[s];
  ++out_.links_ended;
  for (const auto& [id, o] : failing) {
    if (!w.alive || w.open.erase(id) == 0 || !w.ctl->answers(s, o.epoch))
      continue;
    pushes_timed_out_ += o.push ? 1 : 0;
    worker_execute(j, w.ctl->request_failed(s, request_failure::lost, errc::peer_unreachable,
                                            cat("shard ", s, ": no answer within cluster.request-timeout")));
  }
  // The link's stream closes: the shard's session for it ends after what the stream carried (a
  // frozen shard reads it all when it wakes), and the shard's aggregator stops waiting for j
  // (the session pushed as j: its held gradient leaves with it).
  if (!w.alive) // (gone: its loss reached every shard)
    return;
  const uint64_t inc = w.incarnation;
  if (shards_[s]->seen[j] == inc)
    to_shard(worker_id(j), s, [this, s, j, inc] {
      if (shards_[s]->seen[j] == inc) {
        ++unlinked_;
        shard_lose(s, j);
      }
    }, nullptr, w.shards[s]);
  worker_execute(j, w.ctl->shard_down(s, cat("shard ", s, "'s link ended (no answer within cluster.request-timeout)")));
  if (w.alive)
    fetches_failed(j); // (rows asked of it never come)
}

// Whether this answer is the request's first (then the controller takes it).
bool cluster::answered(worker_node& w, uint32_t s, request_tag tag) {
  return w.open.erase(tag.id) > 0 && w.ctl->answers(s, tag.epoch);
}

// A request of worker j to a shard process that is gone fails as a lost connection.
std::function<void()> cluster::request_lost(uint32_t s, uint32_t j, uint64_t incarnation, request_tag tag) {
  return [this, s, j, incarnation, tag] {
    to_worker(shard_id(s), j, incarnation, [this, s, j, tag](worker_node& w) {
      if (answered(w, s, tag))
        worker_execute(j, w.ctl->request_failed(s, request_failure::lost, errc::peer_unreachable,
                                                cat("shard ", s, " is unreachable")));
      if (tag.fetch != 0)
        fetch_failed(j, tag.slot, tag.fetch);
    });
  };
}

// A worker reaching restarted shards (the node retries their addresses until they answer), or a
// frozen one's process once it wakes (links: its connector probes the lost process too).
void cluster::reach_shards(uint32_t j, uint64_t inc, std::vector<uint32_t> lost) {
  at(now_ + 10 * sc_.latency, [this, j, inc, lost] {
    auto& w = *workers_[j];
    if (!w.alive || w.incarnation != inc || over_)
      return;
    for (auto s : lost)
      if (!shards_[s]->alive || now_ < shards_[s]->frozen_until) // (a frozen process answers once it wakes)
        return reach_shards(j, inc, lost);
    to_worker(worker_id(j), j, inc, [this, j, lost](worker_node& w) {
      for (auto s : lost) { // (its requests go to the restarted processes from now on, over new links)
        w.shards[s] = shards_[s]->incarnation;
        ++w.links[s];
      }
      worker_execute(j, w.ctl->shards_reconnected());
    });
  });
}

} // namespace actorps::sim
