// Regions of interest: RoiAlign (bilinear samples averaged or maxed per bin) and MaxRoiPool
// (Caffe's max over integer bins).
#include <cmath>
#include <limits>

#include "backend/ref/ops/kernel_util.h"
#include "core/checked_math.h"
#include "core/limits.h"

namespace parity::ref {
namespace {

std::vector<double> to_doubles(const Tensor& t, std::string_view what) {
  return dispatch<FloatTypes>(
      t.dtype(),
      [&]<typename T>() {
        std::vector<double> v(static_cast<size_t>(t.numel()));
        for (size_t i = 0; i < v.size(); ++i) v[i] = to_double(t.data<T>()[i]);
        return v;
      },
      what);
}

// RoiAlign, as the spec's reference and ONNX Runtime compute it: each output bin samples a
// grid of points (sampling_ratio per side, or ceil(roi size / bins)); each point is a bilinear
// interpolation of the 4 nearest pixels (points more than one pixel outside read 0, points
// just outside are clamped to the edge). avg averages the samples; max takes the largest
// weighted corner value of any sample. half_pixel (default from 16) shifts the ROI by -0.5
// pixels; output_half_pixel (version 10's behaviour) does not, and keeps ROIs at least 1 wide.
class RoiAlign : public Kernel {
 public:
  explicit RoiAlign(const OpContext& ctx)
      : out_h_(ctx.attr_int("output_height", 1)),
        out_w_(ctx.attr_int("output_width", 1)),
        sampling_ratio_(ctx.attr_int("sampling_ratio", 0)),
        spatial_scale_(ctx.attr_float("spatial_scale", 1.0f)) {
    const std::string mode = ctx.attr_string("mode", "avg");
    if (mode != "avg" && mode != "max")
      ctx.fail("attribute 'mode' is '{}'; it must be avg or max", mode);
    max_ = mode == "max";
    const std::string coord = ctx.attr_string(
        "coordinate_transformation_mode", ctx.opset() >= 16 ? "half_pixel" : "output_half_pixel");
    if (coord != "half_pixel" && coord != "output_half_pixel")
      ctx.fail(
          "attribute 'coordinate_transformation_mode' is '{}'; it must be half_pixel or "
          "output_half_pixel",
          coord);
    half_pixel_ = coord == "half_pixel";
    if (out_h_ < 1 || out_w_ < 1 || sampling_ratio_ < 0)
      ctx.fail(
          "output_height {}, output_width {} and sampling_ratio {} must be positive "
          "(sampling_ratio 0 or more)",
          out_h_, out_w_, sampling_ratio_);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& rois_t = input_tensor(in, 1, "rois");
    const Tensor& batch_t = input_tensor(in, 2, "batch_indices");
    check_rank(x, 4, 4, "input X");
    const int64_t num = rois_t.rank() == 2 ? rois_t.shape()[0] : -1;
    if (num < 0 || rois_t.shape()[1] != 4 || batch_t.numel() != num)
      ctx.fail("rois has shape {} and batch_indices {}; they must be [R, 4] and [R]",
               shape_str(rois_t.shape()), shape_str(batch_t.shape()));
    const std::vector<double> rois = to_doubles(rois_t, "input rois");
    const std::vector<int64_t> batch = read_int64s(batch_t, "batch_indices");
    for (int64_t b : batch)
      if (b < 0 || b >= x.shape()[0])
        ctx.fail("batch_indices holds {}; it must lie in [0, {})", b, x.shape()[0]);
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return align<T>(x, rois, batch); }, "input X")};
  }

 private:
  struct Sample {
    int64_t offset[4];
    double weight[4];
  };

  template <typename T>
  Tensor align(const Tensor& x, const std::vector<double>& rois,
               const std::vector<int64_t>& batch) const {
    const int64_t channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    const int64_t num = static_cast<int64_t>(batch.size());
    Tensor y = uninitialized_tensor(x.dtype(), {num, channels, out_h_, out_w_});
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    const double offset = half_pixel_ ? 0.5 : 0.0, scale = spatial_scale_;
    // An image without pixels (height or width 0) has nothing to interpolate: every point
    // lies outside it and reads 0. A point at a NaN coordinate (a NaN in the ROI, or inf - inf)
    // lies nowhere: its bin is NaN. The spec's reference raises on both and ONNX Runtime reads
    // outside the image or casts NaN to an index, both undefined (fuzz_prepare, AddressSanitizer).
    const bool empty_image = height == 0 || width == 0;
    // One chunk is one output row of one ROI, not one ROI: a run's time limit is checked
    // between chunks, and one ROI of a wide input can take seconds.
    parallel_for(checked_mul(num, out_h_, "RoiAlign's output rows"), 1, [&](int64_t b, int64_t e) {
      std::vector<Sample> samples;
      for (int64_t item = b; item < e; ++item) {
        const int64_t r = item / out_h_, ph = item % out_h_;
        const double* roi = rois.data() + r * 4;
        const double x0 = roi[0] * scale - offset, y0 = roi[1] * scale - offset;
        double roi_w = roi[2] * scale - offset - x0, roi_h = roi[3] * scale - offset - y0;
        if (!half_pixel_) {
          roi_w = std::max(roi_w, 1.0);
          roi_h = std::max(roi_h, 1.0);
        }
        const double bin_h = roi_h / double(out_h_), bin_w = roi_w / double(out_w_);
        const int64_t grid_h = grid_side(bin_h, r, "height"), grid_w = grid_side(bin_w, r, "width");
        // One bin's points are held at once: a huge sampling_ratio or ROI is refused by the
        // memory limit instead of growing the list until the machine runs out.
        const int64_t points = std::max<int64_t>(
            checked_mul(grid_h, grid_w, "the number of sampling points of one RoiAlign bin"), 0);
        check_scratch_allocation(
            points, sizeof(Sample),
            fmt::format("the {} x {} sampling points of one bin of ROI {} ({})", grid_h, grid_w, r,
                        sampling_ratio_ > 0 ? "set by sampling_ratio; lower it"
                                            : "from the ROI's size; set sampling_ratio"));
        const double count = double(std::max<int64_t>(points, 1));
        for (int64_t pw = 0; pw < out_w_; ++pw) {
          samples.clear();
          bool nowhere = false;
          for (int64_t iy = 0; iy < grid_h; ++iy)
            for (int64_t ix = 0; ix < grid_w; ++ix) {
              const double yy = y0 + ph * bin_h + (iy + 0.5) * bin_h / double(grid_h);
              const double xx = x0 + pw * bin_w + (ix + 0.5) * bin_w / double(grid_w);
              nowhere |= std::isnan(yy) || std::isnan(xx);
              samples.push_back(bilinear(yy, xx, height, width));
            }
          for (int64_t c = 0; c < channels; ++c) {
            const T* plane = src + (batch[r] * channels + c) * height * width;
            dst[((r * channels + c) * out_h_ + ph) * out_w_ + pw] =
                nowhere ? narrow<T>(std::numeric_limits<double>::quiet_NaN())
                        : narrow<T>(empty_image ? 0.0 : bin_value(plane, samples, count));
          }
        }
      }
    });
    return y;
  }

  // One bin of one channel: the average of its samples' interpolations, or the largest
  // weighted corner value of any sample.
  template <typename T>
  double bin_value(const T* plane, const std::vector<Sample>& samples, double count) const {
    double acc = 0;
    bool first = true;
    for (const Sample& s : samples) {
      if (!max_) {
        for (int k = 0; k < 4; ++k) acc += s.weight[k] * to_double(plane[s.offset[k]]);
        continue;
      }
      double v = s.weight[0] * to_double(plane[s.offset[0]]);
      for (int k = 1; k < 4; ++k) v = std::max(v, s.weight[k] * to_double(plane[s.offset[k]]));
      acc = first ? v : std::max(acc, v);
      first = false;
    }
    return max_ ? acc : acc / count;
  }

  // Sampling points per side of a bin of ROI r: sampling_ratio, or else ceil(bin size) (the
  // adaptive grid), which a non-finite or astronomically large ROI cannot give.
  int64_t grid_side(double bin, int64_t r, const char* side) const {
    if (sampling_ratio_ > 0) return sampling_ratio_;
    const double n = std::ceil(bin);
    if (!(std::abs(n) < 1e15))
      fail(
          "ROI {} has bins of {} {}; with sampling_ratio 0 the points per side are the bin's "
          "size rounded up, so it must be finite and below 10^15 (set sampling_ratio)",
          r, side, bin);
    return static_cast<int64_t>(n);
  }

  // The pixels and weights of the point (y, x); none (offsets 0, weights 0) outside the
  // image or at a NaN coordinate. An image without pixels is align's to skip.
  static Sample bilinear(double y, double x, int64_t height, int64_t width) {
    Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
    if (!(y >= -1.0 && y <= double(height) && x >= -1.0 && x <= double(width))) return s;
    y = std::max(y, 0.0);
    x = std::max(x, 0.0);
    int64_t y_lo = static_cast<int64_t>(y), x_lo = static_cast<int64_t>(x), y_hi, x_hi;
    if (y_lo >= height - 1) {
      y_hi = y_lo = height - 1;
      y = double(y_lo);
    } else {
      y_hi = y_lo + 1;
    }
    if (x_lo >= width - 1) {
      x_hi = x_lo = width - 1;
      x = double(x_lo);
    } else {
      x_hi = x_lo + 1;
    }
    const double ly = y - double(y_lo), lx = x - double(x_lo), hy = 1 - ly, hx = 1 - lx;
    s.offset[0] = y_lo * width + x_lo;
    s.offset[1] = y_lo * width + x_hi;
    s.offset[2] = y_hi * width + x_lo;
    s.offset[3] = y_hi * width + x_hi;
    s.weight[0] = hy * hx;
    s.weight[1] = hy * lx;
    s.weight[2] = ly * hx;
    s.weight[3] = ly * lx;
    return s;
  }

  int64_t out_h_, out_w_, sampling_ratio_;
  double spatial_scale_;
  bool max_ = false, half_pixel_ = true;
};
// Versions 10 (output_half_pixel), 16 (coordinate_transformation_mode, half_pixel default),
// 22 (bfloat16).
PARITY_REF_OP("", "RoiAlign", 10, kOpsetMax, RoiAlign);

