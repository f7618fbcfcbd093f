// GridSample: samples X [N, C, D1..Dr] at the normalised coordinates of grid
// [N, O1..Or, r] (last dim in reverse axis order: x indexes the last axis), with nearest,
// (multi)linear or (multi)cubic interpolation and zeros/border/reflection padding. Version 16
// takes 2-D images and calls the modes bilinear/bicubic; version 20 takes any rank and calls
// them linear/cubic.
//
// Follows the spec's reference (PyTorch's grid_sample): a coordinate outside the padded range
// is clamped (border) or reflected (reflection) first; then every tap outside the image reads
// 0 (zeros), the nearest edge pixel (border) or its reflection (reflection). Per output point,
// the taps and their weights are found once and applied to every channel, in double.
#include <cmath>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

enum class Mode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] by its nearest border, repeatedly.
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  // The number of whole reflections n stays a double: an int64 could not hold it for a
  // coordinate of 1e30. Below 2^53 it is the same integer, so the same result. An infinite x
  // gives NaN: it has no reflection.
  if (x < lo) {
    const double dx = lo - x, n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    const double dx = x - hi, n = std::floor(dx / range), r = dx - n * range;
    return std::fmod(n, 2.0) == 0 ? hi - r : lo + r;
  }
  return x;
}

// Keys' cubic kernel, a = -0.75, for the four taps at distances t + 1, t, 1 - t, 2 - t.
void cubic_coeffs(double t, double* c) {
  constexpr double a = -0.75;
  auto near = [&](double x) { return ((a + 2) * x - (a + 3)) * x * x + 1; };
  auto far = [&](double x) { return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a; };
  c[0] = far(t + 1);
  c[1] = near(t);
  c[2] = near(1 - t);
  c[3] = far(2 - t);
}

class GridSample : public Kernel {
 public:
  explicit GridSample(const OpContext& ctx)
      : nd_(ctx.opset() >= 20), align_corners_(ctx.attr_int("align_corners", 0) != 0) {
    const std::string mode = ctx.attr_string("mode", nd_ ? "linear" : "bilinear");
    if (mode == "nearest")
      mode_ = Mode::kNearest;
    else if (mode == (nd_ ? "linear" : "bilinear"))
      mode_ = Mode::kLinear;
    else if (mode == (nd_ ? "cubic" : "bicubic"))
      mode_ = Mode::kCubic;
    else
      ctx.fail("attribute 'mode' is '{}'; at opset {} it must be one of nearest, {}", mode,
               ctx.opset(), nd_ ? "linear, cubic" : "bilinear, bicubic");
    const std::string padding = ctx.attr_string("padding_mode", "zeros");
    if (padding == "zeros")
      padding_ = Padding::kZeros;
    else if (padding == "border")
      padding_ = Padding::kBorder;
    else if (padding == "reflection")
      padding_ = Padding::kReflection;
    else
      ctx.fail("attribute 'padding_mode' is '{}'; it must be one of zeros, border, reflection",
               padding);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& grid = input_tensor(in, 1, "grid");
    const int64_t r = x.rank() - 2;
    if (r < 1 || (!nd_ && r != 2) || grid.rank() != r + 2 || grid.shape().back() != r ||
        grid.shape()[0] != x.shape()[0])
      ctx.fail("X has shape {} and grid {}; grid must be [N, {}..., {}] for X [N, C, {}...]{}",
               shape_str(x.shape()), shape_str(grid.shape()), "O", r, "D",
               nd_ ? "" : " with 2 spatial dims (opset 16)");
    std::vector<double> g = dispatch<FloatTypes>(
        grid.dtype(),
        [&]<typename T>() {
          std::vector<double> v(static_cast<size_t>(grid.numel()));
          for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(grid.data<T>()[i]);
          return v;
        },
        "input grid");
    return {dispatch<NumericTypes>(
        x.dtype(), [&]<typename T>() { return sample<T>(x, g, grid.shape()); }, "input X")};
  }

