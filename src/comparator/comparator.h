// Comparator (Polygraphy's comparator.py): run every runner on the same feeds, compare the
// results pairwise, validate them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "backend/runner.h"
#include "comparator/compare.h"
#include "comparator/data_loader.h"
#include "comparator/struct.h"

namespace parity {

struct RunOptions {
  int64_t warm_up = 0;
  // When set, receives the feeds every runner was given (for --save-inputs; saving is the
  // io layer's job, which sits above this one).
  std::vector<TensorMap>* used_feeds = nullptr;
  // Feed the first runner exactly what the data loader gives, refusing a feed that does not
  // fit its inputs; by default feeds are fitted (renamed, cast, reshaped) with a warning, as
  // Polygraphy does (comparator/feed_coercion.h).
  bool strict_inputs = false;
  // When set, a runner that fails (throws, or its process dies under --use-subprocess) is
  // reported with its error and left out of the results, the other runners still run, and its
  // name is added here; the caller must fail the run. When null, the first failure ends the run.
  std::vector<std::string>* failed_runners = nullptr;
};

// Post-processing applied to every iteration result before comparing (e.g. top-K).
using PostprocessFunc = std::function<void(IterationResult&)>;

struct TopKOptions {
  PerOutput<std::pair<int64_t, int64_t>> k;  // (k, axis); outputs without an entry are left alone
};

class Comparator {
 public:
  // Activates each runner in turn, feeds it every iteration (the first runner's metadata
  // decides the feeds; later runners get the same feeds), logs the per-runner lines.
  static RunResults run(const std::vector<Runner*>& runners, FeedSource& feeds,
                        const RunOptions& options = {});

  static void postprocess(RunResults& results, const PostprocessFunc& fn);

  // [(0,1), (1,2), ...]
  static std::vector<std::pair<size_t, size_t>> default_comparisons(const RunResults& results);

  static AccuracyResult compare_accuracy(
      const RunResults& results, bool fail_fast = false,
      std::optional<std::vector<std::pair<size_t, size_t>>> comparisons = std::nullopt,
      CompareFunc compare_func = nullptr);

  static bool validate(const RunResults& results, bool check_inf = false, bool check_nan = true,
                       bool fail_fast = false);
};

namespace postprocess_func {
// Replaces each output with the indices of its k largest values along `axis`.
PostprocessFunc top_k(TopKOptions options);
// The computation itself, for one tensor.
Tensor top_k_indices(const Tensor& t, int64_t k, int64_t axis);
}  // namespace postprocess_func

}  // namespace parity