// MaxRoiPool: rois [R, 5] = (batch index, x1, y1, x2, y2); each ROI, scaled and rounded to
// pixels, is cut into pooled_shape bins whose maxima are the output (0 for an empty bin).
class MaxRoiPool : public Kernel {
 public:
  explicit MaxRoiPool(const OpContext& ctx)
      : pooled_(ctx.attr_ints("pooled_shape")),
        spatial_scale_(ctx.attr_float("spatial_scale", 1.0f)) {
    if (pooled_.size() != 2 || pooled_[0] < 1 || pooled_[1] < 1)
      ctx.fail("attribute 'pooled_shape' is [{}]; it must be 2 positive sizes",
               fmt::join(pooled_, ", "));
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& rois_t = input_tensor(in, 1, "rois");
    check_rank(x, 4, 4, "input X");
    if (rois_t.rank() != 2 || rois_t.shape()[1] != 5)
      ctx.fail("rois has shape {}; it must be [R, 5]", shape_str(rois_t.shape()));
    const std::vector<double> rois = to_doubles(rois_t, "input rois");
    const int64_t num = rois_t.shape()[0];
    for (int64_t r = 0; r < num; ++r) {
      const double b = rois[r * 5];
      if (!(b >= 0 && b < double(x.shape()[0])))
        ctx.fail("rois {} has batch index {}; it must lie in [0, {})", r, b, x.shape()[0]);
    }
    return {dispatch<FloatTypes>(
        x.dtype(), [&]<typename T>() { return pool<T>(x, rois, num); }, "input X")};
  }

