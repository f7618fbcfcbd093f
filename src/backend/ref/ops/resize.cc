// Resize (10, 11, 13, 18, 19) and Upsample (7, 9): nearest, linear and cubic interpolation
// over any axes, with every coordinate_transformation_mode, nearest_mode, cubic_coeff_a,
// exclude_outside, extrapolation_value, antialias, axes and keep_aspect_ratio_policy.
//
// Interpolation is separable: each resized axis gets a table of (input index, weight) taps
// per output index, built once from ONNX's formulas; then the axes are resized one after the
// other, innermost first as the spec's reference nests them, in double, and the result is
// rounded once. Nearest mode is a pure gather, so it serves every element type.
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Coord {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfCropAndResize,
  kTfHalfPixelForNn,
};
// kSimple: before opset 11 (Upsample, Resize-10), floor when enlarging, ceil when shrinking.
enum class Nearest { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };
enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

struct Options {
  Mode mode = Mode::kNearest;
  Coord coord = Coord::kHalfPixel;
  Nearest nearest = Nearest::kRoundPreferFloor;
  AspectPolicy policy = AspectPolicy::kStretch;
  double cubic_a = -0.75, extrapolation = 0;
  bool exclude_outside = false, antialias = false;
  std::vector<int64_t> axes;  // empty: every axis
};

template <typename E>
E pick(const OpContext& ctx, const char* attr, const std::string& dflt,
       std::initializer_list<std::pair<const char*, E>> choices) {
  const std::string v = ctx.attr_string(attr, dflt);
  std::string names;
  for (const auto& [name, e] : choices) {
    if (v == name) return e;
    names += names.empty() ? name : std::string(", ") + name;
  }
  ctx.fail("attribute '{}' is '{}'; it must be one of {}", attr, v, names);
}

std::vector<double> read_doubles(const Tensor& t, std::string_view what) {
  return dispatch<NumericTypes>(
      t.dtype(),
      [&]<typename T>() {
        std::vector<double> v(static_cast<size_t>(t.numel()));
        for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(t.data<T>()[i]);
        return v;
      },
      what);
}

// Keys' cubic convolution kernel with parameter a.
double cubic_weight(double x, double a) {
  x = std::abs(x);
  if (x <= 1) return ((a + 2) * x - (a + 3)) * x * x + 1;
  if (x < 2) return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
  return 0;
}

// One axis: for output index o, taps [first[o], first[o + 1]) of (index, weight); outside[o]
// marks tf_crop_and_resize positions outside the input (they take extrapolation_value).
struct AxisTaps {
  std::vector<int64_t> first, index;
  std::vector<double> weight;
  std::vector<char> outside;
  bool identity = true;
};

struct AxisSpec {
  int64_t in, out;
  double scale, out_width;  // out_width: scale * in, the unrounded output length
  double roi_start = 0, roi_end = 1;
};

// The input coordinate of output index x (ONNX's coordinate_transformation_mode formulas).
double source_coordinate(const Options& o, const AxisSpec& a, double x) {
  const double in = static_cast<double>(a.in);
  switch (o.coord) {
    case Coord::kHalfPixel:
      return (x + 0.5) / a.scale - 0.5;
    case Coord::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(a.out) / a.out_width;
      return in / 2 * (1 - adjustment) + (x + 0.5) / a.scale - 0.5;
    }
    case Coord::kPytorchHalfPixel:
      return a.out_width == 1 ? -0.5 : (x + 0.5) / a.scale - 0.5;
    case Coord::kAlignCorners:
      return a.out_width == 1 ? 0.0 : x * (in - 1) / (a.out_width - 1);
    case Coord::kAsymmetric:
      return x / a.scale;
    case Coord::kTfHalfPixelForNn:
      return (x + 0.5) / a.scale;
    case Coord::kTfCropAndResize: {
      const double span = (a.roi_end - a.roi_start) * (in - 1);
      const double r = a.out_width == 1 ? span / 2 : x * span / (a.out_width - 1);
      return r + a.roi_start * (in - 1);
    }
  }
  return 0;
}

