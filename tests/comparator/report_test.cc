// The report CompareFunc.simple prints, line for line, against a restatement of Polygraphy's
// check_outputs_match / log_output_stats / str_histogram in Python with NumPy.
#include <gtest/gtest.h>

#include "comparator/compare.h"
#include "comparator/output_stats.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::LogCapture;
using testing::run_python;

// Polygraphy's logging and statistics, restated (the mean and avg-magnitude use float32 as
// Polygraphy does; the values below are chosen so that double accumulation gives the same).
const char* kPolygraphyReport = R"PY(
import numpy as np
TAB = "    "
out, indent = [], [0]

def log(letter, msg):
    prefix = "[" + letter + "] "
    lines = str(msg).splitlines()
    tab = TAB * indent[0]
    out.append(prefix + tab + ("\n" + tab + " " * len(prefix)).join(lines))

def indent_block(a):
    return TAB + ("\n" + TAB).join(str(a).splitlines())

def fmt_idx(i, shape):
    return str(tuple(int(x) for x in np.unravel_index(i, shape)))

def stats(a, name):
    r = name + " | Stats: " if name else ""
    r += (f"mean={np.mean(a, dtype=np.float32):.5g}, std-dev={np.std(a):.5g}, var={np.var(a):.5g}, "
          f"median={np.median(a):.5g}, min={np.amin(a).item():.5g} at {fmt_idx(np.argmin(a), a.shape)}, "
          f"max={np.amax(a).item():.5g} at {fmt_idx(np.argmax(a), a.shape)}, "
          f"avg-magnitude={np.mean(np.abs(a), dtype=np.float32):.5g}")
    if a.dtype != bool:
        r += f", p90={np.quantile(a, 0.9):.5g}, p95={np.quantile(a, 0.95):.5g}, p99={np.quantile(a, 0.99):.5g}"
    return r

def histogram(a, rng):
    try:
        hist, edges = np.histogram(a, bins=10, range=rng)
    except ValueError:
        return ""
    if not hist.max():
        return ""
    edges = [f"{b:.3g}" for b in edges]
    ws, we = max(len(b) for b in edges), max(len(b) for b in edges[1:])
    r = "---- Histogram ----\n"
    r += f"{'Bin Range':{ws + we + 5}}|  Num Elems | Visualization\n"
    for num, s, e in zip(hist, edges, edges[1:]):
        r += f"({s:<{ws}}, {e:<{we}}) | {num:10} | {'#' * int(40 * float(num) / float(hist.max()))}\n"
    return r

def log_output_stats(a, failed, name, rng=None):
    log("I", stats(a, name))
    indent[0] += 1
    if failed:
        if a.size <= 100:
            log("I", "---- Values ----\n" + indent_block(a))
        h = histogram(a, rng)
        if h:
            log("I", h)
    indent[0] -= 1

def compare(out0, out1, atol=1e-5, rtol=1e-5):
    log("I", f"Comparing Output: 'out' (dtype={out0.dtype}, shape={out0.shape}) with 'out' (dtype={out1.dtype}, shape={out1.shape})")
    indent[0] += 1
    log("I", f"Tolerance: [abs={atol:.5g}, rel={rtol:.5g}] | Checking elemwise error")
    absdiff = np.abs(out0 - out1)
    reldiff = absdiff / np.abs(out1)
    failed = bool(np.any((absdiff > atol) & (reldiff > rtol)))
    rng = (min(np.amin(out0).item(), np.amin(out1).item()), max(np.amax(out0).item(), np.amax(out1).item()))
    log_output_stats(out0, failed, "r0: out", rng)
    log_output_stats(out1, failed, "r1: out", rng)
    log("I", "Error Metrics: out")
    indent[0] += 1
    log("I", f"Minimum Required Tolerance: elemwise error | [abs={np.amax(absdiff):.5g}] OR [rel={np.amax(reldiff):.5g}] (requirements may be lower if both abs/rel tolerances are set)")
    log_output_stats(absdiff, failed, "Absolute Difference")
    log_output_stats(reldiff, failed, "Relative Difference")
    indent[0] -= 1
    if failed:
        log("E", f"FAILED | Output: 'out' | Difference exceeds tolerance (rel={rtol}, abs={atol})")
    else:
        log("I", f"PASSED | Output: 'out' | Difference is within tolerance (rel={rtol}, abs={atol})")
    indent[0] -= 1
    if failed:
        log("E", "FAILED | Mismatched outputs: ['out']")
    else:
        log("I", "PASSED | All outputs matched | Outputs: ['out']")

