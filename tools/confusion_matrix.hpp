// A classifier's results on a labelled set: mean cross-entropy loss, accuracy, per-class accuracy
// and the confusion matrix (rows: true class, columns: predicted class), as a table and as JSON.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace actorps {

class confusion_matrix {
public:
  explicit confusion_matrix(int classes);

  /// Adds rows examples: their logits (rows x classes, row-major) and labels (class indices).
  /// The prediction is the first class with the largest logit. REQUIRES: labels < classes.
  void add(const float* logits, const float* labels, int rows);

  int classes() const { return classes_; }
  int64_t examples() const { return examples_; }
  /// Examples of true class `label` predicted as `predicted`.
  int64_t count(int label, int predicted) const;
  double loss() const;     ///< mean cross-entropy (natural log)
  double accuracy() const; ///< fraction predicted right (0 with no examples)
  /// Per class: the fraction of its examples predicted right; negative when it has none.
  std::vector<double> class_accuracy() const;

  /// The per-class accuracies and the matrix as aligned text, one line per class.
  /// `names` (by class, optional) label the rows: "  9 Ankle boot".
  std::string table(const std::vector<std::string>& names = {}) const;

  /// {"examples", "loss", "accuracy", "class_accuracy" (null for absent classes), "confusion"}.
  std::string json() const;

private:
  int classes_;
  int64_t examples_ = 0;
  double loss_sum_ = 0.0;
  std::vector<int64_t> counts_; // classes x classes
};

} // namespace actorps
