// ai.onnx.ml tree ensembles: TreeEnsembleRegressor, TreeEnsembleClassifier (ml opsets 1 and
// 3, whose *_as_tensor attributes carry double values) and TreeEnsemble (ml opset 5). The
// walk and the aggregation are in ml_tree_model.cc; here are the attributes and the outputs.
#include <cmath>

#include "backend/ref/ops/ml_tree.h"

namespace parity::ref::ml {
namespace {

// Y[N, n_targets] float: the aggregate of the leaves' weights, plus base_values, then the
// post_transform (applied to each row; with one target ONNX Runtime applies only PROBIT).
class TreeEnsembleRegressor : public Kernel {
 public:
  explicit TreeEnsembleRegressor(const OpContext& ctx)
      : targets_(ctx.attr_int("n_targets", 1)),
        model_(read_legacy_ensemble(ctx, "target", targets_)),
        aggregate_(read_aggregate(ctx)),
        transform_(read_post_transform(ctx)),
        base_(attr_doubles(ctx, "base_values")) {
    if (targets_ < 1) ctx.fail("attribute 'n_targets' is {}; it must be >= 1", targets_);
    if (!base_.empty())
      check_length(ctx, "base_values", base_.size(), size_t(targets_), "one per target");
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    int64_t n = 0;
    std::vector<double> s = ensemble_scores(model_, input_tensor(in, 0, "X"), aggregate_, ctx, &n);
    Tensor y(DataType::kFloat32, {n, targets_});
    for (int64_t i = 0; i < n; ++i) {
      double* row = s.data() + i * targets_;
      for (int64_t k = 0; k < int64_t(base_.size()); ++k) row[k] += base_[k];
      apply_post_transform(transform_, row, targets_);
      for (int64_t k = 0; k < targets_; ++k) y.data<float>()[i * targets_ + k] = float(row[k]);
    }
    return {y};
  }

 private:
  int64_t targets_;
  TreeEnsembleModel model_;
  Aggregate aggregate_;
  PostTransform transform_;
  std::vector<double> base_;
};
PARITY_REF_OP(kDomain, "TreeEnsembleRegressor", 1, kOpsetMax, TreeEnsembleRegressor);

// Y[N] labels and Z[N, classes] float scores: the sum of the leaves' class weights plus
// base_values. With two labels and weights for one class only (a binary model), that score s
// becomes the pair [1 - s, s] (post_transform NONE or PROBIT) or [-s, s] (otherwise) before
// the transform, as ONNX's reference implementation defines it. The label is the class of the
// highest transformed score, the first one on a tie.
class TreeEnsembleClassifier : public Kernel {
 public:
  explicit TreeEnsembleClassifier(const OpContext& ctx)
      : int_labels_(ctx.attr_ints("classlabels_int64s", {})),
        string_labels_(ctx.attr_strings("classlabels_strings", {})),
        classes_(int64_t(std::max(int_labels_.size(), string_labels_.size()))),
        model_(read_legacy_ensemble(ctx, "class", classes_)),
        transform_(read_post_transform(ctx)),
        base_(attr_doubles(ctx, "base_values")) {
    if (int_labels_.empty() == string_labels_.empty())
      ctx.fail(
          "exactly one of attributes 'classlabels_int64s' and 'classlabels_strings' must "
          "be set; {} are",
          int_labels_.empty() ? "neither" : "both");
    if (!base_.empty())
      check_length(ctx, "base_values", base_.size(), size_t(classes_), "one per class label");
    std::vector<int64_t> ids = ctx.attr_ints("class_ids", {});
    binary_column_ = -1;
    if (classes_ == 2 && !ids.empty() &&
        std::all_of(ids.begin(), ids.end(), [&](int64_t id) { return id == ids[0]; }))
      binary_column_ = ids[0];
  }
  Outputs run(const Inputs& in, RunContext& ctx) override {
    int64_t n = 0;
    std::vector<double> s =
        ensemble_scores(model_, input_tensor(in, 0, "X"), Aggregate::kSum, ctx, &n);
    Tensor z(DataType::kFloat32, {n, classes_});
    Tensor y(string_labels_.empty() ? DataType::kInt64 : DataType::kString, {n});
    for (int64_t i = 0; i < n; ++i) {
      double* row = s.data() + i * classes_;
      for (int64_t k = 0; k < int64_t(base_.size()); ++k) row[k] += base_[k];
      if (binary_column_ >= 0) {
        const double score = row[binary_column_];
        row[1] = score;
        row[0] = transform_ == PostTransform::kNone || transform_ == PostTransform::kProbit
                     ? 1 - score
                     : -score;
      }
      apply_post_transform(transform_, row, classes_);
      int64_t best = 0;
      for (int64_t k = 1; k < classes_; ++k)
        if (row[k] > row[best]) best = k;
      for (int64_t k = 0; k < classes_; ++k) z.data<float>()[i * classes_ + k] = float(row[k]);
      if (string_labels_.empty())
        y.data<int64_t>()[i] = int_labels_[size_t(best)];
      else
        y.data<std::string>()[i] = string_labels_[size_t(best)];
    }
    return {y, z};
  }