 private:
  template <typename T>
  Tensor sample(const Tensor& x, const std::vector<double>& grid, const Shape& grid_shape) const {
    const int64_t r = x.rank() - 2, batch = x.shape()[0], channels = x.shape()[1];
    Shape dims(x.shape().begin() + 2, x.shape().end());
    Shape out_shape = {batch, channels};
    out_shape.insert(out_shape.end(), grid_shape.begin() + 1, grid_shape.end() - 1);
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    const int64_t points = dims_product(grid_shape, 1, grid_shape.size() - 1);
    const int64_t plane = shape_numel(dims);
    if (y.numel() == 0) return y;
    const Shape strides = strides_of(dims);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    const int64_t per_dim = mode_ == Mode::kNearest ? 1 : mode_ == Mode::kLinear ? 2 : 4;
    int64_t taps = 1;
    for (int64_t i = 0; i < r; ++i) taps *= per_dim;
    parallel_for(batch * points, grain_for(channels * taps), [&](int64_t b, int64_t e) {
      // Per dim: the tap indices (after padding; -1 reads zero) and weights.
      std::vector<int64_t> idx(static_cast<size_t>(r * per_dim));
      std::vector<double> wt(static_cast<size_t>(r * per_dim));
      std::vector<int64_t> offsets(static_cast<size_t>(taps));
      std::vector<double> weights(static_cast<size_t>(taps));
      for (int64_t item = b; item < e; ++item) {
        const int64_t n = item / points, p = item % points;
        const double* coords = grid.data() + item * r;
        bool nowhere = false;  // a NaN coordinate: the point's value is NaN
        for (int64_t d = 0; d < r; ++d)
          nowhere |=
              !dim_taps(coords[r - 1 - d], dims[d], r == 3, &idx[d * per_dim], &wt[d * per_dim]);
        if (nowhere) {
          for (int64_t c = 0; c < channels; ++c)
            dst[(n * channels + c) * points + p] =
                narrow<T>(std::numeric_limits<double>::quiet_NaN());
          continue;
        }
        // Combine the per-dim taps: the first dim varies slowest.
        for (int64_t t = 0; t < taps; ++t) {
          int64_t off = 0, rest = t;
          double w = 1;
          for (int64_t d = r - 1; d >= 0; --d) {
            const int64_t k = rest % per_dim;
            rest /= per_dim;
            const int64_t i = idx[d * per_dim + k];
            if (i < 0) off = -1;
            if (off >= 0) off += i * strides[d];
            w *= wt[d * per_dim + k];
          }
          offsets[t] = off;
          weights[t] = w;
        }
        for (int64_t c = 0; c < channels; ++c) {
          const T* img = src + (n * channels + c) * plane;
          double v = 0;
          for (int64_t t = 0; t < taps; ++t)
            if (offsets[t] >= 0) v += weights[t] * to_double(img[offsets[t]]);
          dst[(n * channels + c) * points + p] = narrow<T>(v);
        }
      }
    });
    return y;
  }

  // The taps along one dim of size `size` for normalised coordinate `c`; false where c is
  // NaN. Nearest rounds half to even (PyTorch's 2-D nearbyint), or half away from zero with 3
  // spatial dims (its round).
  bool dim_taps(double c, int64_t size, bool round_away, int64_t* idx, double* wt) const {
    const double len = static_cast<double>(size);
    double x = align_corners_ ? (c + 1) / 2 * (len - 1) : ((c + 1) * len - 1) / 2;
    const double lo = align_corners_ ? 0 : -0.5, hi = align_corners_ ? len - 1 : len - 0.5;
    if (mode_ == Mode::kNearest) x = round_away ? std::round(x) : std::nearbyint(x);
    if (x < lo || x > hi) {
      if (padding_ == Padding::kBorder)
        x = std::clamp(x, 0.0, std::max(len - 1, 0.0));
      else if (padding_ == Padding::kReflection)
        x = reflect(x, lo, hi);
    }
    if (std::isnan(x)) return false;  // NaN from c, or from reflecting an infinity
    // Every tap of a point this far outside reads 0 (zeros padding; the others have moved it
    // inside): held here so the casts below stay defined for a coordinate of inf or 1e30.
    x = std::clamp(x, lo - 8, hi + 8);
    if (mode_ == Mode::kNearest) {
      idx[0] = pixel(static_cast<int64_t>(x), size, lo, hi);
      wt[0] = 1;
      return true;
    }
    const double x0 = std::floor(x), t = x - x0;
    const int64_t i0 = static_cast<int64_t>(x0);
    if (mode_ == Mode::kLinear) {
      idx[0] = pixel(i0, size, lo, hi);
      idx[1] = pixel(i0 + 1, size, lo, hi);
      wt[0] = 1 - t;
      wt[1] = t;
      return true;
    }
    cubic_coeffs(t, wt);
    for (int64_t k = 0; k < 4; ++k) idx[k] = pixel(i0 - 1 + k, size, lo, hi);
    return true;
  }

  // The index a tap reads under the padding mode; -1 for a zero, and always in a dim of size
  // 0, which has no edge to repeat or reflect.
  int64_t pixel(int64_t i, int64_t size, double lo, double hi) const {
    if (i >= 0 && i < size) return i;
    if (size == 0) return -1;
    switch (padding_) {
      case Padding::kZeros:
        return -1;
      case Padding::kBorder:
        return std::clamp<int64_t>(i, 0, size - 1);
      case Padding::kReflection:
        return std::clamp<int64_t>(static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi)), 0,
                                   size - 1);
    }
    return -1;
  }

  bool nd_, align_corners_;
  Mode mode_ = Mode::kLinear;
  Padding padding_ = Padding::kZeros;
};
PARITY_REF_OP("", "GridSample", 16, 19, GridSample);
// Version 20: any number of spatial dims; modes renamed linear and cubic.
PARITY_REF_OP("", "GridSample", 20, kOpsetMax, GridSample);

}  // namespace
}  // namespace parity::ref
