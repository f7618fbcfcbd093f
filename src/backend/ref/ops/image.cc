// Image geometry: AffineGrid (the sampling grid of an affine transform, for GridSample),
// Col2Im (sums sliding blocks back into an image) and MaxUnpool (MaxPool's inverse).
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

// AffineGrid: for theta [N, 2, 3] and size [N, C, H, W] (or [N, 3, 4] and [N, C, D, H, W]),
// grid[n, (d,) h, w] = theta[n] @ (x_w, y_h, (z_d,) 1), the base coordinates spread over
// [-1, 1]: the pixel centres, or the corner pixels with align_corners.
class AffineGrid : public Kernel {
 public:
  explicit AffineGrid(const OpContext& ctx)
      : align_corners_(ctx.attr_int("align_corners", 0) != 0) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& theta = input_tensor(in, 0, "theta");
    const std::vector<int64_t> size = read_int64s(input_tensor(in, 1, "size"), "size");
    const int64_t r = static_cast<int64_t>(size.size()) - 2;
    if ((r != 2 && r != 3) || theta.rank() != 3 || theta.shape()[0] != size[0] ||
        theta.shape()[1] != r || theta.shape()[2] != r + 1)
      ctx.fail(
          "theta has shape {} and size [{}]; they must be [N, 2, 3] with [N, C, H, W] or "
          "[N, 3, 4] with [N, C, D, H, W]",
          shape_str(theta.shape()), fmt::join(size, ", "));
    for (int64_t d : size)
      if (d < 0) ctx.fail("size [{}] has a negative value", fmt::join(size, ", "));
    return {dispatch<FloatTypes>(
        theta.dtype(), [&]<typename T>() { return grid<T>(theta, size); }, "input theta")};
  }

 private:
  template <typename T>
  Tensor grid(const Tensor& theta, const std::vector<int64_t>& size) const {
    const int64_t r = static_cast<int64_t>(size.size()) - 2, batch = size[0];
    Shape spatial(size.begin() + 2, size.end());
    Shape out_shape = {batch};
    out_shape.insert(out_shape.end(), spatial.begin(), spatial.end());
    out_shape.push_back(r);
    Tensor y = uninitialized_tensor(theta.dtype(), out_shape);
    // Base coordinates per axis, in axis order (depth,) height, width.
    std::vector<std::vector<double>> base(static_cast<size_t>(r));
    for (int64_t d = 0; d < r; ++d) {
      const int64_t len = spatial[d];
      for (int64_t i = 0; i < len; ++i)
        base[d].push_back(align_corners_ ? (len > 1 ? -1.0 + 2.0 * i / double(len - 1) : -1.0)
                                         : -1.0 + (2.0 * i + 1) / double(len));
    }
    const int64_t points = shape_numel(spatial);
    const T* th = theta.data<T>();
    T* dst = y.data<T>();
    parallel_for(batch * points, grain_for(r * (r + 1)), [&](int64_t b, int64_t e) {
      std::vector<double> h(static_cast<size_t>(r + 1));  // (x, y, (z,) 1): width axis first
      for (int64_t item = b; item < e; ++item) {
        const int64_t n = item / points;
        for (int64_t d = r - 1, rest = item % points; d >= 0; --d) {
          h[r - 1 - d] = base[d][rest % spatial[d]];
          rest /= spatial[d];
        }
        h[r] = 1;
        for (int64_t k = 0; k < r; ++k) {
          double v = 0;
          for (int64_t j = 0; j <= r; ++j) v += to_double(th[(n * r + k) * (r + 1) + j]) * h[j];
          dst[item * r + k] = narrow<T>(v);
        }
      }
    });
    return y;
  }

  bool align_corners_;
};
PARITY_REF_OP("", "AffineGrid", 20, kOpsetMax, AffineGrid);

