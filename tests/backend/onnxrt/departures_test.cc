// The page docs/onnxruntime-departures.md stays true: each of its reproducers runs on the real
// ONNX Runtime and on the reference backend. The reference backend must give the value the
// specification gives (restated here with NumPy, computed at test time), and ONNX Runtime must
// still give something else; when an ONNX Runtime release fixes one, its test fails and the
// page needs its entry removed. Each reproducer is also recognised by known_departures, and a
// model without those patterns matches none.
#include <gtest/gtest.h>

#include <cmath>
#include <iostream>

#include "backend/onnxrt/departures.h"
#include "backend/ref/ref_test_util.h"
#include "ort_test_util.h"

namespace parity::testing {
namespace {

// The page records ONNX Runtime 1.30's behaviour, the release Parity installs; the rerun of this
// binary against 1.17 (library_test.cc), which cannot load most reproducers, leaves this file
// out.

struct Reproducer {
  std::string id;    // the departure's anchor on the page
  std::string text;  // the model, in ONNX text (the page's one-line reproducer, expanded)
};

TensorMap run_ort(const std::string& text, const TensorMap& feed) {
  auto runner = bytes_runner(model_bytes_from_text(text));
  TensorMap out = runner->infer(feed);
  runner->deactivate();
  return out;
}

// Runs the model on both backends; checks the reference backend against `spec` (every
// output, NaN only where the spec has NaN) and that ONNX Runtime differs from it somewhere.
void expect_departure(const Reproducer& r, const TensorMap& feed, const TensorMap& spec) {
  SCOPED_TRACE(r.id);
  TensorMap ref = run_text_model(r.text, feed);
  TensorMap ort = run_ort(r.text, feed);
  bool ort_differs = false;
  for (const auto& [name, expected] : spec) {
    EXPECT_TRUE(tensors_close(ref.at(name), expected, 1e-6, 1e-6)) << "Parity, output " << name;
    if (!tensors_close(ort.at(name), expected, 1e-6, 1e-6)) ort_differs = true;
  }
  EXPECT_TRUE(ort_differs) << "ONNX Runtime now follows the specification for " << r.id
                           << ": remove it from docs/onnxruntime-departures.md";
  // The model is recognised.
  std::vector<onnxrt::Departure> found = onnxrt::known_departures(*model_from_text(r.text));
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found[0].info->id, r.id);
  EXPECT_NE(onnxrt::describe(found[0]).find("docs/onnxruntime-departures.md#" + r.id),
            std::string::npos);
}

TEST(OrtDepartures, AveragePoolSameUpperWithDilations) {
  Reproducer r{"averagepool-same-upper-dilations", R"(
    <ir_version: 8, opset_import: ["" : 19]>
    g (float[1,1,5] x) => (float y) {
      y = AveragePool<kernel_shape = [2], dilations = [2], auto_pad = "SAME_UPPER">(x)
    })"};
  auto np = numpy_arrays(R"(
x = np.arange(5, dtype=np.float32).reshape(1, 1, 5); save('x', x)
k, d, n = 2, 2, 5
total = max((n - 1) + (k - 1) * d + 1 - n, 0)   # the dilated window's extent
begin = total // 2                              # SAME_UPPER: the odd one at the end
y = [np.mean([x[0, 0, j] for j in range(i - begin, i - begin + (k - 1) * d + 1, d) if 0 <= j < n])
     for i in range(n)]
save('y', np.array(y, dtype=np.float32).reshape(1, 1, n))
)");
  expect_departure(r, feed_of(np, {"x"}), feed_of(np, {"y"}));
}

TEST(OrtDepartures, CastToFloat8E5M2WithoutSaturationOverflows) {
  Reproducer r{"cast-float8e5m2-no-saturate-overflow", R"(
    <ir_version: 9, opset_import: ["" : 19]>
    g (float[6] x) => (float y) {
      f8 = Cast<to = 19, saturate = 0>(x)
      y = Cast<to = 1>(f8)
    })"};
  auto np = numpy_arrays(R"(
x = np.array([-61440, -65504, 61440, 62000, -1e6, -1.5], dtype=np.float32); save('x', x)
# E5M2's largest finite value is 57344 and the next step would be 65536 (Inf): from 61440,
# the midpoint (a tie, rounded to the even 65536), values round to +-Inf without saturation.
save('y', np.where(np.abs(x) >= 61440, np.sign(x) * np.inf, x).astype(np.float32))
)");
  expect_departure(r, feed_of(np, {"x"}), feed_of(np, {"y"}));
}

TEST(OrtDepartures, PadWrapWithPadsLargerThanTheAxis) {
  Reproducer r{"pad-wrap-larger-than-axis", R"(
    <ir_version: 8, opset_import: ["" : 19]>
    g (float[3] x) => (float y) <int64[2] pads = {4, 5}> {
      y = Pad<mode = "wrap">(x, pads)
    })"};
  auto np = numpy_arrays(R"(
x = np.array([1, 2, 3], dtype=np.float32); save('x', x)
save('y', np.pad(x, (4, 5), mode='wrap'))
)");
  expect_departure(r, feed_of(np, {"x"}), feed_of(np, {"y"}));
}

TEST(OrtDepartures, CastToInt4RoundsHalfToEvenAndSaturates) {
  Reproducer r{"cast-int4-rounding", R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[7] x) => (int8 y) {
      i4 = Cast<to = 22>(x)
      y = Cast<to = 3>(i4)
    })"};
  auto np = numpy_arrays(R"(
x = np.array([2.5, -2.5, 3.5, 0.5, 9.0, -12.0, 6.4], dtype=np.float32); save('x', x)
save('y', np.clip(np.round(x), -8, 7).astype(np.int8))   # np.round: half to even
)");
  expect_departure(r, feed_of(np, {"x"}), feed_of(np, {"y"}));
}

