// Reading and writing at indices given by data: Gather, GatherElements, GatherND, Scatter,
// ScatterElements, ScatterND. Every index is checked (negative ones count from the end) before
// any element moves, so a bad index is an error naming the node, never a stray read or write.
#include "backend/ref/ops/movement_util.h"

namespace parity::ref {
namespace {

// The indices input as int64, each checked against `dim` and made non-negative.
std::vector<int64_t> checked_indices(const Tensor& t, int64_t dim, std::string_view what) {
  std::vector<int64_t> idx = read_indices(t, what);
  for (size_t i = 0; i < idx.size(); ++i)
    idx[i] = checked_index(idx[i], dim, static_cast<int64_t>(i), what);
  return idx;
}

// ---------------------------------------------------------------------------------------------
// Gathers

class Gather : public Kernel {
 public:
  explicit Gather(const OpContext& ctx) : axis_(ctx.attr_int("axis", 0)) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const Tensor& indices = input_tensor(in, 1, "indices");
    if (x.rank() == 0) fail("input 'data' is a scalar; Gather needs rank 1 or more");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const int64_t dim = x.shape()[axis];
    const std::vector<int64_t> idx = checked_indices(indices, dim, "input 'indices'");
    Shape out(x.shape().begin(), x.shape().begin() + axis);
    out.insert(out.end(), indices.shape().begin(), indices.shape().end());
    out.insert(out.end(), x.shape().begin() + axis + 1, x.shape().end());
    const int64_t outer = dims_product(x.shape(), 0, axis);
    const int64_t inner = dims_product(x.shape(), axis + 1, x.rank());
    const int64_t count = static_cast<int64_t>(idx.size());
    return {on_bytes(x, [&](const Tensor& bx) {
      return dispatch_storage(bx.dtype(), [&]<typename S>() {
        Tensor y = uninitialized_tensor(bx.dtype(), out);
        const S* src = static_cast<const S*>(bx.raw_data());
        S* dst = static_cast<S*>(y.raw_data());
        parallel_for(outer * count, grain_for(inner), [&](int64_t b, int64_t e) {
          for (int64_t k = b; k < e; ++k) {
            const S* from = src + ((k / count) * dim + idx[k % count]) * inner;
            std::copy(from, from + inner, dst + k * inner);
          }
        });
        return y;
      });
    })};
  }

 private:
  int64_t axis_;
};
// Versions 1, 11 (negative indices), 13.
PARITY_REF_OP("", "Gather", 1, kOpsetMax, Gather);

// For GatherElements and the Scatter family: the data offset that each element of `indices`
// names, i.e. its own position with the coordinate on `axis` replaced by the index value.
std::vector<int64_t> element_offsets(const Shape& data, const Tensor& indices, int64_t axis,
                                     std::string_view what) {
  if (indices.rank() != static_cast<int64_t>(data.size()))
    fail("failed to use {} of shape {} with data of shape {}: both must have the same rank", what,
         shape_str(indices.shape()), shape_str(data));
  for (size_t d = 0; d < data.size(); ++d)
    if (static_cast<int64_t>(d) != axis && indices.shape()[d] > data[d])
      fail("failed to use {} of shape {} with data of shape {}: dim {} is larger than the data's",
           what, shape_str(indices.shape()), shape_str(data), d);
  const std::vector<int64_t> idx = read_indices(indices, what);
  const Shape strides = strides_of(data);
  const Shape& ishape = indices.shape();
  std::vector<int64_t> offsets(idx.size());
  std::vector<int64_t> pos(ishape.size(), 0);
  for (size_t i = 0; i < idx.size(); ++i) {
    int64_t off = 0;
    for (size_t d = 0; d < ishape.size(); ++d)
      off += (static_cast<int64_t>(d) == axis
                  ? checked_index(idx[i], data[d], static_cast<int64_t>(i), what)
                  : pos[d]) *
             strides[d];
    offsets[i] = off;
    for (size_t d = ishape.size(); d-- > 0;) {  // advance the position odometer
      if (++pos[d] < ishape[d]) break;
      pos[d] = 0;
    }
  }
  return offsets;
}

class GatherElements : public Kernel {
 public:
  explicit GatherElements(const OpContext& ctx) : axis_(ctx.attr_int("axis", 0)) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const Tensor& indices = input_tensor(in, 1, "indices");
    const int64_t axis = normalize_axis(axis_, x.rank());
    const std::vector<int64_t> offsets =
        element_offsets(x.shape(), indices, axis, "input 'indices'");
    return {on_bytes(x, [&](const Tensor& bx) {
      return dispatch_storage(bx.dtype(), [&]<typename S>() {
        Tensor y = uninitialized_tensor(bx.dtype(), indices.shape());
        const S* src = static_cast<const S*>(bx.raw_data());
        S* dst = static_cast<S*>(y.raw_data());
        parallel_for(static_cast<int64_t>(offsets.size()), kElementwiseGrain,
                     [&](int64_t b, int64_t e) {
                       for (int64_t i = b; i < e; ++i) dst[i] = src[offsets[i]];
                     });
        return y;
      });
    })};
  }

