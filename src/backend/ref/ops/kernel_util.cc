#include "backend/ref/ops/kernel_util.h"
#include "core/checked_math.h"
#include "core/limits.h"

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

namespace parity::ref {

void fail_unsupported_type(DataType dtype, std::string_view what,
                           const std::vector<DataType>& supported) {
  std::vector<std::string_view> names;
  for (DataType t : supported) names.push_back(dtype_name(t));
  if (supported.empty())
    fail("element type {} of {} is not supported; only types of a whole number of bytes are",
         dtype_name(dtype), what);
  fail("element type {} of {} is not supported; supported types: [{}]", dtype_name(dtype), what,
       fmt::join(names, ", "));
}

const Tensor& input_tensor(const Inputs& inputs, size_t i, std::string_view name) {
  if (i >= inputs.size() || inputs[i].is_none())
    fail("input '{}' (#{}) is required but absent", name, i);
  if (!inputs[i].is_tensor()) fail("input '{}' (#{}) must be a tensor, not a sequence", name, i);
  return inputs[i].tensor;
}

const Tensor* optional_input(const Inputs& inputs, size_t i, std::string_view name) {
  if (i >= inputs.size() || inputs[i].is_none()) return nullptr;
  if (!inputs[i].is_tensor()) fail("input '{}' (#{}) must be a tensor, not a sequence", name, i);
  return &inputs[i].tensor;
}

std::vector<int64_t> read_int64s(const Tensor& t, std::string_view what) {
  return dispatch<IntTypes>(
      t.dtype(),
      [&]<typename T>() {
        const T* p = t.data<T>();
        std::vector<int64_t> v(static_cast<size_t>(t.numel()));
        for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
        return v;
      },
      what);
}

double read_scalar(const Tensor& t, std::string_view what) {
  if (t.numel() != 1)
    fail("failed to read {} with shape {}: it must hold exactly one value", what,
         shape_str(t.shape()));
  return dispatch<Concat<NumericTypes, TypeList<bool>>>(
      t.dtype(), [&]<typename T>() { return static_cast<double>(to_double(t.data<T>()[0])); },
      what);
}

namespace {

// Large buffers come from the kernel as fresh pages, and touching them the first time costs
// more than most kernels' own work (a page fault per 4 KiB). Buffers freed by earlier values
// are therefore kept, up to a bound, and handed out again for the same size: a model run
// repeatedly reuses the same memory.
class BufferCache {
 public:
  static BufferCache& get() {
    static BufferCache* cache = new BufferCache();  // never destroyed: tensors may outlive main
    return *cache;
  }

  void* take(size_t bytes) {
    if (bytes >= kMinBytes) {
      std::lock_guard lock(mutex_);
      auto it = free_.find(bytes);
      if (it != free_.end()) {
        void* p = it->second;
        free_.erase(it);
        cached_bytes_ -= bytes;
        return p;
      }
    }
    void* p = std::aligned_alloc(kAlignment, bytes);
    if (!p) throw std::bad_alloc();
    return p;
  }

  void give_back(void* p, size_t bytes) {
    if (bytes >= kMinBytes) {
      std::lock_guard lock(mutex_);
      if (cached_bytes_ + bytes <= kMaxCachedBytes) {
        free_.emplace(bytes, p);
        cached_bytes_ += bytes;
        return;
      }
    }
    std::free(p);
  }

  static constexpr size_t kAlignment = 64;

 private:
  static constexpr size_t kMinBytes = size_t{1} << 20;
  static constexpr size_t kMaxCachedBytes = size_t{256} << 20;
  std::mutex mutex_;
  std::multimap<size_t, void*> free_;
  size_t cached_bytes_ = 0;
};

}  // namespace

Tensor uninitialized_tensor(DataType dtype, Shape shape) {
  if (dtype == DataType::kString) return Tensor(dtype, std::move(shape));
  constexpr size_t kAlignment = BufferCache::kAlignment;
  size_t bytes = check_tensor_allocation(dtype, shape);
  size_t rounded = std::max<size_t>(kAlignment, (bytes + kAlignment - 1) / kAlignment * kAlignment);
  void* p = BufferCache::get().take(rounded);
  std::shared_ptr<const void> owner(
      p, [rounded](const void* q) { BufferCache::get().give_back(const_cast<void*>(q), rounded); });
  return Tensor::borrow(dtype, std::move(shape), p, std::move(owner));
}

Shape strides_of(const Shape& shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = checked_mul(strides[d], shape[d], "the strides of a tensor");
  return strides;
}

int64_t dims_product(const Shape& shape, int64_t begin, int64_t end) {
  return checked_dims_product(shape, static_cast<size_t>(begin), static_cast<size_t>(end),
                              "a block of dims");
}

int64_t normalize_axis(int64_t axis, int64_t rank, std::string_view what) {
  if (axis < -rank || axis >= rank)
    fail("{} {} is out of range for a tensor of rank {}; it must be in [{}, {}]", what, axis, rank,
         -rank, rank - 1);
  return axis < 0 ? axis + rank : axis;
}

std::vector<int64_t> normalize_axes(const std::vector<int64_t>& axes, int64_t rank,
                                    std::string_view what) {
  std::vector<int64_t> result;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t a : axes) {
    int64_t n = normalize_axis(a, rank, what);
    if (seen[n])
      fail("{} [{}] repeat axis {}; each axis may appear once", what, fmt::join(axes, ", "), n);
    seen[n] = true;
    result.push_back(n);
  }
  return result;
}

