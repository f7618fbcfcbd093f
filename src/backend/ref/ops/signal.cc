// Signal ops: DFT (17: axis attribute; 20: axis input), STFT, the Hann, Hamming and Blackman
// windows, and MelWeightMatrix.
//
// Transforms are direct sums in double, y[m] = sum_k x[k] e^(∓2πi mk/n), with the twiddle of
// (m·k mod n) taken from a table of the n roots of unity, so each output is one exactly
// ordered sum rounded once. This is O(n²) per line, which is exact rather than fast.
#include <cmath>
#include <numbers>

#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

using SignalTypes = FloatTypes;  // float16, float, double, bfloat16 for DFT and STFT

// cos and sin of 2πj/n for j in [0, n).
struct Twiddles {
  explicit Twiddles(int64_t n) : n(n), cos(n), sin(n) {
    for (int64_t j = 0; j < n; ++j) {
      const double angle = 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
      cos[j] = std::cos(angle);
      sin[j] = std::sin(angle);
    }
  }
  int64_t n;
  std::vector<double> cos, sin;
};

// Outputs m in [0, count) of the n-point DFT of x (re, im; im may be null for a real signal)
// whose first `len` values are given (the rest are zero: len <= n). The inverse uses e^(+i..)
// and divides by n.
void dft_line(const double* re, const double* im, int64_t len, const Twiddles& tw, bool inverse,
              int64_t count, double* out_re, double* out_im) {
  const int64_t n = tw.n;
  const double sign = inverse ? 1.0 : -1.0;
  for (int64_t m = 0; m < count; ++m) {
    double sr = 0, si = 0;
    int64_t j = 0;  // (m * k) mod n, advanced by m each step without overflow
    for (int64_t k = 0; k < len; ++k) {
      const double c = tw.cos[j], s = sign * tw.sin[j];
      const double xr = re[k], xi = im ? im[k] : 0.0;
      sr += xr * c - xi * s;
      si += xr * s + xi * c;
      j += m % n;
      if (j >= n) j -= n;
    }
    out_re[m] = inverse ? sr / static_cast<double>(n) : sr;
    out_im[m] = inverse ? si / static_cast<double>(n) : si;
  }
}

// DFT along one axis of [..., 1 or 2]. Versions 17 (axis attribute, default 1) and 20 (axis
// input, default -2). A negative axis counts from the back of the full rank r, so the valid
// axes are [-r, -2] and [0, r - 2]. onesided keeps outputs [0, n/2] (as ONNX's reference).
template <bool kAxisInput>
class Dft : public Kernel {
 public:
  explicit Dft(const OpContext& ctx)
      : inverse_(ctx.attr_int("inverse", 0) != 0), onesided_(ctx.attr_int("onesided", 0) != 0) {
    if (!kAxisInput) axis_ = ctx.attr_int("axis", 1);
  }

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "input");
    const int64_t r = x.rank();
    if (r < 2 || (x.shape().back() != 1 && x.shape().back() != 2))
      ctx.fail(
          "input has shape {}; it must have rank >= 2 and a last dim of 1 (real) or 2 "
          "(complex)",
          shape_str(x.shape()));
    int64_t axis = axis_;
    if (kAxisInput)
      if (const Tensor* a = optional_input(in, 2, "axis"))
        axis = read_int64s(*a, "input 'axis'").at(0);
    const int64_t given = axis;
    if (axis < 0) axis += r;
    if (axis < 0 || axis > r - 2)
      ctx.fail("axis is {}; valid axes for rank {} are [{}, -2] and [0, {}]", given, r, -r, r - 2);
    const int64_t len = x.shape()[axis];
    int64_t n = len;
    if (const Tensor* d = optional_input(in, 1, "dft_length")) {
      const std::vector<int64_t> v = read_int64s(*d, "input 'dft_length'");
      if (v.size() != 1 || v[0] < 1)
        ctx.fail("input 'dft_length' is {}; it must be one value >= 1", shape_str(v));
      n = v[0];
    }
    const int64_t count = onesided_ ? n / 2 + 1 : n;
    return {dispatch<SignalTypes>(
        x.dtype(), [&]<typename T>() { return transform<T>(x, axis, n, count); }, "input")};
  }

 private:
  template <typename T>
  Tensor transform(const Tensor& x, int64_t axis, int64_t n, int64_t count) const {
    const int64_t r = x.rank(), c = x.shape().back();
    const int64_t outer = dims_product(x.shape(), 0, axis), len = x.shape()[axis];
    const int64_t inner = dims_product(x.shape(), axis + 1, r - 1);
    Shape out_shape = x.shape();
    out_shape[axis] = count;
    out_shape.back() = 2;
    Tensor y = uninitialized_tensor(x.dtype(), out_shape);
    const T* src = x.data<T>();
    T* dst = y.data<T>();
    const Twiddles tw(n);
    const int64_t used = std::min(len, n);  // longer inputs are cut, shorter ones zero-padded
    parallel_for(outer * inner, grain_for(count * used), [&](int64_t b, int64_t e) {
      std::vector<double> re(used), im(c == 2 ? used : 0), ore(count), oim(count);
      for (int64_t line = b; line < e; ++line) {
        const int64_t o = line / inner, i = line % inner;
        for (int64_t k = 0; k < used; ++k) {
          const T* p = src + ((o * len + k) * inner + i) * c;
          re[k] = to_double(p[0]);
          if (c == 2) im[k] = to_double(p[1]);
        }
        dft_line(re.data(), c == 2 ? im.data() : nullptr, used, tw, inverse_, count, ore.data(),
                 oim.data());
        for (int64_t m = 0; m < count; ++m) {
          T* q = dst + ((o * count + m) * inner + i) * 2;
          q[0] = narrow<T>(ore[m]);
          q[1] = narrow<T>(oim[m]);
        }
      }
    });
    return y;
  }

  bool inverse_, onesided_;
  int64_t axis_ = -2;
};
PARITY_REF_OP("", "DFT", 17, 19, Dft<false>);
PARITY_REF_OP("", "DFT", 20, kOpsetMax, Dft<true>);