TEST(OrtDepartures, CastToFloat8E8M0OutsideThePositiveRange) {
  Reproducer r{"cast-float8e8m0-out-of-range", R"(
    <ir_version: 11, opset_import: ["" : 24]>
    g (float[4] x) => (float[4] y) {
      e = Cast<to = 24>(x)
      y = Cast<to = 1>(e)
    })"};
  auto np = numpy_arrays(R"(
x = np.array([-2.0, 0.0, np.inf, 3.0], dtype=np.float32); save('x', x)
# onnx.numpy_helper.to_float8e8m0 (round_mode "up", saturate): the exponent bits of |x|, rounded
# up when a fraction is left; 0xFF (NaN) for infinities.
bits = x.view(np.uint32); e = ((bits >> 23) & 0xFF).astype(np.int64)
e = np.where((e != 0xFF) & ((bits & 0x7FFFFF) != 0) & (e < 0xFE), e + 1, e)
save('y', np.where(e == 0xFF, np.nan, np.exp2(e - 127.0)).astype(np.float32))
)");
  expect_departure(r, feed_of(np, {"x"}), feed_of(np, {"y"}));
}

TEST(OrtDepartures, DropoutMaskInInferenceMode) {
  // Opsets 7 to 9: the mask has the data's type; from 10 it is bool. In inference mode every
  // element is kept, so the specification's mask is all ones (output = data * mask). ONNX
  // Runtime departs for opsets 7 to 11 only (see the next test for 12 and 13).
  for (int opset : {7, 10, 11}) {
    SCOPED_TRACE(opset);
    const std::string mask_type = opset < 10 ? "float" : "bool";
    Reproducer r{"dropout-inference-mask", fmt::format(R"(
      <ir_version: 8, opset_import: ["" : {}]>
      g (float[2,3] x) => (float y, {} mask) {{
        y, mask = Dropout(x)
      }})",
                                                       opset, mask_type)};
    auto np = numpy_arrays(fmt::format(R"(
x = rng.randn(2, 3).astype(np.float32); save('x', x); save('y', x)
save('mask', np.ones((2, 3), dtype=np.{}))
)",
                                       opset < 10 ? "float32" : "bool_"));
    expect_departure(r, feed_of(np, {"x"}), feed_of(np, {"y", "mask"}));
  }
}

TEST(OrtDepartures, DropoutMaskFromOpset12AgreesAndIsNotFlagged) {
  for (int opset : {12, 13}) {
    SCOPED_TRACE(opset);
    const std::string text = fmt::format(R"(
      <ir_version: 8, opset_import: ["" : {}]>
      g (float[2,3] x) => (float y, bool mask) {{
        y, mask = Dropout(x)
      }})",
                                         opset);
    auto np = numpy_arrays(
        "save('x', rng.randn(2, 3).astype(np.float32)); "
        "save('mask', np.ones((2, 3), dtype=np.bool_))");
    TensorMap feed = feed_of(np, {"x"});
    EXPECT_TRUE(tensors_identical(run_ort(text, feed).at("mask"), np.at("mask")));
    EXPECT_TRUE(tensors_identical(run_text_model(text, feed).at("mask"), np.at("mask")));
    EXPECT_TRUE(onnxrt::known_departures(*model_from_text(text)).empty());
  }
}

