// The chief's state machine, part three: its members (registrations, joins, leaves, losses,
// the pause below cluster.min-workers) and each member's grants. (Part one, start-up, progress
// and the stop: run_control.cpp.)
#include "control/run_control.hpp"

#include "common/log.hpp"

#include <algorithm>

namespace actorps {

namespace {

using kind = run_command::kind;

// A member whose process trains for the run (or has just finished it).
bool is_live(member m) {
  return m == member::registered || m == member::training || m == member::finished;
}

} // namespace

uint32_t run_control::live_workers() const {
  return static_cast<uint32_t>(std::count_if(members_.begin(), members_.end(), is_live));
}

bool run_control::all_reported() const {
  return std::all_of(members_.begin(), members_.end(), [](member m) {
    return m == member::finished || m == member::gone || m == member::left || m == member::admitted
           || m == member::absent;
  });
}

bool run_control::paused() const {
  return cfg_.elastic && phase_ == run_phase::training && live_workers() < cfg_.min_workers;
}

bool run_control::may_train(uint32_t j) const {
  return phase_ == run_phase::training && !paused() && j < members_.size() && members_[j] == member::training;
}

// Makes room for worker id j (elastic ids above the configured workers).
void run_control::grow(uint32_t j) {
  if (j >= members_.size()) {
    members_.resize(j + 1, member::absent);
    grants_.grow(j);
  }
}

// Logs and records a join, leave or crash with the new live count, and the pause it starts or ends.
void run_control::membership_changed(const char* event, uint32_t j, bool was_paused, run_time now,
                                     run_commands& out) {
  run_command c{kind::membership};
  c.text = event;
  c.index = j;
  c.workers = live_workers();
  c.step = steps_;
  out.push_back(std::move(c));
  if (!was_paused && paused()) {
    pause_deadline_ = now + cfg_.startup_timeout;
    out.push_back(run_command::log(cat("training paused: ", live_workers(), " live worker(s), cluster.min-workers is ",
                                       cfg_.min_workers, ": waiting for ", cfg_.min_workers - live_workers(),
                                       " more to join (cluster.startup-timeout)")));
    run_command t{kind::tick};
    t.after = reminder;
    out.push_back(std::move(t));
  } else if (was_paused && !paused() && phase_ == run_phase::training) {
    out.push_back(run_command::log(cat("training resumes with ", live_workers(), " workers")));
  }
}

std::string run_control::missing() const {
  if (phase_ == run_phase::init_shards)
    return cat(flight_.setups, " shard(s) to answer their setup");
  std::string out;
  for (uint32_t j = 0; j < members_.size(); ++j)
    if (members_[j] == member::absent)
      out += (out.empty() ? "" : ", ") + worker_name(j);
  return out;
}

std::vector<uint32_t> run_control::members() const {
  std::vector<uint32_t> out;
  for (uint32_t j = 0; j < members_.size(); ++j)
    if (is_live(members_[j]))
      out.push_back(j);
  return out;
}

run_admission run_control::worker_registered(uint32_t j, run_time now) {
  run_admission out;
  // (elastic: a restarted chief takes back the joiners of the run it continues)
  bool rejoining_id = cfg_.elastic && j < cfg_.workers + cfg_.max_workers
                      && (phase_ == run_phase::init_shards || phase_ == run_phase::waiting);
  if (j >= members_.size() && !rejoining_id) {
    out.code = errc::unknown_worker;
    out.text = cat("worker ", j, " registered but cluster.workers lists ", cfg_.workers, " workers",
                   cfg_.elastic ? " (a joiner gets its id from node.join)" : "");
    return out;
  }
  grow(j);
  if (members_[j] == member::admitted && phase_ == run_phase::training) { // an elastic joiner
    if (live_workers() >= cfg_.max_workers) { // (admissions hold no place: the capacity counts here)
      members_[j] = member::absent;
      out.code = errc::cluster_full;
      out.text = cat("worker ", j, " registered after its join, but the job has ", live_workers(),
                     " workers and cluster.max-workers is ", cfg_.max_workers);
      return out;
    }
    start_member(j, "join", now, out);
    return out;
  }
  if (cfg_.max_steps > 0 && cfg_.workers / cfg_.slices == 1 && cfg_.mode != train_mode::sync && !cfg_.elastic)
    out.steps_left = std::max<int64_t>(0, cfg_.max_steps - steps_); // its steps are the global steps
  switch (phase_) {
    case run_phase::init_shards:
    case run_phase::waiting: {
      members_[j] = member::registered;
      if (phase_ == run_phase::waiting) {
        grant_first(j, out);
      } else if (cfg_.grant_steps > 0) { // the global step is known once every shard answered
        grant_at_start(j, out);           // (kept variables move it)
      }
      auto joined = std::count_if(members_.begin(), members_.end(), [](member m) { return m != member::absent; });
      out.then.push_back(run_command::log(cat("worker ", j, " registered (", joined, " of ", members_.size(), ")")));
      if (phase_ == run_phase::waiting && joined == static_cast<long>(members_.size()))
        start_training(now, out.then);
      return out;
    }
    case run_phase::training:
    case run_phase::stopping:
      if (members_[j] == member::gone && phase_ == run_phase::training) { // a restarted worker rejoins
        start_member(j, "rejoin", now, out);
        return out;
      }
      out.code = errc::protocol_error;
      out.text = members_[j] == member::gone ? cat(worker_name(j), " registered while the run is stopping")
                                             : cat(worker_name(j), " registered after training started, while worker ",
                                                   j, " is still a member");
      return out;
    default:
      out.code = errc::protocol_error;
      out.text = cat(worker_name(j), " registered after training ended");
      return out;
  }
}

// Worker j (an admitted joiner, or a restarted worker) trains from now on: its grant, the log
// line, the membership record (elastic) and its start.
void run_control::start_member(uint32_t j, const char* event, run_time now, run_admission& out) {
  bool was_paused = paused();
  members_[j] = member::training;
  grant_first(j, out);
  out.then.push_back(run_command::log(std::string{event} == "join"
                                        ? cat("worker ", j, " joined: ", live_workers(), " workers")
                                        : cat(worker_name(j), " rejoined")));
  if (cfg_.elastic)
    membership_changed(event, j, was_paused, now, out.then);
  run_command c{kind::start_worker};
  c.index = j;
  out.then.push_back(std::move(c));
}

run_admission run_control::worker_joining(run_time now) {
  run_admission out;
  // Joiners that never registered give their place back after join_register_deadline: a real
  // joiner registers a round trip after its admission, and forged joins filling the table kept
  // real joiners out for the whole request timeout.
  const auto deadline = std::min<std::chrono::milliseconds>(cfg_.request_timeout, join_register_deadline);
  for (auto it = admitted_at_.begin(); it != admitted_at_.end();) {
    if (members_[it->first] == member::admitted && now - it->second > deadline) {
      members_[it->first] = member::absent;
      out.then.push_back(run_command::log(cat("worker ", it->first, " never registered after its join; the id is free again")));
    }
    it = members_[it->first] == member::admitted ? std::next(it) : admitted_at_.erase(it);
  }
  if (!cfg_.elastic) {
    out.code = errc::unknown_worker;
    out.text = cat("a worker asked to join, but this cluster takes only the ", cfg_.workers,
                   " workers cluster.workers lists (set cluster.elastic for joins)");
    return out;
  }
  if (phase_ != run_phase::training) {
    out.code = errc::protocol_error;
    out.text = cat("a worker asked to join while the run is ", to_string(phase_), " (joins are taken while training)");
    return out;
  }
  // Admitted joiners hold no place (one that never registers keeps nobody out); they are
  // bounded apart, so that join requests alone cannot grow the member table.
  auto members = live_workers();
  auto pending = static_cast<uint32_t>(std::count(members_.begin(), members_.end(), member::admitted));
  if (members >= cfg_.max_workers || pending >= cfg_.max_workers) {
    out.code = errc::cluster_full;
    out.text = members >= cfg_.max_workers
                 ? cat("a worker asked to join, but the job has ", members, " workers and cluster.max-workers is ",
                       cfg_.max_workers)
                 : cat("a worker asked to join, but ", pending, " joiners have not registered yet (cluster.max-workers is ",
                       cfg_.max_workers, ")");
    return out;
  }
  // The lowest id above the configured ones that no member holds (a configured worker's id
  // stays its own: a restart of it registers under it again).
  uint32_t j = cfg_.workers;
  while (j < members_.size() && members_[j] != member::absent && members_[j] != member::left
         && members_[j] != member::gone)
    ++j;
  grow(j);
  members_[j] = member::admitted;
  admitted_at_[j] = now;
  out.index = j;
  out.then.push_back(run_command::log(cat("a worker joins as worker ", j)));
  return out;
}

run_commands run_control::worker_left(uint32_t j, run_time now) {
  run_commands out;
  if (j >= members_.size() || !is_live(members_[j]))
    return out;
  if (cfg_.mode == train_mode::model_parallel)
    return worker_down(j, "it left", now);
  bool was_paused = paused();
  members_[j] = member::left;
  grants_.release(j);
  out.push_back(run_command::log(cat(worker_name(j), " left: ", live_workers(), " workers")));
  if (phase_ == run_phase::training || phase_ == run_phase::stopping)
    membership_changed("leave", j, was_paused, now, out);
  if (live_workers() == 0 && !cfg_.elastic && phase_ == run_phase::training)
    return fail(errc::peer_unreachable, cat("every worker left (the last: ", worker_name(j), ")"));
  for (uint32_t k = 0; phase_ == run_phase::training && k < members_.size(); ++k)
    if (members_[k] == member::training)
      top_up(k, out);
  if (cfg_.max_steps > 0 && live_workers() > 0) // (the others stopped at the step limit: so does the run)
    stop_if_all_stopped(out);
  if (phase_ == run_phase::stopping && all_reported())
    begin_finish(out);
  return out;
}

run_commands run_control::worker_down(uint32_t j, const std::string& why, run_time now, errc code) {
  run_commands out;
  if (j >= members_.size() || phase_ == run_phase::done)
    return out;
  auto& m = members_[j];
  if (m == member::absent || m == member::finished || m == member::gone || m == member::left)
    return out;
  grants_.release(j); // its steps go back to the pool
  if (phase_ == run_phase::init_shards || phase_ == run_phase::waiting) {
    m = member::absent;
    out.push_back(run_command::log(cat(worker_name(j), " went down before training started (", why,
                              "); waiting for it to register again")));
    return out;
  }
  if (phase_ != run_phase::training && phase_ != run_phase::stopping) {
    m = member::gone; // the run no longer needs it
    return out;
  }
  if (code == errc::non_finite)
    return fail(errc::non_finite, cat("training diverged: ", worker_name(j), " went down (", why, ")"));
  if (cfg_.mode == train_mode::model_parallel)
    return fail(errc::peer_unreachable, cat("lost a worker: ", worker_name(j), " went down (", why,
                                            "); in model-parallel mode its group cannot go on without its slice"));
  bool was_paused = paused();
  m = member::gone;
  ++workers_lost_;
  auto live = live_workers();
  if (cfg_.elastic)
    membership_changed("crash", j, was_paused, now, out);
  if (live == 0 && !cfg_.elastic)
    return fail(errc::peer_unreachable, cat("lost every worker: ", worker_name(j), " went down (", why, ")"));
  out.push_back(run_command::log(cat(worker_name(j), " went down (", why, "); training goes on with ", live,
                            " worker(s)", j < cfg_.workers ? cat("; a restarted worker ", j, " rejoins") : std::string{})));
  for (uint32_t k = 0; phase_ == run_phase::training && k < members_.size(); ++k)
    if (members_[k] == member::training) // a worker waiting for a grant takes the lost one's steps
      top_up(k, out);
  // (ssp: the others had stopped out of steps; nobody takes the lost one's. Elastic with nobody
  // left: training pauses for joiners instead.)
  if (cfg_.max_steps > 0 && (!cfg_.elastic || live_workers() > 0) && !cfg_.in_graph)
    stop_if_all_stopped(out);
  if (phase_ == run_phase::stopping && all_reported())
    begin_finish(out);
  return out;
}

// An admitted worker's first grant, in its welcome.
void run_control::grant_first(uint32_t j, run_admission& out) {
  if (cfg_.grant_steps == 0)
    return;
  if (cfg_.slices > 1)
    return grant_at_start(j, out);
  grants_.release(j);
  out.steps_left = grants_.grant(j, steps_, examples_);
  out.more = !grants_.out_of_steps(j, steps_); // (ssp: nothing left for it: it stops at once)
}

// Keeps worker j's grant full while steps are left, so it never waits on the chief but at the end.
// A welcome whose grant comes at the start (the global step is known once every shard answered;
// model-parallel: once the group is complete). Model-parallel: a group's grant goes to its first
// slice, whose reports count the group's steps; the others take no limit and follow it through
// their exchange (they wait for its parts, and stop where it stops).
void run_control::grant_at_start(uint32_t j, run_admission& out) {
  const bool follows = cfg_.slices > 1 && j % cfg_.slices != 0;
  out.steps_left = follows ? -1 : 0;
  out.more = !follows;
}

void run_control::top_up(uint32_t j, run_commands& out) {
  if (cfg_.grant_steps == 0 || j % cfg_.slices != 0) // (model-parallel: the group's first slice)
    return;
  if (auto give = grants_.grant(j, steps_, examples_); give > 0) {
    run_command c{kind::grant};
    c.index = j;
    c.step = give;
    out.push_back(std::move(c));
  } else if (grants_.out_of_steps(j, steps_)) {
    run_command c{kind::stop_worker};
    c.index = j;
    out.push_back(std::move(c));
  }
}

} // namespace actorps