void check_rank(const Tensor& t, int64_t lo, int64_t hi, std::string_view what) {
  if (t.rank() < lo || t.rank() > hi) {
    if (lo == hi) fail("{} has shape {}; its rank must be {}", what, shape_str(t.shape()), lo);
    fail("{} has shape {}; its rank must be in [{}, {}]", what, shape_str(t.shape()), lo, hi);
  }
}

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t rank = 0;
  for (const auto& s : shapes) rank = std::max(rank, s.size());
  Shape out(rank, 1);
  for (const auto& s : shapes) {
    size_t offset = rank - s.size();
    for (size_t d = 0; d < s.size(); ++d) {
      int64_t& o = out[offset + d];
      if (s[d] == o || s[d] == 1) continue;
      if (o == 1) {
        o = s[d];
        continue;
      }
      std::vector<std::string> names;
      for (const auto& t : shapes) names.push_back(shape_str(t));
      fail(
          "failed to broadcast shapes {}: dimension {} (from the end) is {} in one and {} in "
          "another; sizes must be equal or 1",
          fmt::join(names, " and "), s.size() - d, o, s[d]);
    }
  }
  return out;
}

Broadcast::Broadcast(const Shape& out, const std::vector<Shape>& inputs) {
  const size_t rank = out.size(), n = inputs.size();
  numel_ = shape_numel(out);
  // Merge adjacent output dims whose broadcast pattern (which inputs repeat) is the same.
  std::vector<int64_t> sizes;
  std::vector<std::vector<bool>> repeats;
  for (size_t d = 0; d < rank; ++d) {
    if (out[d] == 1) continue;
    std::vector<bool> rep(n);
    for (size_t k = 0; k < n; ++k) {
      const Shape& s = inputs[k];
      int64_t dim = d + s.size() >= rank ? s[d + s.size() - rank] : 1;
      PARITY_ENFORCE(dim == out[d] || dim == 1, "shape {} does not broadcast to {}", shape_str(s),
                     shape_str(out));
      rep[k] = dim == 1;
    }
    if (!repeats.empty() && repeats.back() == rep) {
      sizes.back() *= out[d];
    } else {
      sizes.push_back(out[d]);
      repeats.push_back(rep);
    }
  }
  std::vector<std::vector<int64_t>> strides(n, std::vector<int64_t>(sizes.size(), 0));
  for (size_t k = 0; k < n; ++k) {
    int64_t acc = 1;
    for (size_t g = sizes.size(); g-- > 0;) {
      if (!repeats[g][k]) {
        strides[k][g] = acc;
        acc *= sizes[g];
      }
    }
  }
  steps_.assign(n, 0);
  strides_.assign(n, {});
  if (sizes.empty()) return;
  inner_ = std::max<int64_t>(sizes.back(), 1);
  outer_.assign(sizes.begin(), sizes.end() - 1);
  for (size_t k = 0; k < n; ++k) {
    steps_[k] = strides[k].back();
    strides_[k].assign(strides[k].begin(), strides[k].end() - 1);
  }
}

void Broadcast::row_offsets(int64_t row, int64_t* offsets) const {
  for (size_t k = 0; k < steps_.size(); ++k) offsets[k] = 0;
  for (size_t g = outer_.size(); g-- > 0;) {
    int64_t idx = row % outer_[g];
    row /= outer_[g];
    for (size_t k = 0; k < steps_.size(); ++k) offsets[k] += idx * strides_[k][g];
  }
}

Reduction::Reduction(const Shape& in, std::vector<int64_t> axes, bool keepdims) {
  const size_t rank = in.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int64_t a : axes) reduced[a] = true;
  Shape strides = strides_of(in);
  // Adds a dim to a list, merged into the previous one when they are contiguous.
  auto push = [](std::vector<int64_t>& sizes, std::vector<int64_t>& strs, bool& can_merge,
                 int64_t size, int64_t stride) {
    if (size == 1) return;  // contributes nothing to offsets
    if (can_merge && !sizes.empty() && strs.back() == stride * size) {
      sizes.back() *= size;
      strs.back() = stride;
    } else {
      sizes.push_back(size);
      strs.push_back(stride);
    }
    can_merge = true;
  };
  bool merge_kept = false, merge_red = false;
  for (size_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      if (keepdims) out_shape_.push_back(1);
      count_ *= in[d];
      push(red_sizes_, red_strides_, merge_red, in[d], strides[d]);
      if (in[d] != 1) merge_kept = false;
    } else {
      out_shape_.push_back(in[d]);
      num_outputs_ *= in[d];
      push(kept_sizes_, kept_strides_, merge_kept, in[d], strides[d]);
      if (in[d] != 1) merge_red = false;
    }
  }
}

