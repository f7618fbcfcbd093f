// CompareFunc.simple's figures: the comparison hands the plotter the arrays it compared (the
// differences NumPy computes, the second output cast up), in the output's shape, with
// Polygraphy's titles and where Polygraphy logs them.
#include "comparator/error_plots.h"

#include <gtest/gtest.h>

#include <cmath>

#include "comparator/compare.h"
#include "core/error.h"
#include "support/test_util.h"

namespace parity {
namespace {

using testing::LogCapture;

// Records what it is asked to draw, logging one line where the figure would be.
class RecordingPlotter : public ErrorPlotter {
 public:
  struct Heatmap {
    Tensor diff;
    double min, max;
    std::string prefix, save_dir;
    bool use_lognorm;
  };
  struct Metrics {
    Tensor absdiff, reldiff, reference;
    double min_reldiff, max_reldiff;
    std::string runner0, runner1, out0, out1, save_dir;
  };
  std::vector<Heatmap> heatmaps_drawn;
  std::vector<Metrics> metrics_drawn;

  void heatmaps(const HeatmapRequest& r) override {
    logger().info("<heatmaps {}>", r.prefix);
    heatmaps_drawn.push_back({r.diff, r.min, r.max, r.prefix, r.save_dir, r.use_lognorm});
  }
  void error_metrics_plot(const ErrorMetricsRequest& r) override {
    logger().info("<plot {}>", r.out0_name);
    metrics_drawn.push_back({r.absdiff, r.reldiff, r.reference, r.min_reldiff, r.max_reldiff,
                             r.runner0, r.runner1, r.out0_name, r.out1_name, r.save_dir});
  }
};

IterationResult result(const std::string& runner, const std::string& name, Tensor t) {
  IterationResult r;
  r.outputs.set(name, std::move(t));
  r.runner_name = runner;
  return r;
}

TEST(ErrorPlots, ThePlotterGetsTheComparedArraysInTheOutputsShape) {
  const std::vector<float> a = {1.0f, 2.0f, -3.0f, 4.0f, 0.5f, 6.0f};
  const std::vector<float> b = {1.0f, 2.5f, -3.0f, 3.0f, 0.0f, 6.0f};
  auto plotter = std::make_shared<RecordingPlotter>();
  SimpleCompareOptions o;
  o.plots.save_heatmaps = "h";
  o.plots.save_error_metrics_plot = "p";
  o.plotter = plotter;
  LogCapture log;
  compare_func::simple(o)(result("r0", "out", Tensor::from_vector<float>({2, 3}, a)),
                          result("r1", "out", Tensor::from_vector<float>({2, 3}, b)));

  ASSERT_EQ(plotter->heatmaps_drawn.size(), 2u);
  ASSERT_EQ(plotter->metrics_drawn.size(), 1u);
  const auto& abs = plotter->heatmaps_drawn[0];
  const auto& rel = plotter->heatmaps_drawn[1];
  EXPECT_EQ(abs.prefix, "Absolute Error | out");
  EXPECT_FALSE(abs.use_lognorm);
  EXPECT_EQ(rel.prefix, "Relative Error | out");
  EXPECT_TRUE(rel.use_lognorm);
  EXPECT_EQ(abs.save_dir, "h");
  EXPECT_EQ(abs.diff.shape(), (Shape{2, 3}));
  EXPECT_EQ(abs.diff.dtype(), DataType::kFloat32);
  // NumPy: absdiff = |a - b|; reldiff = absdiff / |b| with b's zeros replaced by float64's
  // epsilon (2.220446049250313e-16), in float32.
  for (size_t i = 0; i < a.size(); ++i) {
    const float d = std::fabs(a[i] - b[i]);
    const float denominator = b[i] == 0 ? 2.220446049250313e-16f : std::fabs(b[i]);
    EXPECT_EQ(abs.diff.data<float>()[i], d) << i;
    EXPECT_EQ(rel.diff.data<float>()[i], d / denominator) << i;
  }
  EXPECT_EQ(abs.min, 0.0);
  EXPECT_EQ(abs.max, 1.0);
  EXPECT_FLOAT_EQ(rel.max, 0.5f / 2.220446049250313e-16f);

  const auto& m = plotter->metrics_drawn[0];
  EXPECT_EQ(m.runner0, "r0");
  EXPECT_EQ(m.runner1, "r1");
  EXPECT_EQ(m.out0, "out");
  EXPECT_EQ(m.save_dir, "p");
  for (size_t i = 0; i < b.size(); ++i) EXPECT_EQ(m.reference.data<float>()[i], b[i]) << i;
  EXPECT_EQ(m.min_reldiff, 0.0);
  EXPECT_EQ(m.max_reldiff, rel.max);

  // Polygraphy's order: the plot after the required tolerance, each heatmap after its stats.
  const std::string& text = log.text();
  const size_t tolerance = text.find("Minimum Required Tolerance");
  const size_t plot = text.find("<plot out>");
  const size_t abs_stats = text.find("Absolute Difference | Stats");
  const size_t abs_map = text.find("<heatmaps Absolute Error | out>");
  const size_t rel_stats = text.find("Relative Difference | Stats");
  const size_t rel_map = text.find("<heatmaps Relative Error | out>");
  ASSERT_NE(rel_map, std::string::npos);
  EXPECT_LT(tolerance, plot);
  EXPECT_LT(plot, abs_stats);
  EXPECT_LT(abs_stats, abs_map);
  EXPECT_LT(abs_map, rel_stats);
  EXPECT_LT(rel_stats, rel_map);
  // One level under the required tolerance, as Polygraphy's `with G_LOGGER.indent()`.
  const size_t line_start = text.rfind('\n', tolerance) + 1;
  const std::string indent = text.substr(line_start, tolerance - line_start);
  EXPECT_NE(text.find("\n" + indent + "    <plot out>"), std::string::npos) << text;
}

TEST(ErrorPlots, IntegersAreDrawnAsFloat64AndOnlyWhatIsAskedForIsDrawn) {
  auto plotter = std::make_shared<RecordingPlotter>();
  SimpleCompareOptions o;
  o.plots.save_heatmaps = "h";
  o.plotter = plotter;
  LogCapture log;
  compare_func::simple(o)(result("r0", "x", Tensor::from_vector<int32_t>({3}, {1, 5, -2})),
                          result("r1", "x", Tensor::from_vector<int32_t>({3}, {1, 2, 2})));
  EXPECT_TRUE(plotter->metrics_drawn.empty());
  ASSERT_EQ(plotter->heatmaps_drawn.size(), 2u);
  const Tensor& abs = plotter->heatmaps_drawn[0].diff;
  ASSERT_EQ(abs.dtype(), DataType::kFloat64);
  EXPECT_EQ(abs.data<double>()[0], 0.0);
  EXPECT_EQ(abs.data<double>()[1], 3.0);
  EXPECT_EQ(abs.data<double>()[2], 4.0);
  EXPECT_EQ(plotter->heatmaps_drawn[1].diff.data<double>()[1], 1.5);
}

TEST(ErrorPlots, FiguresWithoutAPlotterAreAnInternalError) {
  SimpleCompareOptions o;
  o.plots.save_heatmaps = "h";
  EXPECT_THROW(compare_func::simple(o), InternalError);
}

}  // namespace
}  // namespace parity
