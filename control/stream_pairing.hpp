// The pairing of a tensor stream's typed messages with their frames (issue 48), as plain code:
// one side's exchanges in flight by transfer id, each in a phase: awaiting its typed message (a
// request sent and its reply due; or, on the ps node, a push its link promised), then, where
// frames follow the message, awaiting them; complete once both are in. The stream carries a
// message ahead of its frames, so frames that complete before their message, or a second
// message, come only from a peer out of step (the stream should close). An exchange still
// waiting a whole deadline's ticks after it began is late. The owner keeps what each exchange
// holds (Payload: its promise, its tensors' destinations, its reply) here and carries out what
// the calls return. Single-threaded.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace actorps {

/// Where an exchange stands.
enum class pairing_phase { awaiting_message, awaiting_frames };

/// What a message or frames did to an exchange: it is complete (take() it), it waits for its
/// frames, no exchange has that id (a late answer: ignore it), or the peer is out of step.
enum class pairing_outcome { complete, waiting, unknown, out_of_order };

template <class Payload>
class stream_pairing {
public:
  /// A new exchange whose message is due, begun at `tick`; false (nothing changes) where the id
  /// is in use.
  bool begin(uint64_t transfer, Payload payload, uint64_t tick) {
    return entries_.emplace(transfer, entry{std::move(payload), pairing_phase::awaiting_message, tick}).second;
  }

  /// Its typed message arrived; frames_follow: its tensors come behind it as frames.
  pairing_outcome on_message(uint64_t transfer, bool frames_follow) {
    auto it = entries_.find(transfer);
    if (it == entries_.end())
      return pairing_outcome::unknown;
    if (it->second.at != pairing_phase::awaiting_message)
      return pairing_outcome::out_of_order;
    if (!frames_follow)
      return pairing_outcome::complete;
    it->second.at = pairing_phase::awaiting_frames;
    return pairing_outcome::waiting;
  }

  /// Its frames are all in.
  pairing_outcome on_frames(uint64_t transfer) const {
    auto it = entries_.find(transfer);
    if (it == entries_.end())
      return pairing_outcome::unknown;
    return it->second.at == pairing_phase::awaiting_frames ? pairing_outcome::complete : pairing_outcome::out_of_order;
  }

  /// The exchange's payload while it is in flight (nullptr: none).
  Payload* find(uint64_t transfer) {
    auto it = entries_.find(transfer);
    return it == entries_.end() ? nullptr : &it->second.payload;
  }

  /// The exchange's phase (nullopt: none).
  std::optional<pairing_phase> phase(uint64_t transfer) const {
    auto it = entries_.find(transfer);
    return it == entries_.end() ? std::nullopt : std::optional<pairing_phase>{it->second.at};
  }

  /// Ends the exchange (complete, refused or failed) and hands its payload back.
  std::optional<Payload> take(uint64_t transfer) {
    auto it = entries_.find(transfer);
    if (it == entries_.end())
      return std::nullopt;
    auto out = std::move(it->second.payload);
    entries_.erase(it);
    return out;
  }

  /// Ends every exchange (the stream closed), handing their payloads back in id order.
  std::vector<Payload> take_all() {
    std::vector<Payload> out;
    for (auto& [id, e] : entries_)
      out.push_back(std::move(e.payload));
    entries_.clear();
    return out;
  }

  /// Whether an exchange begun at or before tick - (per_deadline + 1) is still in flight: it has
  /// waited at least `per_deadline` whole tick intervals for its answer (ticks a quarter of a
  /// deadline apart, per_deadline 4: late between one deadline and 1.25 after it began).
  bool any_late(uint64_t tick, uint64_t per_deadline = 1) const {
    for (const auto& [id, e] : entries_)
      if (e.born + per_deadline < tick)
        return true;
    return false;
  }

  /// Exchanges in flight in `phase`.
  size_t count(pairing_phase at) const {
    size_t n = 0;
    for (const auto& [id, e] : entries_)
      n += e.at == at ? 1 : 0;
    return n;
  }

  /// Calls f(id, payload) for every exchange in `phase`.
  template <class F>
  void each(pairing_phase at, F&& f) const {
    for (const auto& [id, e] : entries_)
      if (e.at == at)
        f(id, e.payload);
  }

  size_t size() const { return entries_.size(); }

private:
  struct entry {
    Payload payload;
    pairing_phase at;
    uint64_t born;
  };

  std::map<uint64_t, entry> entries_;
};

} // namespace actorps