WindowAttrs read_window_attrs(const OpContext& ctx, bool with_ceil_mode) {
  WindowAttrs w;
  auto read = [&](const char* name, int64_t min) {
    std::vector<int64_t> v = ctx.attr_ints(name, {});
    for (int64_t x : v)
      if (x < min)
        ctx.fail("attribute '{}' is [{}]; every value must be {} or more", name, fmt::join(v, ", "),
                 min);
    return v;
  };
  w.strides = read("strides", 1);
  w.dilations = read("dilations", 1);
  w.pads = read("pads", 0);
  std::string auto_pad = ctx.attr_string("auto_pad", "NOTSET");
  if (auto_pad == "NOTSET")
    w.auto_pad = AutoPad::kNotSet;
  else if (auto_pad == "VALID")
    w.auto_pad = AutoPad::kValid;
  else if (auto_pad == "SAME_UPPER")
    w.auto_pad = AutoPad::kSameUpper;
  else if (auto_pad == "SAME_LOWER")
    w.auto_pad = AutoPad::kSameLower;
  else
    ctx.fail(
        "attribute 'auto_pad' is '{}'; it must be one of NOTSET, VALID, SAME_UPPER, "
        "SAME_LOWER",
        auto_pad);
  if (with_ceil_mode) w.ceil_mode = ctx.attr_int("ceil_mode", 0) != 0;
  return w;
}

WindowGeometry window_geometry(const WindowAttrs& a, const Shape& in_spatial,
                               const std::vector<int64_t>& kernel) {
  const size_t n = in_spatial.size();
  auto values = [&](const std::vector<int64_t>& v, const char* name, size_t count, int64_t dflt) {
    if (v.empty()) return std::vector<int64_t>(count, dflt);
    if (v.size() != count)
      fail("attribute '{}' has {} values; it must have {} for an input with {} spatial dims", name,
           v.size(), count, n);
    return v;
  };
  WindowGeometry g;
  g.in = in_spatial;
  g.kernel = values(kernel, "kernel_shape", n, 1);
  g.strides = values(a.strides, "strides", n, 1);
  g.dilations = values(a.dilations, "dilations", n, 1);
  std::vector<int64_t> pads = values(a.pads, "pads", 2 * n, 0);
  for (int64_t k : g.kernel)
    if (k < 1) fail("kernel shape [{}] has a size below 1", fmt::join(g.kernel, ", "));
  g.out.resize(n);
  g.pad_begin.assign(n, 0);
  g.pad_end.assign(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const int64_t in = in_spatial[i], s = g.strides[i];
    // Attributes are unbounded, so the geometry is computed with checked arithmetic.
    const int64_t extent = checked_mul(g.dilations[i], g.kernel[i] - 1, "the window's extent") + 1;
    if (a.auto_pad == AutoPad::kSameUpper || a.auto_pad == AutoPad::kSameLower) {
      g.out[i] = in == 0 ? 0 : (in - 1) / s + 1;
      int64_t total = std::max<int64_t>(
          0, checked_sub(checked_add(checked_mul(g.out[i] - 1, s, "the padded extent"), extent,
                                     "the padded extent"),
                         in, "the padded extent"));
      int64_t small = total / 2, large = total - small;
      g.pad_begin[i] = a.auto_pad == AutoPad::kSameUpper ? small : large;
      g.pad_end[i] = total - g.pad_begin[i];
      continue;
    }
    if (a.auto_pad == AutoPad::kNotSet) {
      g.pad_begin[i] = pads[i];
      g.pad_end[i] = pads[i + n];
    }
    int64_t span = checked_sub(checked_add(checked_add(in, g.pad_begin[i], "the padded input size"),
                                           g.pad_end[i], "the padded input size"),
                               extent, "the padded input size");
    if (span < 0)
      fail(
          "failed to slide a window of extent {} over spatial dim {} of size {} with pads "
          "[{}, {}]: the padded input must be at least as large as the window",
          extent, i, in, g.pad_begin[i], g.pad_end[i]);
    int64_t out = (a.ceil_mode ? (span == 0 ? 0 : (span - 1) / s + 1) : span / s) + 1;
    if (a.ceil_mode && (out - 1) * s >= in + g.pad_begin[i]) --out;
    g.out[i] = out;
  }
  return g;
}

WindowGeometry window_as_3d(const WindowGeometry& g) {
  const size_t n = g.in.size();
  if (n < 1 || n > 3)
    fail("failed to slide a window over {} spatial dims: 1, 2 or 3 are supported", n);
  return window_lifted(g, 3);
}

WindowGeometry window_lifted(const WindowGeometry& g, size_t dims) {
  const size_t n = g.in.size(), extra = dims > n ? dims - n : 0;
  auto lift = [&](const std::vector<int64_t>& v, int64_t fill) {
    std::vector<int64_t> r(extra, fill);
    r.insert(r.end(), v.begin(), v.end());
    return r;
  };
  return {lift(g.in, 1),        lift(g.out, 1),       lift(g.kernel, 1), lift(g.strides, 1),
          lift(g.dilations, 1), lift(g.pad_begin, 0), lift(g.pad_end, 0)};
}

}  // namespace parity::ref
