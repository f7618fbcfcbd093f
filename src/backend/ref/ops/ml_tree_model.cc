#include <cmath>
#include <map>

#include "backend/ref/ops/ml_tree.h"

namespace parity::ref::ml {

int64_t TreeEnsembleModel::leaf_of(int64_t t, const double* row) const {
  TreeRef ref = roots[static_cast<size_t>(t)];
  for (size_t steps = 0; ref >= 0; ++steps) {
    if (steps > nodes.size()) fail("tree {} has a cycle: its walk never reaches a leaf", t);
    const TreeNode& n = nodes[static_cast<size_t>(ref)];
    const double x = row[n.feature];
    bool go_true = false;  // every BranchMode sets it
    if (std::isnan(x)) {
      go_true = n.missing_tracks_true;
    } else {
      switch (n.mode) {
        case BranchMode::kLeq:
          go_true = x <= n.split;
          break;
        case BranchMode::kLt:
          go_true = x < n.split;
          break;
        case BranchMode::kGte:
          go_true = x >= n.split;
          break;
        case BranchMode::kGt:
          go_true = x > n.split;
          break;
        case BranchMode::kEq:
          go_true = x == n.split;
          break;
        case BranchMode::kNeq:
          go_true = x != n.split;
          break;
        case BranchMode::kMember:
          go_true = std::find(n.members.begin(), n.members.end(), x) != n.members.end();
          break;
      }
    }
    ref = go_true ? n.if_true : n.if_false;
  }
  return ~ref;
}

void TreeEnsembleModel::scores(const double* row, Aggregate aggregate, double* out) const {
  std::vector<char> reached(static_cast<size_t>(num_targets), 0);
  for (int64_t k = 0; k < num_targets; ++k) out[k] = 0;
  for (size_t t = 0; t < roots.size(); ++t) {
    const TreeLeaf& leaf = leaves[static_cast<size_t>(leaf_of(int64_t(t), row))];
    for (const auto& [target, w] : leaf.weights) {
      double& acc = out[target];
      if (aggregate == Aggregate::kMin)
        acc = reached[target] ? std::min(acc, w) : w;
      else if (aggregate == Aggregate::kMax)
        acc = reached[target] ? std::max(acc, w) : w;
      else
        acc += w;
      reached[target] = 1;
    }
  }
  if (aggregate == Aggregate::kAverage)
    for (int64_t k = 0; k < num_targets; ++k) out[k] /= static_cast<double>(roots.size());
}

Aggregate read_aggregate(const OpContext& ctx) {
  const std::string name = ctx.attr_string("aggregate_function", "SUM");
  if (name == "SUM") return Aggregate::kSum;
  if (name == "AVERAGE") return Aggregate::kAverage;
  if (name == "MIN") return Aggregate::kMin;
  if (name == "MAX") return Aggregate::kMax;
  ctx.fail("attribute 'aggregate_function' is '{}'; it must be one of AVERAGE, SUM, MIN, MAX",
           name);
}

TreeEnsembleModel read_legacy_ensemble(const OpContext& ctx, const std::string& prefix,
                                       int64_t num_targets) {
  const auto tree_ids = ctx.attr_ints("nodes_treeids");
  const auto node_ids = ctx.attr_ints("nodes_nodeids");
  const auto features = ctx.attr_ints("nodes_featureids");
  const auto modes = ctx.attr_strings("nodes_modes");
  const auto true_ids = ctx.attr_ints("nodes_truenodeids");
  const auto false_ids = ctx.attr_ints("nodes_falsenodeids");
  const auto values = attr_doubles(ctx, "nodes_values");
  const auto missing = ctx.attr_ints("nodes_missing_value_tracks_true", {});
  const size_t n = tree_ids.size();
  const char* rule = "one per node, as nodes_treeids";
  check_length(ctx, "nodes_nodeids", node_ids.size(), n, rule);
  check_length(ctx, "nodes_featureids", features.size(), n, rule);
  check_length(ctx, "nodes_modes", modes.size(), n, rule);
  check_length(ctx, "nodes_truenodeids", true_ids.size(), n, rule);
  check_length(ctx, "nodes_falsenodeids", false_ids.size(), n, rule);
  check_length(ctx, "nodes_values", values.size(), n, rule);
  if (!missing.empty())
    check_length(ctx, "nodes_missing_value_tracks_true", missing.size(), n, rule);

  TreeEnsembleModel m;
  m.num_targets = num_targets;
  // (tree, node) -> reference; LEAF entries become leaves.
  std::map<std::pair<int64_t, int64_t>, TreeRef> refs;
  std::map<int64_t, TreeRef> roots;  // tree id -> its first listed node
  for (size_t i = 0; i < n; ++i) {
    const auto key = std::make_pair(tree_ids[i], node_ids[i]);
    if (refs.count(key))
      ctx.fail(
          "node {} of tree {} is listed twice; (nodes_treeids, nodes_nodeids) must be "
          "unique",
          node_ids[i], tree_ids[i]);
    TreeRef ref;
    if (modes[i] == "LEAF") {
      ref = leaf_ref(int64_t(m.leaves.size()));
      m.leaves.emplace_back();
    } else {
      static const std::map<std::string, BranchMode> kModes = {
          {"BRANCH_LEQ", BranchMode::kLeq}, {"BRANCH_LT", BranchMode::kLt},
          {"BRANCH_GTE", BranchMode::kGte}, {"BRANCH_GT", BranchMode::kGt},
          {"BRANCH_EQ", BranchMode::kEq},   {"BRANCH_NEQ", BranchMode::kNeq}};
      auto mode = kModes.find(modes[i]);
      if (mode == kModes.end())
        ctx.fail(
            "nodes_modes[{}] is '{}'; it must be one of BRANCH_LEQ, BRANCH_LT, BRANCH_GTE, "
            "BRANCH_GT, BRANCH_EQ, BRANCH_NEQ, LEAF",
            i, modes[i]);
      if (features[i] < 0) ctx.fail("nodes_featureids[{}] is {}; it must be >= 0", i, features[i]);
      TreeNode node;
      node.feature = features[i];
      node.split = values[i];
      node.mode = mode->second;
      node.missing_tracks_true = !missing.empty() && missing[i] != 0;
      m.max_feature = std::max(m.max_feature, features[i]);
      ref = int64_t(m.nodes.size());
      m.nodes.push_back(node);
    }
    refs[key] = ref;
    roots.emplace(tree_ids[i], ref);
  }
  // Children, now that every node has a reference.
  for (size_t i = 0, k = 0; i < n; ++i) {
    if (modes[i] == "LEAF") continue;
    TreeNode& node = m.nodes[k++];
    for (auto [child, slot, name] : {std::tuple{true_ids[i], &node.if_true, "true"},
                                     std::tuple{false_ids[i], &node.if_false, "false"}}) {
      auto it = refs.find({tree_ids[i], child});
      if (it == refs.end())
        ctx.fail("node {} of tree {} has {} branch {}, which is not a node of that tree",
                 node_ids[i], tree_ids[i], name, child);
      *slot = it->second;
    }
  }
  for (const auto& [tree, ref] : roots) m.roots.push_back(ref);

  const auto w_trees = ctx.attr_ints(prefix + "_treeids", {});
  const auto w_nodes = ctx.attr_ints(prefix + "_nodeids", {});
  const auto w_ids = ctx.attr_ints(prefix + "_ids", {});
  const auto w = attr_doubles(ctx, prefix + "_weights");
  const std::string wrule = "one per leaf weight, as " + prefix + "_treeids";
  check_length(ctx, prefix + "_nodeids", w_nodes.size(), w_trees.size(), wrule);
  check_length(ctx, prefix + "_ids", w_ids.size(), w_trees.size(), wrule);
  check_length(ctx, prefix + "_weights", w.size(), w_trees.size(), wrule);
  for (size_t i = 0; i < w_trees.size(); ++i) {
    auto it = refs.find({w_trees[i], w_nodes[i]});
    if (it == refs.end() || it->second >= 0)
      ctx.fail("{}_nodeids[{}] names node {} of tree {}, which is not a LEAF node", prefix, i,
               w_nodes[i], w_trees[i]);
    if (w_ids[i] < 0 || w_ids[i] >= num_targets)
      ctx.fail("{}_ids[{}] is {}; it must be in [0, {}]", prefix, i, w_ids[i], num_targets - 1);
    m.leaves[static_cast<size_t>(~it->second)].weights.emplace_back(w_ids[i], w[i]);
  }
  return m;
}

std::vector<double> ensemble_scores(const TreeEnsembleModel& model, const Tensor& x,
                                    Aggregate aggregate, RunContext& ctx, int64_t* rows) {
  Rows r = read_rows(x, "X");
  if (model.max_feature >= r.c)
    ctx.fail("input X has {} features but the trees read feature {}", r.c, model.max_feature);
  std::vector<double> out(static_cast<size_t>(r.n * model.num_targets));
  parallel_for(r.n, grain_for(int64_t(model.roots.size()) * 8), [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i)
      model.scores(r.row(i), aggregate, out.data() + i * model.num_targets);
  });
  *rows = r.n;
  return out;
}

}  // namespace parity::ref::ml
