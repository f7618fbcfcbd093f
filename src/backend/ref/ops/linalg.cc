// Linear algebra: Einsum (NumPy's einsum, general) and Det.
#include <array>
#include <cctype>
#include <cmath>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

using EinsumTypes = Concat<FloatTypes, IntTypes>;

// An Einsum equation parsed against its inputs' shapes. Every axis gets a label: the letters
// a-z and A-Z, plus one label per broadcast dim the ellipsis stands for. A label repeated within
// one input takes that input's diagonal (its strides add up); labels not in the output are
// summed over.
class EinsumPlan {
 public:
  EinsumPlan(const std::string& equation, const std::vector<Shape>& shapes, RunContext& ctx) {
    std::string eq;
    for (char ch : equation)
      if (!std::isspace(static_cast<unsigned char>(ch))) eq += ch;
    const size_t arrow = eq.find("->");
    const std::string lhs = eq.substr(0, arrow);
    std::vector<std::string> terms(1);
    for (char ch : lhs) {
      if (ch == ',')
        terms.emplace_back();
      else
        terms.back().push_back(ch);
    }
    if (terms.size() != shapes.size())
      ctx.fail(
          "failed to parse equation '{}': it has {} operand terms for {} inputs; there "
          "must be one per input",
          equation, terms.size(), shapes.size());

    // Each term as labels: letters map to 0..51, ellipsis dims to 52.. (right-aligned).
    int ellipsis_rank = 0;
    std::vector<int> ellipsis_dims(shapes.size(), 0);
    std::vector<std::vector<int>> letters(shapes.size());
    for (size_t i = 0; i < terms.size(); ++i) {
      bool has_ellipsis = false;
      parse_term(terms[i], equation, letters[i], has_ellipsis, ctx);
      const int64_t rank = static_cast<int64_t>(shapes[i].size());
      const int64_t named = static_cast<int64_t>(letters[i].size()) - (has_ellipsis ? 1 : 0);
      if (has_ellipsis ? named > rank : named != rank)
        ctx.fail(
            "failed to apply equation '{}' to input {} of shape {}: its term '{}' names {} "
            "dims",
            equation, i, shape_str(shapes[i]), terms[i], named);
      ellipsis_dims[i] = static_cast<int>(rank - named);
      ellipsis_rank = std::max(ellipsis_rank, ellipsis_dims[i]);
    }
    sizes_.assign(kLetters + ellipsis_rank, -1);
    strides_.assign(shapes.size(), std::vector<int64_t>(sizes_.size(), 0));
    std::vector<int> uses(sizes_.size(), 0);
    for (size_t i = 0; i < shapes.size(); ++i) {
      Shape strides = strides_of(shapes[i]);
      size_t axis = 0;
      for (int label : letters[i]) {
        if (label == kEllipsis) {
          for (int e = 0; e < ellipsis_dims[i]; ++e, ++axis)
            bind(kLetters + ellipsis_rank - ellipsis_dims[i] + e, i, shapes[i][axis], strides[axis],
                 equation, ctx);
        } else {
          bind(label, i, shapes[i][axis], strides[axis], equation, ctx);
          ++uses[label];
          ++axis;
        }
      }
    }
    for (int e = 0; e < ellipsis_rank; ++e)
      if (sizes_[kLetters + e] < 0) sizes_[kLetters + e] = 1;

    // The output's labels: given after "->", or implicitly the ellipsis then every letter used
    // exactly once, in alphabetical (ASCII) order, as NumPy does.
    std::vector<int> out_letters;
    bool out_ellipsis = false;
    if (arrow != std::string::npos) {
      parse_term(eq.substr(arrow + 2), equation, out_letters, out_ellipsis, ctx);
      std::vector<bool> seen(kLetters, false);
      for (int label : out_letters) {
        if (label == kEllipsis) continue;
        if (seen[label] || sizes_[label] < 0)
          ctx.fail("failed to parse equation '{}': output label '{}' is {}", equation,
                   label_char(label), seen[label] ? "repeated" : "in no input");
        seen[label] = true;
      }
      if (!out_ellipsis && ellipsis_rank > 0)
        for (int e = 0; e < ellipsis_rank; ++e)
          if (sizes_[kLetters + e] != 1)
            ctx.fail("failed to parse equation '{}': the ellipsis dims must appear in the output",
                     equation);
    } else {
      out_letters.push_back(kEllipsis);
      for (int c : ascii_order())
        if (uses[c] == 1) out_letters.push_back(c);
    }
    std::vector<bool> in_output(sizes_.size(), false);
    for (int label : out_letters) {
      if (label == kEllipsis) {
        for (int e = 0; e < ellipsis_rank; ++e) out_.push_back(kLetters + e);
      } else {
        out_.push_back(label);
      }
    }
    for (int label : out_) in_output[label] = true;
    for (size_t label = 0; label < sizes_.size(); ++label)
      if (sizes_[label] >= 0 && !in_output[label]) summed_.push_back(static_cast<int>(label));
    for (int label : out_) out_shape_.push_back(sizes_[label]);
  }