AxisTaps axis_taps(const Options& o, const AxisSpec& a) {
  AxisTaps t;
  t.first.push_back(0);
  t.outside.assign(static_cast<size_t>(a.out), 0);
  std::vector<double> w;
  for (int64_t x = 0; x < a.out; ++x) {
    const double src = source_coordinate(o, a, static_cast<double>(x));
    // Outside the image, or not finite (a ROI so large that its span overflows).
    if (o.coord == Coord::kTfCropAndResize && !(src >= 0 && src <= static_cast<double>(a.in - 1))) {
      t.outside[x] = 1;
      t.identity = false;
      t.first.push_back(static_cast<int64_t>(t.index.size()));
      continue;
    }
    // The taps sit at base + i; ratio, the distance from base to src, lies in (0, 1], so an
    // integral coordinate prefers the pixel on its left as the reference does.
    double base = std::floor(src), ratio = src - base;
    if (ratio == 0) {
      base -= 1;
      ratio = 1;
    }
    int64_t start = 0;
    w.clear();
    const double s = o.antialias ? std::min(a.scale, 1.0) : 1.0;
    if (o.mode == Mode::kNearest) {
      bool right = false;
      switch (o.nearest) {
        case Nearest::kRoundPreferFloor:
          right = ratio > 0.5;
          break;
        case Nearest::kRoundPreferCeil:
          right = ratio >= 0.5;
          break;
        case Nearest::kFloor:
          right = ratio == 1;
          break;
        case Nearest::kCeil:
          right = true;
          break;
        case Nearest::kSimple:
          right = a.scale < 1 ? true : ratio == 1;
          break;
      }
      w = {right ? 0.0 : 1.0, right ? 1.0 : 0.0};
    } else if (o.mode == Mode::kLinear) {
      start = static_cast<int64_t>(std::floor(-1 / s)) + 1;
      for (int64_t i = start; i < 2 - start; ++i)
        w.push_back(std::clamp(1 - std::abs((static_cast<double>(i) - ratio) * s), 0.0, 1.0));
    } else {
      start = static_cast<int64_t>(std::floor(-2 / s)) + 1;
      for (int64_t i = start; i < 2 - start; ++i)
        w.push_back(cubic_weight((static_cast<double>(i) - ratio) * s, o.cubic_a));
    }
    double sum = 0;
    for (size_t i = 0; i < w.size(); ++i) {
      const int64_t idx = static_cast<int64_t>(base) + start + static_cast<int64_t>(i);
      if (o.exclude_outside && o.mode != Mode::kNearest && (idx < 0 || idx >= a.in)) w[i] = 0;
      sum += w[i];
    }
    const bool normalise = o.mode != Mode::kNearest && (o.antialias || o.exclude_outside);
    for (size_t i = 0; i < w.size(); ++i) {
      if (w[i] == 0) continue;
      const int64_t idx = static_cast<int64_t>(base) + start + static_cast<int64_t>(i);
      t.index.push_back(std::clamp<int64_t>(idx, 0, a.in - 1));  // edge padding
      t.weight.push_back(normalise ? w[i] / sum : w[i]);
    }
    const size_t n = t.index.size() - static_cast<size_t>(t.first.back());
    if (n != 1 || t.index.back() != x || t.weight.back() != 1.0) t.identity = false;
    t.first.push_back(static_cast<int64_t>(t.index.size()));
  }
  if (a.in != a.out) t.identity = false;
  return t;
}