compare(np.array([0.5, 1, 2, 4, 8], dtype=np.float32), np.array([0.5, 1, 2.5, 4, 7], dtype=np.float32))
out.append("@@@")
compare(np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32), np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32))
print("\n".join(out))
)PY";

IterationResult named(const std::string& runner, Tensor t) {
  IterationResult r;
  r.outputs.set("out", std::move(t));
  r.runner_name = runner;
  return r;
}

TEST(Report, FailingAndPassingOutputsPrintPolygraphysLines) {
  auto py = run_python(kPolygraphyReport);
  ASSERT_EQ(py.exit_code, 0) << py.output;
  const size_t sep = py.output.find("@@@\n");
  ASSERT_NE(sep, std::string::npos);
  const std::string expected_failing = py.output.substr(0, sep);
  const std::string expected_passing = py.output.substr(sep + 4);

  std::string failing, passing;
  {
    LogCapture log;
    auto r =
        compare_func::simple()(named("r0", Tensor::from_vector<float>({5}, {0.5f, 1, 2, 4, 8})),
                               named("r1", Tensor::from_vector<float>({5}, {0.5f, 1, 2.5f, 4, 7})));
    EXPECT_FALSE(r[0].second);
    failing = log.text();
  }
  {
    LogCapture log;
    auto r =
        compare_func::simple()(named("r0", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})),
                               named("r1", Tensor::from_vector<float>({2, 3}, {1, 2, 3, 4, 5, 6})));
    EXPECT_TRUE(r[0].second);
    passing = log.text();
  }
  EXPECT_EQ(failing, expected_failing);
  EXPECT_EQ(passing, expected_passing);
}

// The stats line for data with NaN, infinities, integers, bools and float64 (the values keep
// float32 and double accumulation of the mean identical).
TEST(Report, StatsLinesForSpecialValues) {
  struct Case {
    std::string expr;
    Tensor t;
  };
  std::vector<Case> cases = {
      {"np.array([1, np.nan, 3], dtype=np.float32)", Tensor::from_vector<float>({3}, {1, NAN, 3})},
      {"np.array([1, np.inf], dtype=np.float32)", Tensor::from_vector<float>({2}, {1, INFINITY})},
      {"np.array([-np.inf, 2], dtype=np.float32)", Tensor::from_vector<float>({2}, {-INFINITY, 2})},
      {"np.array([[3, -7], [12, 5]], dtype=np.int32)",
       Tensor::from_vector<int32_t>({2, 2}, {3, -7, 12, 5})},
      {"np.array([True, False, True])", Tensor::from_vector<bool>({3}, {true, false, true})},
      {"np.array([0.25, -1.5, 1e10, 3])", Tensor::from_vector<double>({4}, {0.25, -1.5, 1e10, 3})},
      {"np.array(4.5, dtype=np.float32)", Tensor::scalar<float>(4.5f)},
  };
  std::string script = std::string(kPolygraphyReport);
  script = script.substr(0, script.find("def histogram"));
  script += "import warnings\nwarnings.simplefilter('ignore')\n";
  for (const auto& c : cases) script += "print(stats(" + c.expr + ", 'r: out'))\n";
  auto py = run_python(script);
  ASSERT_EQ(py.exit_code, 0) << py.output;
  std::string expected = py.output;
  std::string actual;
  for (const auto& c : cases) actual += str_output_stats(to_num_array(c.t), "r: out") + "\n";
  EXPECT_EQ(actual, expected);
}

}  // namespace
}  // namespace parity
