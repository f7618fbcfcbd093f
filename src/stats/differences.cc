// Polygraphy's absolute and relative differences (DiffRules) and the block reader of elements
// of any numeric type, shared by CompareFunc.simple and the layer-wise fused pass.
#include <algorithm>
#include <bit>
#include <cmath>
#include <type_traits>

#include "core/error.h"
#include "core/float_types.h"
#include "core/mx_types.h"
#include "core/numeric.h"
#include "stats/differences.h"

namespace parity {

namespace {

// NumPy's machine epsilon for float64, which Polygraphy adds to exact zeros of the reference.
constexpr double kZeroEpsilon = 2.220446049250313e-16;

// Simple loops, one concern each, that the compiler vectorises (AVX2 where the CPU has it: the
// division dominates). Inputs are widened to V (exactly); A and R are the stored types.
template <typename T, typename V>
__attribute__((always_inline)) inline void diff_body(const DiffRules& k, const T* x, const T* y,
                                                     int64_t n, V* abs, V* rel) {
  auto d = [](T v) { return static_cast<V>(v); };
  if (k.both_bool) {
    for (int64_t i = 0; i < n; ++i) abs[i] = static_cast<V>((x[i] != 0) != (y[i] != 0));
  } else {
    for (int64_t i = 0; i < n; ++i) abs[i] = std::fabs(d(x[i]) - d(y[i]));
    if (k.abs_f32 && !std::is_same_v<V, float>)
      for (int64_t i = 0; i < n; ++i) abs[i] = static_cast<V>(static_cast<float>(abs[i]));
  }
  if (k.infinities_equal)
    for (int64_t i = 0; i < n; ++i)
      if (std::isinf(d(x[i])) && x[i] == y[i]) abs[i] = 0;
  if (k.ref_floating) {
    const V eps = static_cast<V>(k.epsilon);
    for (int64_t i = 0; i < n; ++i) rel[i] = y[i] == 0 ? eps : std::fabs(d(y[i]));
    for (int64_t i = 0; i < n; ++i) rel[i] = abs[i] / rel[i];
  } else {
    for (int64_t i = 0; i < n; ++i) rel[i] = abs[i] / std::fabs(d(y[i]));
  }
  if (k.rel_f32 && !std::is_same_v<V, float>)
    for (int64_t i = 0; i < n; ++i) rel[i] = static_cast<V>(static_cast<float>(rel[i]));
}

__attribute__((target_clones("avx2", "default"))) void diff_f64(const DiffRules& k, const double* x,
                                                                const double* y, int64_t n,
                                                                double* abs, double* rel) {
  diff_body(k, x, y, n, abs, rel);
}

__attribute__((target_clones("avx2", "default"))) void diff_f32_to_f64(const DiffRules& k,
                                                                       const float* x,
                                                                       const float* y, int64_t n,
                                                                       double* abs, double* rel) {
  diff_body(k, x, y, n, abs, rel);
}

// float32 against float32, the common case: diff_body's rules in one loop, which also counts
// the elements beyond both tolerances ("not a <= tol" is "a > tol or a is NaN") and the exact
// zeros of the reference (memory-bound: the counts come free).
template <bool kInfinitiesEqual>
__attribute__((always_inline)) inline void diff_pair_body(const float* x, const float* y, int64_t n,
                                                          float eps, float abs_tol, float rel_tol,
                                                          float* abs, float* rel,
                                                          int64_t* counted) {
  int32_t beyond = 0, zeros = 0;
  for (int64_t i = 0; i < n; ++i) {
    float a = std::fabs(x[i] - y[i]);
    if (kInfinitiesEqual) a = std::isinf(x[i]) && x[i] == y[i] ? 0.0f : a;
    const float r = a / (y[i] == 0 ? eps : std::fabs(y[i]));
    abs[i] = a;
    rel[i] = r;
    beyond += static_cast<int32_t>(!(a <= abs_tol) & !(r <= rel_tol));
    zeros += static_cast<int32_t>(y[i] == 0);
  }
  counted[0] = beyond;
  counted[1] = zeros;
}

__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void diff_count_f32(
    const DiffRules& k, const float* x, const float* y, int64_t n, float abs_tol, float rel_tol,
    float* abs, float* rel, int64_t* counted) {
  const float eps = static_cast<float>(k.epsilon);
  if (k.infinities_equal)
    diff_pair_body<true>(x, y, n, eps, abs_tol, rel_tol, abs, rel, counted);
  else
    diff_pair_body<false>(x, y, n, eps, abs_tol, rel_tol, abs, rel, counted);
}

// The general path's counts: elements beyond both tolerances and the reference's exact zeros.
__attribute__((target_clones("arch=x86-64-v4", "avx2", "default"))) void count_f64(
    const double* abs, const double* rel, const double* ref, int64_t n, double abs_tol,
    double rel_tol, int64_t* counted) {
  int64_t beyond = 0, zeros = 0;
  for (int64_t i = 0; i < n; ++i) {
    beyond += !(abs[i] <= abs_tol) & !(rel[i] <= rel_tol);
    zeros += ref[i] == 0;
  }
  counted[0] = beyond;
  counted[1] = zeros;
}

template <typename T>
void widen(const void* data, int64_t begin, int64_t n, double* out) {
  const T* p = static_cast<const T*>(data) + begin;
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (std::is_arithmetic_v<T>)
      out[i] = static_cast<double>(p[i]);
    else
      out[i] = static_cast<double>(p[i].to_float());
  }
}

}  // namespace