class Resize : public Kernel {
 public:
  explicit Resize(const OpContext& ctx) : opset_(ctx.opset()) {
    const bool upsample = ctx.node().op_type == "Upsample";
    legacy_ = upsample || opset_ < 11;
    o_.mode = pick<Mode>(ctx, "mode", "nearest",
                         {{"nearest", Mode::kNearest},
                          {"linear", Mode::kLinear},
                          {"bilinear", Mode::kLinear},
                          {"cubic", Mode::kCubic}});
    if (legacy_) {
      if (o_.mode == Mode::kCubic) ctx.fail("attribute 'mode' is 'cubic'; it needs opset 11");
      o_.coord = Coord::kAsymmetric;
      o_.nearest = Nearest::kSimple;
      if (upsample && opset_ < 9)
        for (float f : ctx.attr_floats("scales")) scales_attr_.push_back(f);
      return;
    }
    std::vector<std::pair<const char*, Coord>> coords = {
        {"half_pixel", Coord::kHalfPixel},
        {"pytorch_half_pixel", Coord::kPytorchHalfPixel},
        {"align_corners", Coord::kAlignCorners},
        {"asymmetric", Coord::kAsymmetric},
        {"tf_crop_and_resize", Coord::kTfCropAndResize}};
    if (opset_ < 13) coords.push_back({"tf_half_pixel_for_nn", Coord::kTfHalfPixelForNn});
    if (opset_ >= 19) coords.push_back({"half_pixel_symmetric", Coord::kHalfPixelSymmetric});
    const std::string coord = ctx.attr_string("coordinate_transformation_mode", "half_pixel");
    o_.coord = Coord::kHalfPixel;
    bool found = false;
    for (const auto& [name, c] : coords)
      if (coord == name) o_.coord = c, found = true;
    if (!found)
      ctx.fail(
          "attribute 'coordinate_transformation_mode' is '{}'; it is not one of opset {}'s "
          "modes",
          coord, opset_);
    o_.nearest = pick<Nearest>(ctx, "nearest_mode", "round_prefer_floor",
                               {{"round_prefer_floor", Nearest::kRoundPreferFloor},
                                {"round_prefer_ceil", Nearest::kRoundPreferCeil},
                                {"floor", Nearest::kFloor},
                                {"ceil", Nearest::kCeil}});
    o_.cubic_a = ctx.attr_float("cubic_coeff_a", -0.75f);
    o_.exclude_outside = ctx.attr_int("exclude_outside", 0) != 0;
    o_.extrapolation = ctx.attr_float("extrapolation_value", 0.0f);
    if (opset_ >= 18) {
      o_.antialias = ctx.attr_int("antialias", 0) != 0;
      o_.axes = ctx.attr_ints("axes", {});
      o_.policy = pick<AspectPolicy>(ctx, "keep_aspect_ratio_policy", "stretch",
                                     {{"stretch", AspectPolicy::kStretch},
                                      {"not_larger", AspectPolicy::kNotLarger},
                                      {"not_smaller", AspectPolicy::kNotSmaller}});
    }
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const int64_t rank = x.rank();
    std::vector<int64_t> axes;
    if (o_.axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    } else {
      axes = normalize_axes(o_.axes, rank, "attribute 'axes'");
    }
    const size_t na = axes.size();
    std::vector<AxisSpec> specs(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d)
      specs[d] = {x.shape()[d], x.shape()[d], 1.0, static_cast<double>(x.shape()[d])};

    // The scales or sizes, from the attribute (Upsample-7) or the inputs.
    std::vector<double> scales = scales_attr_;
    std::vector<int64_t> sizes;
    const Tensor* roi = nullptr;
    if (legacy_) {
      if (scales.empty()) scales = read_doubles(input_tensor(in, 1, "scales"), "scales");
    } else {
      roi = optional_input(in, 1, "roi");
      if (roi && roi->numel() == 0) roi = nullptr;
      if (const Tensor* s = optional_input(in, 2, "scales"); s && s->numel() > 0)
        scales = read_doubles(*s, "scales");
      if (const Tensor* s = optional_input(in, 3, "sizes"); s && s->numel() > 0)
        sizes = read_int64s(*s, "sizes");
      if (scales.empty() == sizes.empty())
        ctx.fail("it has {}; exactly one of 'scales' and 'sizes' must be given",
                 scales.empty() ? "neither scales nor sizes" : "both scales and sizes");
    }
    const std::vector<double>& given = scales;
    if (!given.empty()) {
      if (given.size() != na)
        ctx.fail("scales has {} values; it must have one per resized axis ({})", given.size(), na);
      for (size_t i = 0; i < na; ++i) {
        if (!(given[i] > 0))
          ctx.fail("scales [{}] has a value that is not positive", fmt::join(given, ", "));
        AxisSpec& a = specs[axes[i]];
        // The scale is a float; the output length floor(scale * in).
        a.scale = static_cast<double>(static_cast<float>(given[i]));
        a.out_width = a.scale * static_cast<double>(a.in);
        a.out = output_length(ctx, std::floor(a.out_width), axes[i], a.in);
      }
    } else {
      if (sizes.size() != na)
        ctx.fail("sizes has {} values; it must have one per resized axis ({})", sizes.size(), na);
      for (size_t i = 0; i < na; ++i)
        if (sizes[i] < 0) ctx.fail("sizes [{}] has a negative value", fmt::join(sizes, ", "));
      apply_sizes(ctx, specs, axes, sizes);
    }
    if (roi) {
      std::vector<double> r = read_doubles(*roi, "roi");
      if (r.size() != 2 * na)
        ctx.fail("roi has {} values; it must have 2 per resized axis ({})", r.size(), 2 * na);
      for (size_t i = 0; i < na; ++i) {
        if (o_.coord == Coord::kTfCropAndResize &&
            !(std::isfinite(r[i]) && std::isfinite(r[i + na])))
          ctx.fail(
              "roi [{}] holds a value that is not finite; tf_crop_and_resize needs finite "
              "corners",
              fmt::join(r, ", "));
        specs[axes[i]].roi_start = r[i];
        specs[axes[i]].roi_end = r[i + na];
      }
    } else if (o_.coord == Coord::kTfCropAndResize) {
      ctx.fail("input 'roi' is absent; coordinate_transformation_mode tf_crop_and_resize needs it");
    }

    Shape out_shape(static_cast<size_t>(rank));
    std::vector<AxisTaps> taps(static_cast<size_t>(rank));
    for (int64_t d = 0; d < rank; ++d) {
      out_shape[d] = specs[d].out;
      taps[d] = build_taps(specs[d]);
    }
    if (o_.mode == Mode::kNearest && o_.coord != Coord::kTfCropAndResize)
      return {gather(x, out_shape, taps)};
    return {dispatch<NumericTypes>(
        x.dtype(), [&]<typename T>() { return interpolate<T>(x, out_shape, taps); }, "input X")};
  }