 private:
  int64_t axis_;
};
// Versions 11, 13.
PARITY_REF_OP("", "GatherElements", 11, kOpsetMax, GatherElements);

// GatherND / ScatterND geometry: indices [..., k] name slices of data[b + k:] within the
// batch given by the first b dims.
struct NdIndexing {
  int64_t tuples = 0;            // index tuples (indices.numel() / k)
  int64_t slice = 1;             // elements per slice
  std::vector<int64_t> offsets;  // data offset of each tuple's slice
};

NdIndexing nd_indexing(const Shape& data, const Tensor& indices, int64_t batch_dims,
                       std::string_view what) {
  const int64_t r = static_cast<int64_t>(data.size()), q = indices.rank();
  if (q < 1) fail("failed to use {}: it is a scalar; it needs rank 1 or more", what);
  const int64_t k = indices.shape()[q - 1];
  if (batch_dims < 0 || batch_dims >= std::min(r, q))
    fail(
        "failed to use batch_dims {}: it must be in [0, {}) for data of rank {} and indices "
        "of rank {}",
        batch_dims, std::min(r, q), r, q);
  if (k < 1 || batch_dims + k > r)
    fail("failed to use {} of shape {}: its last dim {} must be in [1, {}] for data of shape {}",
         what, shape_str(indices.shape()), k, r - batch_dims, shape_str(data));
  for (int64_t d = 0; d < batch_dims; ++d)
    if (indices.shape()[d] != data[d])
      fail("failed to use {} of shape {}: batch dim {} differs from the data's shape {}", what,
           shape_str(indices.shape()), d, shape_str(data));
  const std::vector<int64_t> idx = read_indices(indices, what);
  const Shape strides = strides_of(data);
  NdIndexing g;
  g.tuples = static_cast<int64_t>(idx.size()) / k;
  g.slice = dims_product(data, batch_dims + k, r);
  const int64_t per_batch = g.tuples / std::max<int64_t>(dims_product(data, 0, batch_dims), 1);
  const int64_t batch_stride = dims_product(data, batch_dims, r);
  g.offsets.resize(static_cast<size_t>(g.tuples));
  for (int64_t t = 0; t < g.tuples; ++t) {
    int64_t off = per_batch > 0 ? (t / per_batch) * batch_stride : 0;
    for (int64_t j = 0; j < k; ++j)
      off += checked_index(idx[t * k + j], data[batch_dims + j], t * k + j, what) *
             strides[batch_dims + j];
    g.offsets[t] = off;
  }
  return g;
}

class GatherND : public Kernel {
 public:
  explicit GatherND(const OpContext& ctx) : batch_dims_(ctx.attr_int("batch_dims", 0)) {}

  Outputs run(const Inputs& in, RunContext&) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const Tensor& indices = input_tensor(in, 1, "indices");
    const NdIndexing g = nd_indexing(x.shape(), indices, batch_dims_, "input 'indices'");
    const int64_t k = indices.shape().back();
    Shape out(indices.shape().begin(), indices.shape().end() - 1);
    out.insert(out.end(), x.shape().begin() + batch_dims_ + k, x.shape().end());
    return {on_bytes(x, [&](const Tensor& bx) {
      return dispatch_storage(bx.dtype(), [&]<typename S>() {
        Tensor y = uninitialized_tensor(bx.dtype(), out);
        const S* src = static_cast<const S*>(bx.raw_data());
        S* dst = static_cast<S*>(y.raw_data());
        parallel_for(g.tuples, grain_for(g.slice), [&](int64_t b, int64_t e) {
          for (int64_t t = b; t < e; ++t)
            std::copy(src + g.offsets[t], src + g.offsets[t] + g.slice, dst + t * g.slice);
        });
        return y;
      });
    })};
  }

 private:
  int64_t batch_dims_;
};
// Versions 11, 12 (batch_dims), 13.
PARITY_REF_OP("", "GatherND", 11, kOpsetMax, GatherND);

// ---------------------------------------------------------------------------------------------
// Scatters

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

ScatterReduction read_reduction(const OpContext& ctx) {
  const std::string r = ctx.opset() >= 16 ? ctx.attr_string("reduction", "none") : "none";
  if (r == "none") return ScatterReduction::kNone;
  if (r == "add") return ScatterReduction::kAdd;
  if (r == "mul") return ScatterReduction::kMul;
  if (r == "max" && ctx.opset() >= 18) return ScatterReduction::kMax;
  if (r == "min" && ctx.opset() >= 18) return ScatterReduction::kMin;
  ctx.fail("attribute 'reduction' is '{}'; valid reductions: none, add, mul{}", r,
           ctx.opset() >= 18 ? ", max, min" : "");
}