TEST(OrtDepartures, StringSplitOfAnEmptyString) {
  Reproducer r{"stringsplit-empty-string", R"(
    <ir_version: 10, opset_import: ["" : 20]>
    g (string[2] x) => (string y, int64 n) {
      y, n = StringSplit<delimiter = "-">(x)
    })"};
  TensorMap feed;
  Tensor x(DataType::kString, {2});
  x.data<std::string>()[0] = "";
  x.data<std::string>()[1] = "a-b";
  feed.set("x", x);
  TensorMap ref = run_text_model(r.text, feed);
  TensorMap ort = run_ort(r.text, feed);
  // Python's "".split("-") is [""]: one empty substring (the specification follows str.split);
  // "a-b" gives two.
  ASSERT_EQ(ref.at("n").shape(), (Shape{2}));
  EXPECT_EQ(ref.at("n").data<int64_t>()[0], 1);
  EXPECT_EQ(ref.at("n").data<int64_t>()[1], 2);
  std::cout << "ONNX Runtime: n = " << ort.at("n").data<int64_t>()[0] << ", "
            << ort.at("n").data<int64_t>()[1] << "; y shape " << shape_str(ort.at("y").shape())
            << "\n";
  EXPECT_FALSE(ort.at("n").equals(ref.at("n")) && ort.at("y").equals(ref.at("y")))
      << "ONNX Runtime now follows the specification: remove stringsplit-empty-string";
  auto found = onnxrt::known_departures(*model_from_text(r.text));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].info->id, "stringsplit-empty-string");
}

TEST(OrtDepartures, GridSampleCubicWithBorderPadding) {
  Reproducer r{"gridsample-cubic-border", R"(
    <ir_version: 9, opset_import: ["" : 20]>
    g (float[1,1,3,3] x, float[1,1,3,2] grid) => (float y) {
      y = GridSample<mode = "cubic", padding_mode = "border">(x, grid)
    })"};
  auto np = numpy_arrays(R"(
save('x', np.arange(9, dtype=np.float32).reshape(1, 1, 3, 3) ** 2)
save('grid', np.array([[[[-1.6, 0.3], [1.4, -1.2], [0.5, 1.7]]]], dtype=np.float32))
)");
  TensorMap feed = feed_of(np, {"x", "grid"});
  TensorMap ref = run_text_model(r.text, feed);
  TensorMap ort = run_ort(r.text, feed);
  // Parity's cubic/border kernel is checked against the specification in the reference
  // backend's tests (resize_test.cc / the ONNX node tests); here only the difference counts.
  EXPECT_FALSE(tensors_close(ort.at("y"), ref.at("y"), 1e-5, 1e-5))
      << "ONNX Runtime now agrees with Parity: remove gridsample-cubic-border";
  auto found = onnxrt::known_departures(*model_from_text(r.text));
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].info->id, "gridsample-cubic-border");
}

TEST(OrtDepartures, OnlyDeparturesUpstreamOfTheNamedOutputs) {
  auto model = model_from_text(R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (float[4] x, bool c, int64[2] p) => (float a, int8 b, float d) {
      i4 = Cast<to = 22>(x)
      b = Cast<to = 3>(i4)
      a = Relu(x)
      d = If(c) <then_branch = t () => (float o) { o = Pad<mode = "wrap">(x, p) },
                 else_branch = e () => (float o) { o = Identity(x) }>
    })");
  auto all = onnxrt::known_departures(*model);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].node, all[0].top_node);
  EXPECT_NE(all[1].node, all[1].top_node);  // the Pad inside the If's branch
  EXPECT_EQ(all[1].info->id, "pad-wrap-larger-than-axis");
  auto for_b = onnxrt::known_departures(*model, {"b"});
  ASSERT_EQ(for_b.size(), 1u);
  EXPECT_EQ(for_b[0].info->id, "cast-int4-rounding");
  EXPECT_EQ(onnxrt::known_departures(*model, {"d"}).size(), 1u);
  EXPECT_TRUE(onnxrt::known_departures(*model, {"a"}).empty());
}

TEST(OrtDepartures, ModelsWithoutThePatternsMatchNone) {
  auto model = model_from_text(R"(
    <ir_version: 8, opset_import: ["" : 19]>
    g (float[1,1,5] x, float[3] p) => (float y, float z, float w) <int64[2] pads = {1, 2}> {
      y = AveragePool<kernel_shape = [2], auto_pad = "SAME_UPPER">(x)
      z = Pad<mode = "wrap">(p, pads)
      w = Dropout(p)
    })");
  EXPECT_TRUE(onnxrt::known_departures(*model).empty());
  EXPECT_EQ(onnxrt::all_departures().size(), 8u);
}

}  // namespace
}  // namespace parity::testing