 private:
  // Sizes (with keep_aspect_ratio_policy): the output lengths and the scales they imply.
  void apply_sizes(const RunContext& ctx, std::vector<AxisSpec>& specs,
                   const std::vector<int64_t>& axes, const std::vector<int64_t>& sizes) const {
    if (o_.policy == AspectPolicy::kStretch) {
      for (size_t i = 0; i < axes.size(); ++i) {
        AxisSpec& a = specs[axes[i]];
        a.out = sizes[i];
        a.scale = static_cast<double>(a.out) / static_cast<double>(a.in);
        a.out_width = static_cast<double>(a.out);
      }
      return;
    }
    // One scale for every axis: the smallest (not_larger) or largest (not_smaller) ratio;
    // the lengths are round_half_up(scale * in).
    double scale = 0;
    for (size_t i = 0; i < axes.size(); ++i) {
      const double r = static_cast<double>(sizes[i]) / static_cast<double>(specs[axes[i]].in);
      if (i == 0) scale = r;
      scale = o_.policy == AspectPolicy::kNotLarger ? std::min(scale, r) : std::max(scale, r);
    }
    for (int64_t d : axes) {
      AxisSpec& a = specs[d];
      a.scale = scale;
      a.out_width = scale * static_cast<double>(a.in);
      a.out = output_length(ctx, a.out_width + 0.5, d, a.in);
    }
  }

  // An axis's output length from scale * in, already rounded (down for scales, half up for
  // sizes with a kept aspect ratio). A scale of inf, or one that takes the length past int64
  // (a float scale reaches 3.4e38), is refused before the cast, which would be undefined;
  // the memory limit judges the rest.
  static int64_t output_length(const RunContext& ctx, double length, int64_t axis, int64_t in) {
    if (!(length >= 0 && length < 0x1p62))
      ctx.fail(
          "axis {} of length {} would be resized to {} elements; the scale must make it "
          "finite and below 2^62",
          axis, in, length);
    return static_cast<int64_t>(length);
  }

  AxisTaps build_taps(const AxisSpec& a) const {
    if (a.in == 0 || a.out == 0) {
      AxisTaps t;
      t.first.assign(static_cast<size_t>(a.out) + 1, 0);
      t.outside.assign(static_cast<size_t>(a.out), 0);
      t.identity = a.in == a.out;
      return t;
    }
    return axis_taps(o_, a);
  }

  // Nearest without extrapolation: every output element copies one input element.
  static Tensor gather(const Tensor& x, const Shape& out_shape, const std::vector<AxisTaps>& taps) {
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    const int64_t rank = x.rank(), total = y.numel();
    if (total == 0) return y;
    const Shape in_strides = strides_of(x.shape());
    const int64_t inner = out_shape[rank - 1];
    std::vector<int64_t> last(static_cast<size_t>(inner));
    for (int64_t i = 0; i < inner; ++i) last[i] = taps[rank - 1].index[taps[rank - 1].first[i]];
    dispatch_storage(
        x.dtype(),
        [&]<typename S>() {
          const S* src = static_cast<const S*>(x.raw_data());
          S* dst = static_cast<S*>(y.raw_data());
          const int64_t rows = total / inner;
          parallel_for(rows, grain_for(inner), [&](int64_t b, int64_t e) {
            for (int64_t row = b; row < e; ++row) {
              int64_t off = 0;
              for (int64_t d = rank - 2, r = row; d >= 0; --d) {
                const int64_t o = r % out_shape[d];
                r /= out_shape[d];
                off += taps[d].index[taps[d].first[o]] * in_strides[d];
              }
              S* out = dst + row * inner;
              for (int64_t i = 0; i < inner; ++i) out[i] = src[off + last[i]];
            }
          });
        },
        "input X");
    return y;
  }