  const Shape& out_shape() const { return out_shape_; }
  int64_t summed_count() const {
    int64_t n = 1;
    for (int label : summed_) n *= sizes_[label];
    return n;
  }

  // out[o] = sum over the summed labels of the product of the inputs, for every o.
  template <typename T>
  void run(const std::vector<const T*>& in, T* out) const {
    using Acc = std::conditional_t<is_float_like_v<T>, double, uint64_t>;
    const size_t k = in.size();
    const int64_t numel = shape_numel(out_shape_);
    const int64_t inner = summed_.empty() ? 1 : sizes_[summed_.back()];
    std::vector<int64_t> inner_step(k, 0);
    if (!summed_.empty())
      for (size_t i = 0; i < k; ++i) inner_step[i] = strides_[i][summed_.back()];
    parallel_for(numel, grain_for(summed_count() * static_cast<int64_t>(k)),
                 [&](int64_t b, int64_t e) {
                   std::vector<int64_t> base(k), off(k), idx(summed_.size());
                   for (int64_t o = b; o < e; ++o) {
                     std::fill(base.begin(), base.end(), 0);
                     int64_t rest = o;
                     for (size_t d = out_.size(); d-- > 0;) {
                       const int64_t v = rest % sizes_[out_[d]];
                       rest /= sizes_[out_[d]];
                       for (size_t i = 0; i < k; ++i) base[i] += v * strides_[i][out_[d]];
                     }
                     Acc acc = 0;
                     if (summed_count() > 0) {
                       std::fill(idx.begin(), idx.end(), 0);
                       for (;;) {
                         for (size_t i = 0; i < k; ++i) {
                           off[i] = base[i];
                           for (size_t s = 0; s + 1 < summed_.size(); ++s)
                             off[i] += idx[s] * strides_[i][summed_[s]];
                         }
                         for (int64_t j = 0; j < inner; ++j) {
                           Acc prod = 1;
                           for (size_t i = 0; i < k; ++i)
                             prod *= static_cast<Acc>(widen(in[i][off[i] + j * inner_step[i]]));
                           acc += prod;
                         }
                         // The odometer over the outer summed labels.
                         int64_t s = static_cast<int64_t>(summed_.size()) - 2;
                         for (; s >= 0; --s) {
                           if (++idx[s] < sizes_[summed_[s]]) break;
                           idx[s] = 0;
                         }
                         if (s < 0) break;
                       }
                     }
                     out[o] = narrow<T>(acc);
                   }
                 });
  }

 private:
  static constexpr int kLetters = 52, kEllipsis = -1;

  static int label_of(char ch) {
    if (ch >= 'a' && ch <= 'z') return ch - 'a';
    if (ch >= 'A' && ch <= 'Z') return 26 + (ch - 'A');
    return -2;
  }
  static char label_char(int label) {
    return label < 26 ? static_cast<char>('a' + label) : static_cast<char>('A' + label - 26);
  }
  static std::array<int, kLetters> ascii_order() {  // 'A'..'Z' then 'a'..'z'
    std::array<int, kLetters> order{};
    for (int i = 0; i < 26; ++i) order[i] = 26 + i, order[26 + i] = i;
    return order;
  }

  static void parse_term(const std::string& term, const std::string& equation,
                         std::vector<int>& labels, bool& ellipsis, RunContext& ctx) {
    for (size_t p = 0; p < term.size(); ++p) {
      if (term.compare(p, 3, "...") == 0 && !ellipsis) {
        ellipsis = true;
        labels.push_back(kEllipsis);
        p += 2;
        continue;
      }
      const int label = label_of(term[p]);
      if (label < 0)
        ctx.fail(
            "failed to parse equation '{}' at '{}': labels are letters a-z, A-Z and one "
            "'...' per term",
            equation, term.substr(p));
      labels.push_back(label);
    }
  }

