// The differences of two outputs as Polygraphy defines them (DiffRules), read a block at a time
// from tensors of any numeric type (ElementReader), and both outputs with their differences as
// streams for the fused statistics (PairStreams), never materialised.
#pragma once

#include <cstdint>
#include <vector>

#include "core/tensor.h"
#include "stats/array_stats.h"
#include "stats/fused_stats.h"

namespace parity {

// Polygraphy's absolute and relative differences (CompareFunc.simple), the one statement of its
// rules for every compare path: after cast_up, absdiff = |out0 - out1| in the promoted kind (xor
// for two bools; 0 for equal infinities when infinities compare equal), reldiff = absdiff /
// |out1| in the kind promoted once more (float64 for ints and bools), with NumPy's float64
// epsilon (in out1's precision) standing in for exact zeros of a floating reference.
struct DiffRules {
  DiffRules(DataType dtype0, DataType dtype1, bool infinities_equal);

  NumKind kind0, kind1, abs_kind, rel_kind;
  bool both_bool, ref_floating, abs_f32, rel_f32, infinities_equal;
  double epsilon;  // what an exact zero of out1 becomes
  // Both float32 after cast_up (float32, float16, bfloat16, float8): differences computed in
  // float32 directly (float32 division and subtraction round correctly, so this equals the
  // double computation rounded to float32).
  bool float_pair = false;

  // One element (for the first element's shift and small arrays).
  void diff(double x, double y, double& abs, double& rel) const;
  // A block of elements read as double; float32 kinds are rounded to float32 in place.
  void diff_block(const double* x, const double* y, int64_t n, double* abs, double* rel) const;
  // float32 against float32, read in place.
  void diff_block(const float* x, const float* y, int64_t n, double* abs, double* rel) const;
  void diff_block(const float* x, const float* y, int64_t n, float* abs, float* rel) const;
};

// Reads elements of any numeric type as double, a block at a time. int4/uint4 (packed) are
// converted whole once; every other type is read in place.
class ElementReader {
 public:
  explicit ElementReader(const Tensor& t);
  void read(int64_t begin, int64_t n, double* out) const;
  // Floating types that cast up to float32 only: the elements as float32, in place for float32,
  // else converted into scratch (room for n).
  const float* read_f32(int64_t begin, int64_t n, float* scratch) const;
  // Asks for the memory of elements [begin, begin + n) to be fetched into the caches.
  void prefetch(int64_t begin, int64_t n) const;

 private:
  DataType dtype_;
  const void* data_;
  int64_t size_;
  std::vector<double> converted_;
};

// Both outputs and their differences as streams for compute_fused_stats, never stored: out0,
// out1, absdiff, reldiff (with_outputs) or absdiff, reldiff. Its counts are the elements beyond
// both tolerances (Polygraphy's elemwise check) and, with the outputs, out1's exact zeros.
class PairStreams : public StreamSource {
 public:
  PairStreams(const Tensor& out0, const Tensor& out1, const DiffRules& rules, bool with_outputs,
              double atol = 0, double rtol = 0);
  int64_t size() const override { return size_; }
  int streams() const override { return with_outputs_ ? 4 : 2; }
  NumKind kind(int stream) const override;
  void read(int64_t begin, int64_t n, StreamBlock& block) const override;
  void count(const StreamBlock& block, int64_t n, int64_t* counts) const override;
  void prefetch(int64_t begin, int64_t n) const override;
  bool nonnegative(int stream) const override { return stream >= abs_stream(); }
  // Stream indices.
  int abs_stream() const { return with_outputs_ ? 2 : 0; }
  int rel_stream() const { return abs_stream() + 1; }

 private:
  const DiffRules& rules_;
  ElementReader r0_, r1_;
  int64_t size_;
  bool with_outputs_;
  double abs_tol_, rel_tol_;  // in the differences' precision, as NumPy compares them
};

}  // namespace parity