  // One axis of the interpolation: out[p, o, i] = 0 + w_0 in[p, index_0, i] + w_1 ... over
  // o's taps in order, in double (the reference's sum, kept exactly: no contraction in this
  // file), stored through narrow<Out> (Out = double between axes). `in` is read through
  // to_double, so the first axis reads the input itself. Split over outer rows (p, o); a
  // row's values never depend on the split.
  template <typename In, typename Out>
  static void resize_axis(const In* in, Out* out, int64_t outer, int64_t len_in, int64_t len_out,
                          int64_t inner, const AxisTaps& t) {
    const int64_t* first = t.first.data();
    const int64_t* index = t.index.data();
    const double* weight = t.weight.data();
    if (inner == 1) {
      // The innermost axis: each output is a short dot product over one input row.
      parallel_for(outer, grain_for(len_out * 2), [&](int64_t b, int64_t e) {
        for (int64_t p = b; p < e; ++p) {
          const In* row = in + p * len_in;
          Out* dst = out + p * len_out;
          for (int64_t o = 0; o < len_out; ++o) {
            double acc = 0.0;
            for (int64_t k = first[o]; k < first[o + 1]; ++k)
              acc += weight[k] * to_double(row[index[k]]);
            dst[o] = narrow<Out>(acc);
          }
        }
      });
      return;
    }
    parallel_for(outer * len_out, grain_for(inner * 4), [&](int64_t b, int64_t e) {
      std::vector<double> acc(static_cast<size_t>(inner));
      for (int64_t row = b; row < e; ++row) {
        const int64_t p = row / len_out, o = row % len_out;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t k = first[o]; k < first[o + 1]; ++k) {
          const double wv = weight[k];
          const In* in_row = in + (p * len_in + index[k]) * inner;
          for (int64_t i = 0; i < inner; ++i) acc[i] += wv * to_double(in_row[i]);
        }
        Out* dst = out + row * inner;
        for (int64_t i = 0; i < inner; ++i) dst[i] = narrow<Out>(acc[i]);
      }
    });
  }

  // The last two axes (both resized) in one pass, each value by the formulas of resize_axis:
  // an output row (p, o) sums rows of the W-resized image, and those rows (0 + w_0 x[.., j_0]
  // + ...) are made when first needed in a small per-thread cache keyed by input row, instead
  // of a whole W-resized intermediate written to memory and read back. Consecutive output
  // rows share input rows, so each is made about once per chunk.
  template <typename In, typename Out>
  static void resize_last_two(const In* in, Out* out, int64_t outer, int64_t h_in, int64_t h_out,
                              int64_t w_in, int64_t w_out, const AxisTaps& th, const AxisTaps& tw) {
    constexpr int64_t kSlots = 8;
    parallel_for(outer * h_out, grain_for(w_out * 8), [&](int64_t b, int64_t e) {
      std::vector<double> rows(static_cast<size_t>(kSlots * w_out)), acc(w_out);
      std::vector<int64_t> held(kSlots, -1);  // the input row each slot holds
      auto w_resized = [&](int64_t r) -> const double* {
        const int64_t slot = r % kSlots;
        double* dst = rows.data() + slot * w_out;
        if (held[slot] == r) return dst;
        held[slot] = r;
        const In* row = in + r * w_in;
        for (int64_t o = 0; o < w_out; ++o) {
          double sum = 0.0;
          for (int64_t k = tw.first[o]; k < tw.first[o + 1]; ++k)
            sum += tw.weight[k] * to_double(row[tw.index[k]]);
          dst[o] = sum;
        }
        return dst;
      };
      for (int64_t row = b; row < e; ++row) {
        const int64_t p = row / h_out, o = row % h_out;
        std::fill(acc.begin(), acc.end(), 0.0);
        for (int64_t k = th.first[o]; k < th.first[o + 1]; ++k) {
          const double wv = th.weight[k];
          const double* src = w_resized(p * h_in + th.index[k]);
          for (int64_t i = 0; i < w_out; ++i) acc[i] += wv * src[i];
        }
        Out* dst = out + row * w_out;
        for (int64_t i = 0; i < w_out; ++i) dst[i] = narrow<Out>(acc[i]);
      }
    });
  }

  // Linear, cubic (and nearest with extrapolation): axis by axis in double, innermost first;
  // identity axes are skipped, the first resized axis reads X and the last one rounds into Y
  // (with tf_crop_and_resize the rounding is a pass of its own, which places the
  // extrapolation value).
  template <typename T>
  Tensor interpolate(const Tensor& x, const Shape& out_shape,
                     const std::vector<AxisTaps>& taps) const {
    const int64_t rank = x.rank();
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    if (y.numel() == 0) return y;
    const bool crop = o_.coord == Coord::kTfCropAndResize;
    std::vector<int64_t> resized;  // innermost first
    for (int64_t d = rank - 1; d >= 0; --d)
      if (!taps[d].identity) resized.push_back(d);
    T* dst = y.data<T>();
    const T* src = x.data<T>();
    Shape shape = x.shape();
    // Intermediate axes in double; left uninitialized (every element is written), so their
    // pages are first touched by the threads that fill them.
    std::unique_ptr<double[]> cur, next;
    for (size_t n = 0; n < resized.size();) {
      const int64_t d = resized[n];
      // The two innermost axes both resized: one fused pass (the usual 2-D image case).
      const bool two = n == 0 && resized.size() >= 2 && d == rank - 1 && resized[1] == rank - 2;
      const int64_t d0 = two ? rank - 2 : d;
      const int64_t outer = dims_product(shape, 0, d0), inner = dims_product(shape, d + 1, rank);
      const int64_t len_in = shape[d0], len_out = out_shape[d0];
      const size_t step = two ? 2 : 1;
      const bool last = n + step == resized.size() && !crop;
      const int64_t out_inner = two ? out_shape[rank - 1] : inner;
      if (!last) next.reset(new double[static_cast<size_t>(outer * len_out * out_inner)]);
      if (two && last)
        resize_last_two(src, dst, outer, len_in, len_out, shape[d], out_shape[d], taps[d0],
                        taps[d]);
      else if (two)
        resize_last_two(src, next.get(), outer, len_in, len_out, shape[d], out_shape[d], taps[d0],
                        taps[d]);
      else if (n == 0 && last)
        resize_axis(src, dst, outer, len_in, len_out, inner, taps[d]);
      else if (n == 0)
        resize_axis(src, next.get(), outer, len_in, len_out, inner, taps[d]);
      else if (last)
        resize_axis(cur.get(), dst, outer, len_in, len_out, inner, taps[d]);
      else
        resize_axis(cur.get(), next.get(), outer, len_in, len_out, inner, taps[d]);
      cur.swap(next);
      shape[d] = out_shape[d];
      shape[d0] = out_shape[d0];
      n += step;
    }
    if (!resized.empty() && !crop) return y;
    if (resized.empty()) {
      cur.reset(new double[static_cast<size_t>(x.numel())]);
      for (int64_t i = 0; i < x.numel(); ++i) cur[i] = to_double(src[i]);
    }
    const int64_t total = y.numel();
    const T extrapolation = narrow<T>(o_.extrapolation);
    parallel_for(total, kElementwiseGrain, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) {
        bool outside = false;
        if (crop)
          for (int64_t d = rank - 1, r = i; d >= 0; --d) {
            outside = outside || taps[d].outside[r % out_shape[d]];
            r /= out_shape[d];
          }
        dst[i] = outside ? extrapolation : narrow<T>(cur[i]);
      }
    });
    return y;
  }

  int64_t opset_;
  bool legacy_ = false;
  Options o_;
  std::vector<double> scales_attr_;
};
// Resize 10 (scales, asymmetric), 11 (roi/scales/sizes, modes), 13 (optional roi/scales),
// 18 (antialias, axes, keep_aspect_ratio_policy), 19 (half_pixel_symmetric).
PARITY_REF_OP("", "Resize", 10, kOpsetMax, Resize);
// Upsample 7 (scales attribute), 9 (scales input); removed at 10.
PARITY_REF_OP("", "Upsample", 7, 9, Resize);

}  // namespace
}  // namespace parity::ref