// Copies data, then for each i writes updates[i * slice, +slice) to the copy at offsets[i]
// (combining with `reduction`), in the order of the indices: with repeated indices the
// result depends on that order, so this runs on one thread.
Tensor scatter(const Tensor& data, const Tensor& updates, const std::vector<int64_t>& offsets,
               int64_t slice, ScatterReduction reduction) {
  if (updates.dtype() != data.dtype())
    fail(
        "failed to scatter input 'updates' of type {} into data of type {}: the types must be "
        "equal",
        dtype_name(updates.dtype()), dtype_name(data.dtype()));
  if (reduction == ScatterReduction::kNone) {
    return on_bytes(data, [&](const Tensor& bd) {
      const Tensor bu = is_4bit(updates.dtype()) ? unpack_4bit(updates) : updates;
      return dispatch_storage(bd.dtype(), [&]<typename S>() {
        Tensor y = bd.clone();
        S* dst = static_cast<S*>(y.raw_data());
        const S* src = static_cast<const S*>(bu.raw_data());
        for (size_t i = 0; i < offsets.size(); ++i)
          std::copy(src + i * slice, src + (i + 1) * slice, dst + offsets[i]);
        return y;
      });
    });
  }
  return dispatch<NumericTypes>(
      data.dtype(),
      [&]<typename T>() {
        Tensor y = data.clone();
        T* dst = y.data<T>();
        const T* src = updates.data<T>();
        for (size_t i = 0; i < offsets.size(); ++i) {
          for (int64_t j = 0; j < slice; ++j) {
            T& o = dst[offsets[i] + j];
            const auto a = widen(o), b = widen(src[i * slice + j]);
            if constexpr (is_float_like_v<T>) {
              // max and min propagate NaN, as numpy.maximum / numpy.minimum do.
              if (std::isnan(a) || std::isnan(b)) {
                if (reduction == ScatterReduction::kMax || reduction == ScatterReduction::kMin) {
                  o = narrow<T>(std::numeric_limits<double>::quiet_NaN());
                  continue;
                }
              }
            }
            switch (reduction) {
              case ScatterReduction::kAdd:
                o = narrow<T>(a + b);
                break;
              case ScatterReduction::kMul:
                o = narrow<T>(a * b);
                break;
              case ScatterReduction::kMax:
                o = narrow<T>(b > a ? b : a);
                break;
              case ScatterReduction::kMin:
                o = narrow<T>(b < a ? b : a);
                break;
              case ScatterReduction::kNone:
                break;
            }
          }
        }
        return y;
      },
      "input 'data'");
}

class ScatterElements : public Kernel {
 public:
  explicit ScatterElements(const OpContext& ctx)
      : axis_(ctx.attr_int("axis", 0)), reduction_(read_reduction(ctx)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const Tensor& indices = input_tensor(in, 1, "indices");
    const Tensor& updates = input_tensor(in, 2, "updates");
    if (updates.shape() != indices.shape())
      ctx.fail("input 'updates' has shape {} and input 'indices' {}; they must be equal",
               shape_str(updates.shape()), shape_str(indices.shape()));
    const int64_t axis = normalize_axis(axis_, x.rank());
    return {scatter(x, updates, element_offsets(x.shape(), indices, axis, "input 'indices'"), 1,
                    reduction_)};
  }

 private:
  int64_t axis_;
  ScatterReduction reduction_;
};
// Scatter: versions 9, 11 (negative indices; deprecated there in favour of ScatterElements).
PARITY_REF_OP("", "Scatter", 9, kOpsetMax, ScatterElements);
// Versions 11, 13, 16 (reduction add, mul), 18 (max, min).
PARITY_REF_OP("", "ScatterElements", 11, kOpsetMax, ScatterElements);

class ScatterND : public Kernel {
 public:
  explicit ScatterND(const OpContext& ctx) : reduction_(read_reduction(ctx)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "data");
    const Tensor& indices = input_tensor(in, 1, "indices");
    const Tensor& updates = input_tensor(in, 2, "updates");
    const NdIndexing g = nd_indexing(x.shape(), indices, 0, "input 'indices'");
    // updates has the shape indices.shape[:-1] + data.shape[k:].
    Shape expected(indices.shape().begin(), indices.shape().end() - 1);
    expected.insert(expected.end(), x.shape().begin() + indices.shape().back(), x.shape().end());
    if (updates.shape() != expected)
      ctx.fail(
          "input 'updates' has shape {}; with indices of shape {} and data of shape {} it "
          "must be {}",
          shape_str(updates.shape()), shape_str(indices.shape()), shape_str(x.shape()),
          shape_str(expected));
    return {scatter(x, updates, g.offsets, g.slice, reduction_)};
  }

 private:
  ScatterReduction reduction_;
};
// Versions 11, 13, 16 (reduction add, mul), 18 (max, min).
PARITY_REF_OP("", "ScatterND", 11, kOpsetMax, ScatterND);

}  // namespace
}  // namespace parity::ref