int64_t scalar_int(const Inputs& in, size_t i, const char* name, RunContext& ctx) {
  const Tensor& t = input_tensor(in, i, name);
  if (t.numel() != 1)
    ctx.fail("input '{}' has shape {}; it must hold one value", name, shape_str(t.shape()));
  return read_int64s(t, name)[0];
}

// STFT: frames of the window's length start every frame_step samples (zero-padded past the
// end), are multiplied by the window (ones when absent) and transformed with a DFT of
// frame_length points. frames = 1 + (signal_length - frame_length) / frame_step.
class Stft : public Kernel {
 public:
  explicit Stft(const OpContext& ctx) : onesided_(ctx.attr_int("onesided", 1) != 0) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const Tensor& x = input_tensor(in, 0, "signal");
    if (x.rank() != 3 || (x.shape()[2] != 1 && x.shape()[2] != 2))
      ctx.fail("input 'signal' has shape {}; it must be [batch, signal_length, 1 or 2]",
               shape_str(x.shape()));
    const int64_t step = scalar_int(in, 1, "frame_step", ctx);
    if (step < 1) ctx.fail("input 'frame_step' is {}; it must be >= 1", step);
    const Tensor* window = optional_input(in, 2, "window");
    if (window && (window->rank() != 1 || window->dtype() != x.dtype()))
      ctx.fail("input 'window' is {} {}; it must be rank 1 of the signal's type {}",
               dtype_name(window->dtype()), shape_str(window->shape()), dtype_name(x.dtype()));
    const int64_t signal_length = x.shape()[1];
    int64_t frame_length = window ? window->shape()[0] : signal_length;
    if (optional_input(in, 3, "frame_length"))
      frame_length = scalar_int(in, 3, "frame_length", ctx);
    if (frame_length < 1 || frame_length > signal_length)
      ctx.fail("frame length is {}; it must be in [1, signal length {}]", frame_length,
               signal_length);
    const int64_t window_length = window ? window->shape()[0] : frame_length;
    const int64_t frames = 1 + (signal_length - frame_length) / step;
    const int64_t bins = onesided_ ? frame_length / 2 + 1 : frame_length;
    return {dispatch<SignalTypes>(
        x.dtype(),
        [&]<typename T>() {
          const int64_t batch = x.shape()[0], c = x.shape()[2];
          Tensor y = uninitialized_tensor(x.dtype(), {batch, frames, bins, 2});
          const T* src = x.data<T>();
          T* dst = y.data<T>();
          std::vector<double> win(window_length, 1.0);
          if (window)
            for (int64_t k = 0; k < window_length; ++k) win[k] = to_double(window->data<T>()[k]);
          const Twiddles tw(frame_length);
          const int64_t used = std::min(window_length, frame_length);
          parallel_for(batch * frames, grain_for(bins * used), [&](int64_t b, int64_t e) {
            std::vector<double> re(used), im(used), ore(bins), oim(bins);
            for (int64_t item = b; item < e; ++item) {
              const int64_t bi = item / frames, f = item % frames;
              for (int64_t k = 0; k < used; ++k) {
                const int64_t s = f * step + k;
                const T* p = src + (bi * signal_length + s) * c;
                const bool inside = s < signal_length;
                re[k] = inside ? to_double(p[0]) * win[k] : 0.0;
                im[k] = inside && c == 2 ? to_double(p[1]) * win[k] : 0.0;
              }
              dft_line(re.data(), c == 2 ? im.data() : nullptr, used, tw, false, bins, ore.data(),
                       oim.data());
              T* q = dst + item * bins * 2;
              for (int64_t m = 0; m < bins; ++m) {
                q[2 * m] = narrow<T>(ore[m]);
                q[2 * m + 1] = narrow<T>(oim[m]);
              }
            }
          });
          return y;
        },
        "input 'signal'")};
  }

 private:
  bool onesided_;
};
PARITY_REF_OP("", "STFT", 17, kOpsetMax, Stft);

