// Signal ops against NumPy at test time: DFT at opsets 17 and 20 (axis as attribute and as
// input, dft_length padding and cutting, onesided, inverse, real and complex input), STFT
// with a window, the windows in several output types, MelWeightMatrix, and errors.
#include <gtest/gtest.h>

#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr double kRtol = 1e-5, kAtol = 1e-5;

// ri(z): complex array -> [..., 2] float32 of real and imaginary parts.
constexpr const char* kPrelude = R"(
ri = lambda z: np.stack([z.real, z.imag], axis=-1).astype(np.float32)
def cx(a):
    re = a[..., 0].astype(np.float64)
    return re + 1j * a[..., 1] if a.shape[-1] == 2 else re
)";

TEST(DftKernel, Opset20TakesTheAxisAsAnInput) {
  auto np = numpy_arrays(std::string(kPrelude) + R"(
x = rng.randn(2, 5, 6, 1).astype(np.float32); z = rng.randn(3, 7, 2).astype(np.float32)
save('x', x); save('z', z)
save('full', ri(np.fft.fft(cx(x), 8, axis=1)))                  # axis 1, zero-padded to 8
save('one', ri(np.fft.fft(cx(x), 4, axis=2)[:, :, :3]))         # axis -2, cut to 4, onesided
save('inv', ri(np.fft.ifft(cx(z), axis=1)))                     # default axis -2, inverse
save('inv0', ri(np.fft.ifft(cx(z), 5, axis=0)))                 # axis 0, padded to 5
)");
  TensorMap feed;
  for (const char* n : {"x", "z"}) feed.set(n, np.at(n));
  feed.set("n8", Tensor::scalar<int64_t>(8));
  feed.set("n4", Tensor::scalar<int32_t>(4));
  feed.set("n5", Tensor::scalar<int64_t>(5));
  feed.set("a1", Tensor::scalar<int64_t>(1));
  feed.set("am2", Tensor::scalar<int64_t>(-2));
  feed.set("a0", Tensor::scalar<int64_t>(0));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 20]>
    g (float[2,5,6,1] x, float[3,7,2] z, int64 n8, int32 n4, int64 n5, int64 a1, int64 am2,
       int64 a0) => (float full, float one, float inv, float inv0) {
      full = DFT(x, n8, a1)
      one = DFT<onesided = 1>(x, n4, am2)
      inv = DFT<inverse = 1>(z)
      inv0 = DFT<inverse = 1>(z, n5, a0)
    }
  )",
                                 feed);
  for (const char* n : {"full", "one", "inv", "inv0"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
}

TEST(DftKernel, Opset17TakesTheAxisAsAnAttributeAndComputesDouble) {
  auto np = numpy_arrays(std::string(kPrelude) + R"(
z = rng.randn(4, 9, 2); save('z', z)
w = np.fft.fft(cx(z), axis=0)[:3]  # onesided: 4 // 2 + 1
save('y', np.stack([w.real, w.imag], axis=-1))
)");
  TensorMap feed;
  feed.set("z", np.at("z"));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (double[4,9,2] z) => (double y) { y = DFT<axis = 0, onesided = 1>(z) }
  )",
                                 feed);
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), 1e-12, 1e-12));
}

TEST(DftKernel, BadAxesAndShapesAreErrorsNamingTheNode) {
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {2, 3, 1}));
  feed.set("a", Tensor::scalar<int64_t>(2));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 20]>
      g (float[2,3,1] x, int64 a) => (float y) { y = DFT(x, , a) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("failed to run node 'DFT_0' (DFT): axis is 2; valid axes for rank 3 "
                         "are [-3, -2] and [0, 1]"),
            std::string::npos)
      << message;
  feed.set("x", Tensor(DataType::kFloat32, {2, 3}));
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 17]>
      g (float[2,3] x) => (float y) { y = DFT<axis = 0>(x) }
    )",
                   feed);
  });
  EXPECT_NE(message.find("input has shape (2, 3); it must have rank >= 2 and a last dim of 1"),
            std::string::npos)
      << message;
}

TEST(StftKernel, WindowedFramesMatchNumPy) {
  auto np = numpy_arrays(std::string(kPrelude) + R"(
x = rng.randn(2, 50, 1).astype(np.float32); w = np.hanning(12).astype(np.float32)
save('x', x); save('w', w)
step, n = 5, 12
frames = 1 + (50 - n) // step
seg = np.stack([x[:, f * step:f * step + n, 0].astype(np.float64) * w for f in range(frames)],
               axis=1)
save('y', ri(np.fft.rfft(seg, axis=-1)))
save('full', ri(np.fft.fft(seg, axis=-1)))
)");
  TensorMap feed;
  feed.set("x", np.at("x"));
  feed.set("w", np.at("w"));
  feed.set("step", Tensor::scalar<int64_t>(5));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (float[2,50,1] x, int64 step, float[12] w) => (float y, float full) {
      y = STFT(x, step, w)
      full = STFT<onesided = 0>(x, step, w)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), kRtol, kAtol));
  EXPECT_TRUE(tensors_close(out.at("full"), np.at("full"), kRtol, kAtol));
}

