// Places for distinct row ids, in the order they first come (0, 1, 2, ...), by open addressing
// in one flat table of 8-byte entries (the id + 1 and its place): no allocation per id, one cache
// line per probe. A batch's touched rows (model/embedding_layer) and a sync step's merged row
// gradients (control/sync_rules) find each id's place through it. The table grows as ids come
// (at most half full), so it stays the size of the most ids a use has placed, not of the most
// it could: a text-hash batch's 4,400 of up to 20,000 ids take 128 KB instead of 512 KB, which
// stays in the caches between one process's steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace actorps {

class row_places {
public:
  /// A table with room for `capacity` distinct ids between clears before it grows (it holds
  /// twice as many entries).
  explicit row_places(size_t capacity = 0) : entries_(table_size(capacity)), mask_(entries_.size() - 1) {}

  /// The place of id (< 2^32 - 1): the one it was given, or `next` for an id not seen since the
  /// last clear (and then true).
  std::pair<uint32_t, bool> place(uint32_t id, uint32_t next) {
    const uint32_t key = id + 1;
    size_t at = slot_of(key);
    if (entries_[at].key == key)
      return {entries_[at].place, false};
    if (2 * (used_ + 1) > entries_.size()) {
      grow();
      at = slot_of(key);
    }
    entries_[at] = {key, next};
    ++used_;
    return {next, true};
  }

  /// Asks for the cache line of id's first probe (a loop over scattered ids, ahead of place()).
  void prefetch(uint32_t id) const { __builtin_prefetch(&entries_[home(id)], 1); }

  /// Forgets the ids listed (each placed since the last clear): the table is empty again for the
  /// next use, at the cost of those ids alone.
  template <class Ids>
  void clear(const Ids& ids) {
    for (auto id : ids) {
      const uint32_t key = static_cast<uint32_t>(id) + 1;
      size_t at = home(static_cast<uint32_t>(id));
      while (entries_[at].key != key)
        at = (at + 1) & mask_;
      entries_[at].key = 0;
    }
    used_ = 0;
    // (an entry after a cleared one may now sit past an empty slot: every id placed since the
    // last clear is cleared together, so none is looked up again)
  }

private:
  struct entry {
    uint32_t key = 0; // the id + 1; 0: empty
    uint32_t place = 0;
  };

  static size_t table_size(size_t capacity) {
    size_t n = 2;
    while (n < 2 * capacity)
      n <<= 1;
    return n;
  }

  // Where key (an id + 1) is, or the empty entry where it would go.
  size_t slot_of(uint32_t key) const {
    size_t at = home(key - 1);
    while (entries_[at].key != 0 && entries_[at].key != key)
      at = (at + 1) & mask_;
    return at;
  }

  // Twice the entries, the ids placed so far moved over with their places.
  void grow() {
    std::vector<entry> old(entries_.size() * 2);
    old.swap(entries_);
    mask_ = entries_.size() - 1;
    for (const auto& e : old)
      if (e.key != 0)
        entries_[slot_of(e.key)] = e;
  }

  size_t home(uint32_t id) const {
    return static_cast<size_t>((uint64_t{id} * 0x9E3779B97F4A7C15ull) >> 17) & mask_;
  }

  std::vector<entry> entries_;
  size_t mask_;     // entries_.size() - 1 (a power of two less one)
  size_t used_ = 0; // ids placed since the last clear
};

} // namespace actorps