DiffRules::DiffRules(DataType dtype0, DataType dtype1, bool inf_equal)
    : kind0(num_kind_after_cast_up(dtype0)), kind1(num_kind_after_cast_up(dtype1)) {
  both_bool = kind0 == NumKind::kBool && kind1 == NumKind::kBool;
  abs_kind = both_bool ? NumKind::kBool : promote(kind0, kind1);
  rel_kind = promote(abs_kind, kind1);
  if (rel_kind == NumKind::kBool || rel_kind == NumKind::kInt) rel_kind = NumKind::kFloat64;
  ref_floating = kind1 == NumKind::kFloat32 || kind1 == NumKind::kFloat64;
  abs_f32 = abs_kind == NumKind::kFloat32;
  rel_f32 = rel_kind == NumKind::kFloat32;
  epsilon = round_to_kind(kZeroEpsilon, kind1);
  infinities_equal = inf_equal;
  float_pair = kind0 == NumKind::kFloat32 && kind1 == NumKind::kFloat32;
}

void DiffRules::diff(double x, double y, double& abs, double& rel) const {
  diff_block(&x, &y, 1, &abs, &rel);
}

void DiffRules::diff_block(const double* x, const double* y, int64_t n, double* abs,
                           double* rel) const {
  diff_f64(*this, x, y, n, abs, rel);
}

void DiffRules::diff_block(const float* x, const float* y, int64_t n, double* abs,
                           double* rel) const {
  diff_f32_to_f64(*this, x, y, n, abs, rel);
}

void DiffRules::diff_block(const float* x, const float* y, int64_t n, float* abs,
                           float* rel) const {
  int64_t counted[2];
  diff_count_f32(*this, x, y, n, 0, 0, abs, rel, counted);
}

ElementReader::ElementReader(const Tensor& t)
    : dtype_(t.dtype()), data_(t.raw_data()), size_(t.numel()) {
  if (dtype_ == DataType::kInt4 || dtype_ == DataType::kUInt4) {
    converted_ = tensor_to_doubles(t);
    data_ = converted_.data();
    dtype_ = DataType::kFloat64;
  }
}

void ElementReader::read(int64_t begin, int64_t n, double* out) const {
  if (dtype_ == kDtypeFloat8E8M0) return widen<float8e8m0>(data_, begin, n, out);
  if (dtype_ == kDtypeFloat4E2M1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = float4e2m1_get(static_cast<const uint8_t*>(data_), static_cast<size_t>(begin + i));
    return;
  }
  switch (dtype_) {
    case DataType::kFloat32:
      widen<float>(data_, begin, n, out);
      break;
    case DataType::kFloat64:
      widen<double>(data_, begin, n, out);
      break;
    case DataType::kFloat16:
      widen<float16>(data_, begin, n, out);
      break;
    case DataType::kBFloat16:
      widen<bfloat16>(data_, begin, n, out);
      break;
    case DataType::kFloat8E4M3FN:
      widen<float8e4m3fn>(data_, begin, n, out);
      break;
    case DataType::kFloat8E4M3FNUZ:
      widen<float8e4m3fnuz>(data_, begin, n, out);
      break;
    case DataType::kFloat8E5M2:
      widen<float8e5m2>(data_, begin, n, out);
      break;
    case DataType::kFloat8E5M2FNUZ:
      widen<float8e5m2fnuz>(data_, begin, n, out);
      break;
    case DataType::kInt8:
      widen<int8_t>(data_, begin, n, out);
      break;
    case DataType::kInt16:
      widen<int16_t>(data_, begin, n, out);
      break;
    case DataType::kInt32:
      widen<int32_t>(data_, begin, n, out);
      break;
    case DataType::kInt64:
      widen<int64_t>(data_, begin, n, out);
      break;
    case DataType::kUInt8:
      widen<uint8_t>(data_, begin, n, out);
      break;
    case DataType::kUInt16:
      widen<uint16_t>(data_, begin, n, out);
      break;
    case DataType::kUInt32:
      widen<uint32_t>(data_, begin, n, out);
      break;
    case DataType::kUInt64:
      widen<uint64_t>(data_, begin, n, out);
      break;
    case DataType::kBool:
      widen<bool>(data_, begin, n, out);
      break;
    default:
      break;  // callers check dtype_is_numeric first
  }
}