TEST(WindowKernels, PeriodicAndSymmetricInEveryOutputType) {
  auto np = numpy_arrays(R"(
k = np.arange(10.0)
save('hann', np.sin(np.pi * k / 9) ** 2)
save('hamming', (25 / 46 - 21 / 46 * np.cos(2 * np.pi * k / 10)).astype(np.float16))
blackman = 0.42 - 0.5 * np.cos(2 * np.pi * k / 10) + 0.08 * np.cos(4 * np.pi * k / 10)
save('blackman', blackman.astype(np.float32))
save('scaled', (100 * (0.5 - 0.5 * np.cos(2 * np.pi * k / 10))).astype(np.int32))
)");
  TensorMap feed;
  feed.set("n", Tensor::scalar<int64_t>(10));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 n) => (double hann, float16 hamming, float blackman, int32 ones) {
      hann = HannWindow<periodic = 0, output_datatype = 11>(n)
      hamming = HammingWindow<output_datatype = 10>(n)
      blackman = BlackmanWindow(n)
      ones = HannWindow<output_datatype = 6>(n)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_close(out.at("hann"), np.at("hann"), 1e-14, 1e-15));
  EXPECT_TRUE(tensors_identical(out.at("hamming"), np.at("hamming")));
  EXPECT_TRUE(tensors_close(out.at("blackman"), np.at("blackman"), 1e-7, 1e-7));
  // Integer outputs truncate: every value of a Hann window is in [0, 1], only k = N/2 gives 1.
  const Tensor& ones = out.at("ones");
  ASSERT_EQ(ones.dtype(), DataType::kInt32);
  for (int64_t k = 0; k < 10; ++k) EXPECT_EQ(ones.data<int32_t>()[k], k == 5 ? 1 : 0) << k;
}

TEST(MelWeightMatrixKernel, MatchesTheSpecAlgorithmInDouble) {
  auto np = numpy_arrays(R"(
def mel(num_mel_bins, dft_length, sample_rate, lower, upper):
    bins = np.arange(0, num_mel_bins + 2)
    low = 2595 * np.log10(1 + lower / 700); high = 2595 * np.log10(1 + upper / 700)
    step = (high - low) / bins.shape[0]
    hz = 700 * (np.power(10, (bins * step + low) / 2595) - 1)
    bins = np.floor((dft_length + 1) * hz / sample_rate).astype(int)
    out = np.zeros((dft_length // 2 + 1, num_mel_bins))
    for i in range(num_mel_bins):
        l, c, r = bins[i], bins[i + 1], bins[i + 2]
        if c == l: out[c, i] = 1
        else:
            for j in range(l, c + 1): out[j, i] = (j - l) / (c - l)
        for j in range(c, r): out[j, i] = (r - j) / (r - c)
    return out
save('m', mel(10, 64, 16000, 100.0, 7000.0))
)");
  TensorMap feed;
  feed.set("bins", Tensor::scalar<int64_t>(10));
  feed.set("dft", Tensor::scalar<int64_t>(64));
  feed.set("rate", Tensor::scalar<int64_t>(16000));
  feed.set("lo", Tensor::scalar<double>(100.0));
  feed.set("hi", Tensor::scalar<double>(7000.0));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 17]>
    g (int64 bins, int64 dft, int64 rate, double lo, double hi) => (double m) {
      m = MelWeightMatrix<output_datatype = 11>(bins, dft, rate, lo, hi)
    }
  )",
                                 feed);
  EXPECT_TRUE(tensors_close(out.at("m"), np.at("m"), 1e-15, 1e-15));

  auto error_with_upper_edge = [&](double hi) {
    feed.set("hi", Tensor::scalar<double>(hi));
    return error_of([&] {
      run_text_model(R"(
        <ir_version: 8, opset_import: ["" : 17]>
        g (int64 bins, int64 dft, int64 rate, double lo, double hi) => (float m) {
          m = MelWeightMatrix(bins, dft, rate, lo, hi)
        }
      )",
                     feed);
    });
  };
  std::string message = error_with_upper_edge(12000.0);  // above the Nyquist frequency
  EXPECT_NE(message.find("failed to run node 'MelWeightMatrix_0' (MelWeightMatrix): "
                         "upper_edge_hertz 12000"),
            std::string::npos)
      << message;
  // Infinite: its bin is no number an int64 holds (the cast was undefined), nor a bin.
  message = error_with_upper_edge(std::numeric_limits<double>::infinity());
  EXPECT_NE(message.find("upper_edge_hertz inf maps to spectrogram bin "), std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