// Col2Im: input [N, C * prod(block), L] holds, for each of the L block positions (row-major
// over the sliding positions), the C blocks; each value is added at its image position.
class Col2Im : public Kernel {
 public:
  explicit Col2Im(const OpContext& ctx)
      : strides_(ctx.attr_ints("strides", {})),
        dilations_(ctx.attr_ints("dilations", {})),
        pads_(ctx.attr_ints("pads", {})) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const Shape image = read_int64s(input_tensor(in, 1, "image_shape"), "image_shape");
    const Shape block = read_int64s(input_tensor(in, 2, "block_shape"), "block_shape");
    const size_t r = image.size();
    if (x.rank() != 3 || r == 0 || block.size() != r)
      ctx.fail(
          "input has shape {}, image_shape {} and block_shape {}; input must be 3-D and "
          "the shapes of equal, nonzero length",
          shape_str(x.shape()), shape_str(image), shape_str(block));
    auto values = [&](const std::vector<int64_t>& v, const char* name, size_t count, int64_t dflt) {
      if (v.empty()) return std::vector<int64_t>(count, dflt);
      if (v.size() != count)
        ctx.fail("attribute '{}' has {} values; it must have {}", name, v.size(), count);
      return v;
    };
    const auto strides = values(strides_, "strides", r, 1);
    const auto dilations = values(dilations_, "dilations", r, 1);
    const auto pads = values(pads_, "pads", 2 * r, 0);
    const int64_t block_size = shape_numel(block);
    Shape positions(r);
    for (size_t d = 0; d < r; ++d) {
      const int64_t extent = dilations[d] * (block[d] - 1) + 1;
      const int64_t span = image[d] + pads[d] + pads[d + r] - extent;
      if (block[d] < 1 || strides[d] < 1 || dilations[d] < 1 || span < 0)
        ctx.fail(
            "failed to slide block {} over image {} with strides [{}], dilations [{}] and "
            "pads [{}]: sizes must be positive and the block fit the padded image",
            shape_str(block), shape_str(image), fmt::join(strides, ", "),
            fmt::join(dilations, ", "), fmt::join(pads, ", "));
      positions[d] = span / strides[d] + 1;
    }
    if (block_size == 0 || x.shape()[1] % block_size != 0 || x.shape()[2] != shape_numel(positions))
      ctx.fail(
          "input has shape {}; dim 1 must be C times the block size {} and dim 2 the "
          "number of block positions {}",
          shape_str(x.shape()), block_size, shape_numel(positions));
    const int64_t batch = x.shape()[0], channels = x.shape()[1] / block_size;
    Shape out_shape = {batch, channels};
    out_shape.insert(out_shape.end(), image.begin(), image.end());
    return {dispatch<FloatTypes>(
        x.dtype(),
        [&]<typename T>() {
          Tensor y = uninitialized_tensor(x.dtype(), out_shape);
          const int64_t plane = shape_numel(image), count = shape_numel(positions);
          const Shape image_strides = strides_of(image);
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          parallel_for(batch * channels, grain_for(block_size * count), [&](int64_t b, int64_t e) {
            std::vector<double> acc(static_cast<size_t>(plane));
            for (int64_t item = b; item < e; ++item) {
              std::fill(acc.begin(), acc.end(), 0.0);
              const T* col = src + item * block_size * count;
              for (int64_t k = 0; k < block_size; ++k)
                for (int64_t l = 0; l < count; ++l) {
                  int64_t off = 0;
                  bool inside = true;
                  for (int64_t d = static_cast<int64_t>(r) - 1, kr = k, lr = l; d >= 0; --d) {
                    const int64_t pos =
                        lr % positions[d] * strides[d] + kr % block[d] * dilations[d] - pads[d];
                    kr /= block[d];
                    lr /= positions[d];
                    inside = inside && pos >= 0 && pos < image[d];
                    off += pos * image_strides[d];
                  }
                  if (inside) acc[off] += to_double(col[k * count + l]);
                }
              for (int64_t i = 0; i < plane; ++i) dst[item * plane + i] = narrow<T>(acc[i]);
            }
          });
          return y;
        },
        "input")};
  }

 private:
  std::vector<int64_t> strides_, dilations_, pads_;
};
PARITY_REF_OP("", "Col2Im", 18, kOpsetMax, Col2Im);