const float* ElementReader::read_f32(int64_t begin, int64_t n, float* scratch) const {
  const auto narrow = [&](auto type) {
    using T = decltype(type);
    const T* p = static_cast<const T*>(data_) + begin;
    for (int64_t i = 0; i < n; ++i) scratch[i] = p[i].to_float();
    return scratch;
  };
  if (dtype_ == kDtypeFloat8E8M0) return narrow(float8e8m0{});
  if (dtype_ == kDtypeFloat4E2M1) {
    for (int64_t i = 0; i < n; ++i)
      scratch[i] =
          float4e2m1_get(static_cast<const uint8_t*>(data_), static_cast<size_t>(begin + i));
    return scratch;
  }
  switch (dtype_) {
    case DataType::kFloat32:
      return static_cast<const float*>(data_) + begin;
    case DataType::kFloat16:
      float16_to_float(static_cast<const float16*>(data_) + begin, n, scratch);
      return scratch;
    case DataType::kBFloat16: {  // the top half of a float32
      const bfloat16* p = static_cast<const bfloat16*>(data_) + begin;
      for (int64_t i = 0; i < n; ++i)
        scratch[i] = std::bit_cast<float>(static_cast<uint32_t>(p[i].bits) << 16);
      return scratch;
    }
    case DataType::kFloat8E4M3FN:
      return narrow(float8e4m3fn{});
    case DataType::kFloat8E4M3FNUZ:
      return narrow(float8e4m3fnuz{});
    case DataType::kFloat8E5M2:
      return narrow(float8e5m2{});
    case DataType::kFloat8E5M2FNUZ:
      return narrow(float8e5m2fnuz{});
    default:
      break;
  }
  fail(
      "ElementReader::read_f32 on {} elements: only types that cast up to float32 read as "
      "float32",
      dtype_name(dtype_));
}

void ElementReader::prefetch(int64_t begin, int64_t n) const {
  // int4/uint4 were converted to doubles (dtype_ says float64 then).
  const auto bytes = static_cast<int64_t>(dtype_bits(dtype_) / 8);
  if (bytes <= 0) return;
  n = std::min(n, size_ - begin);
  const char* p = static_cast<const char*>(data_) + begin * bytes;
  for (int64_t at = 0; at < n * bytes; at += 64) __builtin_prefetch(p + at);
}

PairStreams::PairStreams(const Tensor& out0, const Tensor& out1, const DiffRules& rules,
                         bool with_outputs, double atol, double rtol)
    : rules_(rules),
      r0_(out0),
      r1_(out1),
      size_(out0.numel()),
      with_outputs_(with_outputs),
      abs_tol_(round_to_kind(atol, rules.abs_kind)),
      rel_tol_(round_to_kind(rtol, rules.rel_kind)) {}

NumKind PairStreams::kind(int stream) const {
  const int diff = stream - (with_outputs_ ? 2 : 0);
  if (diff == 0) return rules_.abs_kind;
  if (diff == 1) return rules_.rel_kind;
  return stream == 0 ? rules_.kind0 : rules_.kind1;
}

void PairStreams::read(int64_t begin, int64_t n, StreamBlock& b) const {
  const int a = abs_stream(), r = rel_stream();
  if (rules_.float_pair) {
    const float* x = r0_.read_f32(begin, n, b.fx);
    const float* y = r1_.read_f32(begin, n, b.fy);
    if (with_outputs_) b.f[0] = x, b.f[1] = y;
    diff_count_f32(rules_, x, y, n, static_cast<float>(abs_tol_), static_cast<float>(rel_tol_),
                   b.fbuf[a], b.fbuf[r], b.counted);
    b.f[a] = b.fbuf[a];
    b.f[r] = b.fbuf[r];
    return;
  }
  r0_.read(begin, n, b.x);
  r1_.read(begin, n, b.y);
  rules_.diff_block(b.x, b.y, n, b.dbuf[a], b.dbuf[r]);
  count_f64(b.dbuf[a], b.dbuf[r], b.y, n, abs_tol_, rel_tol_, b.counted);
  // Streams of float32 kinds are read as float (their values are exact in float32).
  auto place = [&](int s, const double* v) {
    if (kind(s) != NumKind::kFloat32) {
      b.d[s] = v;
      return;
    }
    for (int64_t i = 0; i < n; ++i) b.fbuf[s][i] = static_cast<float>(v[i]);
    b.f[s] = b.fbuf[s];
  };
  if (with_outputs_) place(0, b.x), place(1, b.y);
  place(a, b.dbuf[a]);
  place(r, b.dbuf[r]);
}

void PairStreams::prefetch(int64_t begin, int64_t n) const {
  r0_.prefetch(begin, n);
  r1_.prefetch(begin, n);
}

void PairStreams::count(const StreamBlock& b, int64_t n, int64_t* counts) const {
  // Counted by read: beyond both tolerances (compared in the differences' precision) and, with
  // the outputs of a floating reference, its exact zeros.
  counts[0] += b.counted[0];
  if (with_outputs_ && rules_.ref_floating) counts[1] += b.counted[1];
}

}  // namespace parity
