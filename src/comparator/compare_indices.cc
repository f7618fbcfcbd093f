// CompareFunc.indices: for index outputs such as Top-K. Leading dimensions are batches; within
// each batch a value of the first output must appear in the second at most `index_tolerance`
// positions away, and the last `index_tolerance` values of the first are not checked.
#include <cstdlib>

#include "comparator/compare.h"
#include "comparator/compare_internal.h"
#include "comparator/output_stats.h"
#include "core/logger.h"
#include "core/py_format.h"

namespace parity {

namespace {

double py_min(double a, double b) { return b < a ? b : a; }
double py_max(double a, double b) { return b > a ? b : a; }

}  // namespace

CompareFunc compare_func::indices(IndicesCompareOptions options) {
  return [options](const IterationResult& r0, const IterationResult& r1) {
    auto match = [&](const std::string& out0_name, const Tensor& output0,
                     const std::string& out1_name, const Tensor& output1) {
      OutputCompareResult result;
      const int64_t tol = options.index_tolerance.get(out0_name, 0);
      if (output0.shape() != output1.shape()) {
        logger().error("Cannot compare outputs of different shapes.");
        return result;
      }
      const NumArray a0 = to_num_array(output0), a1 = to_num_array(output1);
      const size_t row = output0.rank() == 0 ? 1 : static_cast<size_t>(output0.shape().back());
      const size_t batches = row == 0 ? 0 : a0.size() / row;
      const size_t checked = tol > 0 ? row - std::min<size_t>(row, static_cast<size_t>(tol)) : row;

      bool passed = true;
      for (size_t b = 0; b < batches; ++b) {
        const double* v0 = a0.values.data() + b * row;
        const double* v1 = a1.values.data() + b * row;
        for (size_t i0 = 0; i0 < checked; ++i0) {
          if (v0[i0] == v1[i0]) continue;
          size_t i1 = 0;
          while (i1 < row && v1[i1] != v0[i0]) ++i1;
          if (i1 == row) {
            logger().error("FAILED | Value: {} not found in output",
                           numpy_scalar_str(v0[i0], output0.dtype()));
          } else if (std::llabs(static_cast<long long>(i1) - static_cast<long long>(i0)) > tol) {
            logger().error("FAILED | Difference exceeds index tolerance ({})", tol);
          } else {
            continue;
          }
          passed = false;
          if (options.fail_fast) return result;
        }
      }

      const BasicStats s0 = compute_basic_stats(a0), s1 = compute_basic_stats(a1);
      auto min_of = [](const BasicStats& s) { return s.count == 0 ? 0.0 : s.min; };
      auto max_of = [](const BasicStats& s) { return s.count == 0 ? 0.0 : s.max; };
      std::pair<double, double> range{py_min(min_of(s0), min_of(s1)),
                                      py_max(max_of(s0), max_of(s1))};
      log_output_stats(a0, !passed, r0.runner_name + ": " + out0_name, range, &output0, &s0);
      log_output_stats(a1, !passed, r1.runner_name + ": " + out1_name, range, &output1, &s1);
      if (passed) logger().finish("PASSED | Difference is within index tolerance ({})", tol);
      result.passed = passed;
      return result;
    };
    return run_comparison(match, options.fail_fast, r0, r1);
  };
}

}  // namespace parity
