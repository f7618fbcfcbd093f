// Decision-tree ensembles shared by TreeEnsembleRegressor, TreeEnsembleClassifier (ml opsets
// 1 and 3) and TreeEnsemble (ml opset 5): trees flattened into one node array, each row sent
// down every tree to one leaf, the leaves' weights aggregated per target in double.
#pragma once

#include <cstdint>
#include <vector>

#include "backend/ref/ops/ml_util.h"

namespace parity::ref::ml {

enum class BranchMode { kLeq, kLt, kGte, kGt, kEq, kNeq, kMember };

// A child reference: >= 0 is an index into `nodes`, < 0 is leaf ~ref.
using TreeRef = int64_t;
inline TreeRef leaf_ref(int64_t leaf) { return ~leaf; }

struct TreeNode {
  int64_t feature = 0;
  double split = 0;
  BranchMode mode = BranchMode::kLeq;
  bool missing_tracks_true = false;
  TreeRef if_true = 0, if_false = 0;
  std::vector<double> members;  // kMember
};

struct TreeLeaf {
  std::vector<std::pair<int64_t, double>> weights;  // (target or class, weight)
};

enum class Aggregate { kSum, kAverage, kMin, kMax };

struct TreeEnsembleModel {
  std::vector<TreeNode> nodes;
  std::vector<TreeLeaf> leaves;
  std::vector<TreeRef> roots;  // one per tree, in the order trees are evaluated
  int64_t num_targets = 0;
  int64_t max_feature = -1;

  // The leaf a row of features reaches in tree t. Throws if the walk does not end (a cycle).
  int64_t leaf_of(int64_t t, const double* row) const;
  // The aggregated scores of one row (num_targets values); a target no leaf reached is 0.
  // `row` holds at least max_feature + 1 features.
  void scores(const double* row, Aggregate aggregate, double* out) const;
};

// The ensemble described by the attributes of TreeEnsembleRegressor / Classifier: nodes_*
// (one entry per node, LEAF nodes included) and the leaf weights of `prefix` ("target" or
// "class": <prefix>_treeids, _nodeids, _ids, _weights[_as_tensor]).
TreeEnsembleModel read_legacy_ensemble(const OpContext& ctx, const std::string& prefix,
                                       int64_t num_targets);

// Aggregate as named by TreeEnsembleRegressor's attribute.
Aggregate read_aggregate(const OpContext& ctx);

// Runs X (float, double, int64 or int32; [N, F] or [F]) through the ensemble: [N, targets]
// scores in double, with the number of rows.
std::vector<double> ensemble_scores(const TreeEnsembleModel& model, const Tensor& x,
                                    Aggregate aggregate, RunContext& ctx, int64_t* rows);

}  // namespace parity::ref::ml
