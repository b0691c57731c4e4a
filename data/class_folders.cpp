// Listing class folders (see class_folders.hpp).
#include "data/class_folders.hpp"

#include "common/errc.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <filesystem>
#include <random>

namespace actorps {

namespace fs = std::filesystem;

namespace {

caf::error bad(errc code, const std::string& what) {
  return caf::make_error(code, what);
}

using wanted_fn = std::function<bool(const std::string& path)>;

// The sorted names of dir's folders (dirs) or wanted files; file_error naming an entry that
// cannot be looked at (a symbolic link in a loop: ELOOP, which the throwing forms raised uncaught).
caf::expected<std::vector<std::string>> sorted_entries(const fs::path& dir, bool dirs, const wanted_fn& wanted) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto& e : fs::directory_iterator(dir, ec)) {
    std::error_code kind;
    const bool take = dirs ? e.is_directory(kind) : (e.is_regular_file(kind) && wanted(e.path().string()));
    if (kind && kind != std::errc::no_such_file_or_directory) // (a dangling link is no entry of either kind)
      return bad(errc::file_error, cat(e.path().string(), ": cannot be read (", kind.message(), ")"));
    if (take)
      out.push_back(e.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The wanted files of one set's class folders, labelled by train/'s order.
caf::expected<class_folder_set> list_set(const fs::path& set, const std::vector<std::string>& classes,
                                         const wanted_fn& wanted, const std::string& kinds) {
  class_folder_set out;
  out.name = set.filename().string();
  auto names = sorted_entries(set, true, wanted);
  if (!names)
    return std::move(names.error());
  for (auto& name : *names) {
    auto at = std::find(classes.begin(), classes.end(), name);
    if (at == classes.end())
      return bad(errc::corrupt_data, cat((set / name).string(), ": a class train/ does not have (its classes: ",
                                         classes.size(), " folders under train/)"));
    auto files = sorted_entries(set / name, false, wanted);
    if (!files)
      return std::move(files.error());
    if (files->empty())
      return bad(errc::corrupt_data, cat((set / name).string(), ": an empty class folder (no ", kinds, ")"));
    for (auto& f : *files) {
      out.files.push_back((set / name / f).string());
      out.labels.push_back(static_cast<int>(at - classes.begin()));
    }
  }
  if (out.files.empty())
    return bad(errc::corrupt_data, cat(set.string(), ": no class folders"));
  return out;
}

// One fixed-seed shuffle of a set's examples.
void shuffle(class_folder_set& set) {
  std::vector<size_t> order(set.files.size());
  for (size_t i = 0; i < order.size(); ++i)
    order[i] = i;
  std::mt19937_64 rng{20161101};
  for (size_t i = order.size(); i > 1; --i)
    std::swap(order[i - 1], order[static_cast<size_t>(rng() % i)]);
  class_folder_set out;
  out.name = set.name;
  for (auto i : order) {
    out.files.push_back(set.files[i]);
    out.labels.push_back(set.labels[i]);
  }
  set = std::move(out);
}

} // namespace

caf::expected<class_folders> list_class_folders(const std::string& root, const wanted_fn& wanted,
                                                const std::string& kinds) {
  const fs::path base{root};
  class_folders out;
  auto found = sorted_entries(base / "train", true, wanted);
  if (!found)
    return std::move(found.error());
  out.classes = std::move(*found);
  if (out.classes.empty())
    return bad(errc::corrupt_data, cat((base / "train").string(), ": no class folders (train/<class>/ of ", kinds, ")"));
  for (auto name : {"train", "test", "val"}) {
    std::error_code ec;
    if (std::string{name} == "val" && !fs::is_directory(base / name, ec))
      continue;
    if (!fs::is_directory(base / name, ec))
      return bad(errc::file_error, cat((base / name).string(), ": missing (a class folder data set has train/ and test/)"));
    auto set = list_set(base / name, out.classes, wanted, kinds);
    if (!set)
      return std::move(set.error());
    shuffle(*set);
    out.sets.push_back(std::move(*set));
  }
  return out;
}

} // namespace actorps