// MaxUnpool: y.flat[I[i]] = X[i] in a zero tensor of the shape MaxPool's input had,
// (in - 1) * stride + kernel - pads; with output_shape, that result sits at the start of each
// dim of a larger zero tensor (the spec's reference).
class MaxUnpool : public Kernel {
 public:
  explicit MaxUnpool(const OpContext& ctx)
      : kernel_(ctx.attr_ints("kernel_shape")),
        strides_(ctx.attr_ints("strides", {})),
        pads_(ctx.attr_ints("pads", {})) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    const Tensor& ind = input_tensor(in, 1, "I");
    const Tensor* out_shape_t = optional_input(in, 2, "output_shape");
    const size_t r = kernel_.size();
    if (x.rank() != static_cast<int64_t>(r) + 2 || ind.shape() != x.shape())
      ctx.fail(
          "X has shape {} and I {}; they must be equal, with {} spatial dims as "
          "kernel_shape has",
          shape_str(x.shape()), shape_str(ind.shape()), r);
    const auto strides = strides_.empty() ? std::vector<int64_t>(r, 1) : strides_;
    const auto pads = pads_.empty() ? std::vector<int64_t>(2 * r, 0) : pads_;
    if (strides.size() != r || pads.size() != 2 * r)
      ctx.fail("strides [{}] and pads [{}] must have {} and {} values", fmt::join(strides, ", "),
               fmt::join(pads, ", "), r, 2 * r);
    Shape inferred = {x.shape()[0], x.shape()[1]};
    for (size_t d = 0; d < r; ++d)
      inferred.push_back((x.shape()[d + 2] - 1) * strides[d] - pads[d] - pads[d + r] + kernel_[d]);
    Shape out_shape = inferred;
    if (out_shape_t) {
      out_shape = read_int64s(*out_shape_t, "output_shape");
      bool fits = out_shape.size() == inferred.size();
      for (size_t d = 0; fits && d < out_shape.size(); ++d) fits = out_shape[d] >= inferred[d];
      if (!fits)
        ctx.fail("output_shape {} is smaller than the unpooled shape {}; it must hold it",
                 shape_str(out_shape), shape_str(inferred));
    }
    for (int64_t d : inferred)
      if (d < 0) ctx.fail("the unpooled shape {} has a negative dim", shape_str(inferred));
    const std::vector<int64_t> index = read_int64s(ind, "I");
    const int64_t limit = shape_numel(inferred);
    for (int64_t i : index)
      if (i < 0 || i >= limit)
        ctx.fail("I holds index {}; indices must lie in [0, {}) for the unpooled shape {}", i,
                 limit, shape_str(inferred));
    Tensor y(x.dtype(), out_shape);  // zero-filled
    const Shape in_strides = strides_of(inferred), out_strides = strides_of(out_shape);
    dispatch_storage(
        x.dtype(),
        [&]<typename S>() {
          const S* src = static_cast<const S*>(x.raw_data());
          S* dst = static_cast<S*>(y.raw_data());
          for (size_t i = 0; i < index.size(); ++i) {
            int64_t off = 0, rest = index[i];
            for (size_t d = 0; d < inferred.size(); ++d) {
              off += rest / in_strides[d] * out_strides[d];
              rest %= in_strides[d];
            }
            dst[off] = src[i];
          }
        },
        "input X");
    return {y};
  }

 private:
  std::vector<int64_t> kernel_, strides_, pads_;
};
// Versions 9, 11 (output_shape input), 22 (bfloat16).
PARITY_REF_OP("", "MaxUnpool", 9, kOpsetMax, MaxUnpool);

}  // namespace
}  // namespace parity::ref
