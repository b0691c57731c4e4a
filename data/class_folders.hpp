// Class folders, as Keras' *_dataset_from_directory and torchvision's ImageFolder read them:
// root/train/<class>/..., root/test/<class>/... and optionally root/val/<class>/...; the classes
// are train/'s sub-folders in sorted order. Shared by the image folder and the text corpus.
#pragma once

#include <caf/expected.hpp>

#include <functional>
#include <string>
#include <vector>

namespace actorps {

/// One set's files and their labels (indices into the classes), shuffled once with a fixed seed
/// (class folders are read in order: the shuffle lets a validation split hold every class).
struct class_folder_set {
  std::string name; ///< "train", "test" or "val"
  std::vector<std::string> files;
  std::vector<int> labels;
};

struct class_folders {
  std::vector<std::string> classes;
  std::vector<class_folder_set> sets; ///< train, test, then val when root has one
};

/// Lists root's sets, keeping the files `wanted` accepts (by path). Errors name the folder or
/// entry: no train/ or test/, no class folders, a class folder with no wanted file (`kinds` says
/// which files count, e.g. ".png, .jpg or .jpeg files"), a class that train/ lacks, an entry that
/// cannot be read.
caf::expected<class_folders> list_class_folders(const std::string& root,
                                                const std::function<bool(const std::string& path)>& wanted,
                                                const std::string& kinds);

} // namespace actorps