  // Gives input i's axis of `size` and `stride` the label; sizes must agree, except that 1
  // broadcasts (such an axis keeps stride 0).
  void bind(int label, size_t i, int64_t size, int64_t stride, const std::string& equation,
            RunContext& ctx) {
    int64_t& known = sizes_[label];
    if (known < 0 || known == 1) {
      known = size;  // earlier uses of size 1 have stride 0: they broadcast
    } else if (size != known && size != 1) {
      ctx.fail(
          "failed to apply equation '{}': label '{}' has sizes {} and {}; they must be "
          "equal (or 1)",
          equation, label >= kLetters ? '.' : label_char(label), known, size);
    }
    if (size != 1) strides_[i][label] += stride;
  }

  std::vector<int64_t> sizes_;                 // per label, -1 when unused
  std::vector<std::vector<int64_t>> strides_;  // per input, per label (0 = broadcast/unused)
  std::vector<int> out_, summed_;
  Shape out_shape_;
};

class Einsum : public Kernel {
 public:
  explicit Einsum(const OpContext& ctx) : equation_(ctx.attr_string("equation")) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    std::vector<Shape> shapes;
    for (size_t i = 0; i < in.size(); ++i) {
      const Tensor& t = input_tensor(in, i, "Inputs");
      if (t.dtype() != input_tensor(in, 0, "Inputs").dtype())
        ctx.fail("inputs 0 and {} have element types {} and {}; they must be equal", i,
                 dtype_name(input_tensor(in, 0, "Inputs").dtype()), dtype_name(t.dtype()));
      shapes.push_back(t.shape());
    }
    if (in.empty()) ctx.fail("it has no inputs; Einsum needs at least one");
    EinsumPlan plan(equation_, shapes, ctx);
    return {dispatch<EinsumTypes>(
        in[0].tensor.dtype(),
        [&]<typename T>() {
          std::vector<const T*> data;
          for (const Value& v : in) data.push_back(v.tensor.data<T>());
          Tensor y = uninitialized_tensor(dtype_of<T>, plan.out_shape());
          plan.run<T>(data, y.data<T>());
          return y;
        },
        "Inputs")};
  }

 private:
  std::string equation_;
};
// Version 12.
PARITY_REF_OP("", "Einsum", 12, kOpsetMax, Einsum);

// Det: the determinant of each [M, M] matrix in the last two dims, by LU decomposition with
// partial pivoting in double, rounded once.
class Det : public Kernel {
 public:
  explicit Det(const OpContext&) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "X");
    check_rank(x, 2, 64, "input X");
    const int64_t m = x.shape().back();
    if (x.shape()[x.rank() - 2] != m)
      ctx.fail("input X has shape {}; its last two dims must be equal (square matrices)",
               shape_str(x.shape()));
    const Shape out_shape(x.shape().begin(), x.shape().end() - 2);
    return {dispatch<FloatTypes>(
        x.dtype(),
        [&]<typename T>() {
          Tensor y = uninitialized_tensor(x.dtype(), out_shape);
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          parallel_for(y.numel(), grain_for(m * m * m), [&](int64_t b, int64_t e) {
            std::vector<double> a(static_cast<size_t>(m * m));
            for (int64_t i = b; i < e; ++i) {
              for (int64_t j = 0; j < m * m; ++j) a[j] = to_double(src[i * m * m + j]);
              dst[i] = narrow<T>(determinant(a.data(), m));
            }
          });
          return y;
        },
        "input X")};
  }

 private:
  static double determinant(double* a, int64_t m) {
    double det = 1;
    for (int64_t c = 0; c < m; ++c) {
      int64_t pivot = c;
      for (int64_t r = c + 1; r < m; ++r)
        if (std::abs(a[r * m + c]) > std::abs(a[pivot * m + c])) pivot = r;
      if (a[pivot * m + c] == 0) return 0.0;
      if (pivot != c) {
        for (int64_t j = 0; j < m; ++j) std::swap(a[c * m + j], a[pivot * m + j]);
        det = -det;
      }
      const double d = a[c * m + c];
      det *= d;
      for (int64_t r = c + 1; r < m; ++r) {
        const double f = a[r * m + c] / d;
        for (int64_t j = c + 1; j < m; ++j) a[r * m + j] -= f * a[c * m + j];
      }
    }
    return det;
  }
};
// Version 11 (and 22: bfloat16).
PARITY_REF_OP("", "Det", 11, kOpsetMax, Det);

}  // namespace
}  // namespace parity::ref