 private:
  template <typename T>
  Tensor pool(const Tensor& x, const std::vector<double>& rois, int64_t num) const {
    const int64_t channels = x.shape()[1], height = x.shape()[2], width = x.shape()[3];
    const int64_t ph_n = pooled_[0], pw_n = pooled_[1];
    Tensor y = uninitialized_tensor(x.dtype(), {num, channels, ph_n, pw_n});
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    parallel_for(num * channels, grain_for(height * width), [&](int64_t b, int64_t e) {
      for (int64_t item = b; item < e; ++item) {
        const int64_t r = item / channels, c = item % channels;
        const double* roi = rois.data() + r * 5;
        const int64_t n = static_cast<int64_t>(roi[0]);
        T* out = dst + (r * channels + c) * ph_n * pw_n;
        // A NaN corner has no pixel: the ROI's bins are NaN. A corner beyond 2^52 pixels
        // (far outside any image) is held there, so that the sums below stay exact, and the
        // casts defined; so is a bin's start beyond 2^62.
        double corner[4];
        for (int k = 0; k < 4; ++k)
          corner[k] = std::clamp(std::round(roi[k + 1] * spatial_scale_), -0x1p52, 0x1p52);
        if (std::isnan(corner[0] + corner[1] + corner[2] + corner[3])) {
          std::fill(out, out + ph_n * pw_n, narrow<T>(std::numeric_limits<double>::quiet_NaN()));
          continue;
        }
        const int64_t x1 = int64_t(corner[0]), y1 = int64_t(corner[1]);
        const int64_t x2 = int64_t(corner[2]), y2 = int64_t(corner[3]);
        const double bin_h = double(std::max<int64_t>(y2 - y1 + 1, 1)) / double(ph_n);
        const double bin_w = double(std::max<int64_t>(x2 - x1 + 1, 1)) / double(pw_n);
        const T* plane = src + (n * channels + c) * height * width;
        auto edge = [](double offset, int64_t start, int64_t hi) {
          return std::clamp<int64_t>(int64_t(std::min(offset, 0x1p62)) + start, 0, hi);
        };
        for (int64_t ph = 0; ph < ph_n; ++ph)
          for (int64_t pw = 0; pw < pw_n; ++pw) {
            const int64_t hs = edge(std::floor(ph * bin_h), y1, height);
            const int64_t he = edge(std::ceil((ph + 1) * bin_h), y1, height);
            const int64_t ws = edge(std::floor(pw * bin_w), x1, width);
            const int64_t we = edge(std::ceil((pw + 1) * bin_w), x1, width);
            double best = 0;
            if (he > hs && we > ws) {
              best = -std::numeric_limits<double>::infinity();
              for (int64_t h = hs; h < he; ++h)
                for (int64_t w = ws; w < we; ++w) {
                  const double v = to_double(plane[h * width + w]);
                  if (v > best || std::isnan(v)) best = std::isnan(best) ? best : v;
                }
            }
            out[ph * pw_n + pw] = narrow<T>(best);
          }
      }
    });
    return y;
  }

  std::vector<int64_t> pooled_;
  double spatial_scale_;
};
// Versions 1, 22 (bfloat16).
PARITY_REF_OP("", "MaxRoiPool", 1, kOpsetMax, MaxRoiPool);

}  // namespace
}  // namespace parity::ref
