// Elastic training's data leases and the per-epoch exact example count.
#include "data/epoch_ledger.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"
#include "data/batcher.hpp"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <utility>

namespace actorps {

epoch_ledger::epoch_ledger(int rows, int lease_rows, uint64_t seed, int64_t first_epoch)
  : rows_(rows), lease_rows_(lease_rows), seed_(seed), newest_(first_epoch) {
}

epoch_ledger::epoch_state& epoch_ledger::epoch(int64_t e) {
  auto it = epochs_.find(e);
  if (it != epochs_.end())
    return it->second;
  auto& st = epochs_[e];
  st.order = epoch_order({0, rows_}, seed_, static_cast<long>(e));
  st.seen.assign(static_cast<size_t>(rows_), 0);
  return st;
}

lease_grant epoch_ledger::take(uint32_t worker) {
  lease_grant out;
  out.id = next_id_++;
  bool found = false;
  for (auto& [e, st] : epochs_) { // a returned piece of the oldest epoch first
    if (st.returned.empty())
      continue;
    auto p = st.returned.front();
    st.returned.pop_front();
    if (p.end - p.begin > lease_rows_) {
      st.returned.push_front({p.begin + lease_rows_, p.end});
      p.end = p.begin + lease_rows_;
    }
    st.reissued += p.end - p.begin;
    out.epoch = e;
    out.begin = p.begin;
    out.end = p.end;
    found = true;
    break;
  }
  if (!found) {
    if (epoch(newest_).fresh >= rows_)
      ++newest_;
    auto& st = epoch(newest_);
    out.epoch = newest_;
    out.begin = st.fresh;
    out.end = std::min(rows_, st.fresh + lease_rows_);
    st.fresh = out.end;
  }
  open_.emplace(out.id, open_lease{worker, out});
  return out;
}

void epoch_ledger::give_back(const lease_grant& lease, int from) {
  if (from < lease.end)
    epoch(lease.epoch).returned.push_back({from, lease.end});
}

caf::error epoch_ledger::report(uint32_t worker, uint64_t id, int done) {
  auto it = open_.find(id);
  if (it == open_.end() || it->second.worker != worker)
    return caf::make_error(errc::protocol_error, cat("worker ", worker, " reported data lease ", id,
                                                     ", which is not one of its open leases"));
  auto lease = it->second.grant;
  if (done < 0 || done > lease.size())
    return caf::make_error(errc::protocol_error, cat("worker ", worker, " reported ", done, " examples of data lease ",
                                                     id, ", which has ", lease.size()));
  open_.erase(it);
  auto& st = epoch(lease.epoch);
  for (int p = lease.begin; p < lease.begin + done; ++p) {
    if (st.seen[static_cast<size_t>(p)]++ > 0)
      ++st.duplicates;
    else
      ++st.examples;
  }
  reported_ += done;
  give_back(lease, lease.begin + done);
  close_finished();
  return caf::none;
}

int64_t epoch_ledger::release(uint32_t worker) {
  int64_t back = 0;
  for (auto it = open_.begin(); it != open_.end();) {
    if (it->second.worker != worker) {
      ++it;
      continue;
    }
    give_back(it->second.grant, it->second.grant.begin);
    back += it->second.grant.size();
    it = open_.erase(it);
  }
  return back;
}

std::vector<int32_t> epoch_ledger::indices(const lease_grant& lease) const {
  auto& order = epochs_.at(lease.epoch).order;
  return std::vector<int32_t>(order.begin() + lease.begin, order.begin() + lease.end);
}

// An epoch closes once every position was reported and no lease of it is open.
void epoch_ledger::close_finished() {
  for (auto it = epochs_.begin(); it != epochs_.end();) {
    auto e = it->first;
    bool leased = std::any_of(open_.begin(), open_.end(), [e](auto& x) { return x.second.grant.epoch == e; });
    if (it->second.examples < rows_ || leased) {
      ++it;
      continue;
    }
    completed_.push_back({e, it->second.examples, it->second.duplicates, it->second.reissued});
    if (e == newest_)
      ++newest_; // (handed out whole: the next take opens the next epoch)
    it = epochs_.erase(it);
  }
}

std::vector<epoch_tally> epoch_ledger::take_completed() {
  return std::exchange(completed_, {});
}

// [newest, next_id, reported, epochs, then per epoch: epoch, fresh, examples, duplicates,
//  reissued, pieces, begin, end, ...]
std::vector<int64_t> epoch_ledger::save() const {
  std::vector<int64_t> out{newest_, static_cast<int64_t>(next_id_), reported_, static_cast<int64_t>(epochs_.size())};
  for (auto& [e, st] : epochs_) {
    std::vector<piece> back(st.returned.begin(), st.returned.end());
    for (auto& [id, lease] : open_)
      if (lease.grant.epoch == e)
        back.push_back({lease.grant.begin, lease.grant.end});
    for (int64_t x : {e, int64_t{st.fresh}, st.examples, st.duplicates, st.reissued, static_cast<int64_t>(back.size())})
      out.push_back(x);
    for (auto& p : back) {
      out.push_back(p.begin);
      out.push_back(p.end);
    }
  }
  return out;
}

caf::error epoch_ledger::load(const std::vector<int64_t>& saved) {
  size_t at = 0;
  auto next = [&](int64_t lo, int64_t hi, const char* what) -> caf::expected<int64_t> {
    if (at >= saved.size())
      return caf::make_error(errc::corrupt_data, cat("the checkpoint's data plan ends before ", what));
    auto x = saved[at++];
    if (x < lo || x > hi)
      return caf::make_error(errc::corrupt_data, cat("the checkpoint's data plan has ", what, " ", x, " outside [", lo,
                                                     ", ", hi, "] (a training set of ", rows_, " examples?)"));
    return x;
  };
  constexpr int64_t big = INT64_MAX / 2;
  epoch_ledger fresh_ledger{rows_, lease_rows_, seed_};
  auto& l = fresh_ledger;
  auto newest = next(0, big, "the newest epoch");
  auto ids = next(1, big, "the next lease id");
  auto reported = next(0, big, "the examples reported");
  auto count = next(0, 1000, "the open epochs");
  if (!newest || !ids || !reported || !count)
    return !newest ? newest.error() : !ids ? ids.error() : !reported ? reported.error() : count.error();
  l.newest_ = *newest;
  l.next_id_ = static_cast<uint64_t>(*ids);
  l.reported_ = *reported;
  for (int64_t k = 0; k < *count; ++k) {
    int64_t f[6];
    const char* names[6] = {"an epoch", "a handed-out position", "an example count", "a duplicate count",
                            "a reissue count", "a piece count"};
    const int64_t hi[6] = {big, rows_, rows_, big, big, rows_};
    for (int i = 0; i < 6; ++i) {
      auto x = next(0, hi[i], names[i]);
      if (!x)
        return x.error();
      f[i] = *x;
    }
    auto& st = l.epoch(f[0]);
    st.fresh = static_cast<int>(f[1]);
    st.examples = f[2];
    st.duplicates = f[3];
    st.reissued = f[4];
    std::fill(st.seen.begin(), st.seen.begin() + st.fresh, uint8_t{1});
    for (int64_t p = 0; p < f[5]; ++p) {
      auto b = next(0, st.fresh, "a piece's start");
      auto e = b ? next(*b, st.fresh, "a piece's end") : b;
      if (!b || !e)
        return !b ? b.error() : e.error();
      st.returned.push_back({static_cast<int>(*b), static_cast<int>(*e)});
      std::fill(st.seen.begin() + *b, st.seen.begin() + *e, uint8_t{0});
    }
  }
  if (at != saved.size())
    return caf::make_error(errc::corrupt_data, cat("the checkpoint's data plan has ", saved.size() - at,
                                                   " numbers too many"));
  *this = std::move(fresh_ledger);
  return caf::none;
}

size_t epoch_ledger::open_leases(uint32_t worker) const {
  return static_cast<size_t>(
    std::count_if(open_.begin(), open_.end(), [worker](auto& x) { return x.second.worker == worker; }));
}

} // namespace actorps