// The numeric output types of the window functions and MelWeightMatrix.
using WindowOutputTypes = NumericTypes;

DataType read_output_datatype(const OpContext& ctx) {
  const int64_t code = ctx.attr_int("output_datatype", 1);
  if (code < 1 || code > 22 || !dtype_is_valid(static_cast<int32_t>(code)))
    ctx.fail("attribute 'output_datatype' is {}; it must be a TensorProto data type", code);
  const auto dtype = static_cast<DataType>(code);
  dispatch<WindowOutputTypes>(
      dtype, []<typename T>() {}, "attribute 'output_datatype'");
  return dtype;
}

enum class WindowKind { kHann, kHamming, kBlackman };

// w[k] for k in [0, size), N = size when periodic, size - 1 when symmetric (the formula is
// used as written, so a symmetric window of size 1 divides 0 by 0, as ONNX's reference does):
// Hann sin²(πk/N), Hamming 25/46 - 21/46 cos(2πk/N), Blackman 0.42 - 0.5 cos(2πk/N)
// + 0.08 cos(4πk/N). Integer outputs truncate toward zero.
template <WindowKind kKind>
class Window : public Kernel {
 public:
  explicit Window(const OpContext& ctx)
      : dtype_(read_output_datatype(ctx)), periodic_(ctx.attr_int("periodic", 1) != 0) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const int64_t size = scalar_int(in, 0, "size", ctx);
    if (size < 0) ctx.fail("input 'size' is {}; it must be >= 0", size);
    const double n = static_cast<double>(periodic_ ? size : size - 1);
    constexpr double pi = std::numbers::pi;
    return {dispatch<WindowOutputTypes>(dtype_, [&]<typename T>() {
      Tensor y = uninitialized_tensor(dtype_, {size});
      T* out = y.data<T>();
      for (int64_t k = 0; k < size; ++k) {
        const double x = static_cast<double>(k);
        double v;
        if (kKind == WindowKind::kHann) {
          const double s = std::sin(pi * x / n);
          v = s * s;
        } else if (kKind == WindowKind::kHamming) {
          v = 25.0 / 46.0 - (21.0 / 46.0) * std::cos(2 * pi * x / n);
        } else {
          v = 0.42 - 0.5 * std::cos(2 * pi * x / n) + 0.08 * std::cos(4 * pi * x / n);
        }
        out[k] = narrow<T>(v);
      }
      return y;
    })};
  }

 private:
  DataType dtype_;
  bool periodic_;
};
PARITY_REF_OP("", "HannWindow", 17, kOpsetMax, Window<WindowKind::kHann>);
PARITY_REF_OP("", "HammingWindow", 17, kOpsetMax, Window<WindowKind::kHamming>);
PARITY_REF_OP("", "BlackmanWindow", 17, kOpsetMax, Window<WindowKind::kBlackman>);

// MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters. num_mel_bins + 2
// points are spaced evenly on the mel scale (mel = 2595 log10(1 + hz / 700)) from the lower
// to the upper edge, with step (high - low) / (num_mel_bins + 2) as the spec's algorithm has
// it, mapped back to hertz and to the spectrogram bin floor((dft_length + 1) hz / sample_rate).
// Filter i rises from bin[i] to 1 at bin[i + 1] and falls to bin[i + 2].
class MelWeightMatrix : public Kernel {
 public:
  explicit MelWeightMatrix(const OpContext& ctx) : dtype_(read_output_datatype(ctx)) {}

  Outputs run(const Inputs& in, RunContext& ctx) override {
    const int64_t mel_bins = scalar_int(in, 0, "num_mel_bins", ctx);
    const int64_t dft_length = scalar_int(in, 1, "dft_length", ctx);
    const int64_t sample_rate = scalar_int(in, 2, "sample_rate", ctx);
    const double low = read_scalar(input_tensor(in, 3, "lower_edge_hertz"), "lower_edge_hertz");
    const double high = read_scalar(input_tensor(in, 4, "upper_edge_hertz"), "upper_edge_hertz");
    if (mel_bins < 1 || dft_length < 1 || sample_rate < 1)
      ctx.fail("num_mel_bins {}, dft_length {} and sample_rate {} must all be >= 1", mel_bins,
               dft_length, sample_rate);
    if (!(low >= 0 && low <= high))
      ctx.fail("lower_edge_hertz {} and upper_edge_hertz {} must satisfy 0 <= lower <= upper", low,
               high);
    const int64_t spectrogram_bins = dft_length / 2 + 1;
    auto mel = [](double hz) { return 2595.0 * std::log10(1.0 + hz / 700.0); };
    const double low_mel = mel(low),
                 step = (mel(high) - low_mel) / static_cast<double>(mel_bins + 2);
    std::vector<int64_t> bin(static_cast<size_t>(mel_bins + 2));
    for (int64_t i = 0; i < mel_bins + 2; ++i) {
      const double hz =
          700.0 * (std::pow(10.0, (static_cast<double>(i) * step + low_mel) / 2595.0) - 1.0);
      // Checked as a double: an infinite upper_edge_hertz gives a bin no int64 holds.
      const double b =
          std::floor(static_cast<double>(dft_length + 1) * hz / static_cast<double>(sample_rate));
      if (!(b >= 0 && b < static_cast<double>(spectrogram_bins)))
        ctx.fail(
            "upper_edge_hertz {} maps to spectrogram bin {}; with sample_rate {} and "
            "dft_length {} the bins end at {} (keep upper_edge_hertz <= sample_rate / 2)",
            high, b, sample_rate, dft_length, spectrogram_bins - 1);
      bin[i] = static_cast<int64_t>(b);
    }
    std::vector<double> w(static_cast<size_t>(spectrogram_bins * mel_bins), 0.0);
    for (int64_t i = 0; i < mel_bins; ++i) {
      const int64_t left = bin[i], center = bin[i + 1], right = bin[i + 2];
      if (center == left) {
        w[center * mel_bins + i] = 1.0;
      } else {
        for (int64_t j = left; j <= center; ++j)
          w[j * mel_bins + i] = static_cast<double>(j - left) / static_cast<double>(center - left);
      }
      for (int64_t j = center; j < right; ++j)
        w[j * mel_bins + i] = static_cast<double>(right - j) / static_cast<double>(right - center);
    }
    return {dispatch<WindowOutputTypes>(dtype_, [&]<typename T>() {
      Tensor y = uninitialized_tensor(dtype_, {spectrogram_bins, mel_bins});
      T* out = y.data<T>();
      for (size_t k = 0; k < w.size(); ++k) out[k] = narrow<T>(w[k]);
      return y;
    })};
  }

 private:
  DataType dtype_;
};
PARITY_REF_OP("", "MelWeightMatrix", 17, kOpsetMax, MelWeightMatrix);

}  // namespace
}  // namespace parity::ref