 private:
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  int64_t classes_;
  TreeEnsembleModel model_;
  PostTransform transform_;
  std::vector<double> base_;
  int64_t binary_column_;
};
PARITY_REF_OP(kDomain, "TreeEnsembleClassifier", 1, kOpsetMax, TreeEnsembleClassifier);

// ml opset 5: nodes are interior only; each branch names a node or a leaf (nodes_*leafs);
// modes, splits and weights are tensors; BRANCH_MEMBER tests a set from membership_values.
// Y has X's element type.
class TreeEnsemble : public Kernel {
 public:
  explicit TreeEnsemble(const OpContext& ctx) {
    targets_ = ctx.attr_int("n_targets");
    if (targets_ < 1) ctx.fail("attribute 'n_targets' is {}; it must be >= 1", targets_);
    model_.num_targets = targets_;
    const int64_t agg = ctx.attr_int("aggregate_function", 1);
    if (agg < 0 || agg > 3)
      ctx.fail(
          "attribute 'aggregate_function' is {}; it must be 0 (AVERAGE), 1 (SUM), 2 (MIN) "
          "or 3 (MAX)",
          agg);
    aggregate_ = std::array{Aggregate::kAverage, Aggregate::kSum, Aggregate::kMin,
                            Aggregate::kMax}[size_t(agg)];
    const int64_t post = ctx.attr_int("post_transform", 0);
    if (post < 0 || post > 4)
      ctx.fail(
          "attribute 'post_transform' is {}; it must be 0 (NONE), 1 (SOFTMAX), 2 "
          "(LOGISTIC), 3 (SOFTMAX_ZERO) or 4 (PROBIT)",
          post);
    transform_ = std::array{PostTransform::kNone, PostTransform::kSoftmax, PostTransform::kLogistic,
                            PostTransform::kSoftmaxZero, PostTransform::kProbit}[size_t(post)];

    const auto features = ctx.attr_ints("nodes_featureids");
    const auto true_ids = ctx.attr_ints("nodes_truenodeids");
    const auto false_ids = ctx.attr_ints("nodes_falsenodeids");
    const auto true_leafs = ctx.attr_ints("nodes_trueleafs");
    const auto false_leafs = ctx.attr_ints("nodes_falseleafs");
    const auto missing = ctx.attr_ints("nodes_missing_value_tracks_true", {});
    const std::vector<double> splits = tensor_doubles(ctx, "nodes_splits");
    const Tensor modes = ctx.attr_tensor("nodes_modes");
    if (modes.dtype() != DataType::kUInt8)
      ctx.fail("attribute 'nodes_modes' has element type {}; it must be uint8",
               dtype_name(modes.dtype()));
    const size_t n = features.size();
    const char* rule = "one per node, as nodes_featureids";
    check_length(ctx, "nodes_truenodeids", true_ids.size(), n, rule);
    check_length(ctx, "nodes_falsenodeids", false_ids.size(), n, rule);
    check_length(ctx, "nodes_trueleafs", true_leafs.size(), n, rule);
    check_length(ctx, "nodes_falseleafs", false_leafs.size(), n, rule);
    check_length(ctx, "nodes_splits", splits.size(), n, rule);
    check_length(ctx, "nodes_modes", size_t(modes.numel()), n, rule);
    if (!missing.empty())
      check_length(ctx, "nodes_missing_value_tracks_true", missing.size(), n, rule);

    const auto leaf_targets = ctx.attr_ints("leaf_targetids");
    const std::vector<double> leaf_weights = tensor_doubles(ctx, "leaf_weights");
    check_length(ctx, "leaf_weights", leaf_weights.size(), leaf_targets.size(),
                 "one per leaf, as leaf_targetids");
    for (size_t i = 0; i < leaf_targets.size(); ++i) {
      if (leaf_targets[i] < 0 || leaf_targets[i] >= targets_)
        ctx.fail("leaf_targetids[{}] is {}; it must be in [0, {}]", i, leaf_targets[i],
                 targets_ - 1);
      model_.leaves.push_back(TreeLeaf{{{leaf_targets[i], leaf_weights[i]}}});
    }

    std::vector<double> members;
    if (ctx.has_attr("membership_values")) members = tensor_doubles(ctx, "membership_values");
    size_t member_pos = 0;
    auto child = [&](size_t i, int64_t id, int64_t is_leaf, const char* side) -> TreeRef {
      const size_t limit = is_leaf ? model_.leaves.size() : n;
      if (id < 0 || size_t(id) >= limit)
        ctx.fail("nodes_{}nodeids[{}] is {}; it must index the {} (in [0, {}])", side, i, id,
                 is_leaf ? "leaves" : "nodes", int64_t(limit) - 1);
      return is_leaf ? leaf_ref(id) : id;
    };
    for (size_t i = 0; i < n; ++i) {
      const uint8_t mode = modes.data<uint8_t>()[i];
      if (mode > 6)
        ctx.fail("nodes_modes[{}] is {}; it must be in [0, 6] (BRANCH_LEQ ... BRANCH_MEMBER)", i,
                 mode);
      if (features[i] < 0) ctx.fail("nodes_featureids[{}] is {}; it must be >= 0", i, features[i]);
      TreeNode node;
      node.feature = features[i];
      node.split = splits[i];
      node.mode = static_cast<BranchMode>(mode);
      node.missing_tracks_true = !missing.empty() && missing[i] != 0;
      node.if_true = child(i, true_ids[i], true_leafs[i], "true");
      node.if_false = child(i, false_ids[i], false_leafs[i], "false");
      if (node.mode == BranchMode::kMember) {
        // This node's set: the next run of values up to a NaN (or the end).
        if (member_pos > members.size())
          ctx.fail("attribute 'membership_values' has fewer sets than BRANCH_MEMBER nodes");
        while (member_pos < members.size() && !std::isnan(members[member_pos]))
          node.members.push_back(members[member_pos++]);
        ++member_pos;
      }
      model_.max_feature = std::max(model_.max_feature, features[i]);
      model_.nodes.push_back(std::move(node));
    }
    for (int64_t root : ctx.attr_ints("tree_roots")) {
      if (root < 0 || size_t(root) >= n)
        ctx.fail("tree_roots has {}; every root must index the nodes (in [0, {}])", root,
                 int64_t(n) - 1);
      model_.roots.push_back(root);
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    Tensor xd = x;
    if (x.dtype() == DataType::kFloat16) {  // read_rows takes the ML types; widen float16
      xd = Tensor(DataType::kFloat64, x.shape());
      for (int64_t i = 0; i < x.numel(); ++i)
        xd.data<double>()[i] = x.data<float16>()[i].to_float();
    }
    int64_t n = 0;
    std::vector<double> s = ensemble_scores(model_, xd, aggregate_, ctx, &n);
    for (int64_t i = 0; i < n; ++i)
      apply_post_transform(transform_, s.data() + i * targets_, targets_);
    return {dispatch<TypeList<float, double, float16>>(
        x.dtype(),
        [&]<typename T>() {
          Tensor y(dtype_of<T>, {n, targets_});
          for (size_t k = 0; k < s.size(); ++k) y.data<T>()[k] = narrow<T>(s[k]);
          return y;
        },
        "input X")};
  }

 private:
  static std::vector<double> tensor_doubles(const OpContext& ctx, const std::string& name) {
    Tensor t = ctx.attr_tensor(name);
    return dispatch<TypeList<float, double, float16>>(
        t.dtype(),
        [&]<typename T>() {
          std::vector<double> v(size_t(t.numel()));
          for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(t.data<T>()[i]);
          return v;
        },
        fmt::format("attribute '{}'", name));
  }

  int64_t targets_ = 1;
  TreeEnsembleModel model_;
  Aggregate aggregate_ = Aggregate::kSum;
  PostTransform transform_ = PostTransform::kNone;
};
PARITY_REF_OP(kDomain, "TreeEnsemble", 5, kOpsetMax, TreeEnsemble);

}  // namespace
}  // namespace parity::ref::ml
