// RNN, GRU and LSTM against a NumPy transcription of the spec's equations, evaluated at test
// time in float64: every direction, activation lists with alpha/beta, clip,
// linear_before_reset, input_forget, peepholes, sequence_lens, initial states, layout 1 and
// all three outputs; plus thread-count independence and the errors for mismatched inputs.
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr double kRtol = 1e-5, kAtol = 1e-6;

// recurrent(cell, X, W, R, B, lens, h0, c0, P, direction, acts, clip, lbr, input_forget, layout)
// returns (Y, Y_h, Y_c) in float64. `acts` lists (name, alpha, beta) for every direction.
constexpr const char* kNumpyRecurrent = R"(
ACT = {
  'Tanh': lambda x, a, b: np.tanh(x),
  'Sigmoid': lambda x, a, b: 1 / (1 + np.exp(-x)),
  'Relu': lambda x, a, b: np.maximum(x, 0),
  'LeakyRelu': lambda x, a, b: np.where(x >= 0, x, a * x),
  'HardSigmoid': lambda x, a, b: np.clip(a * x + b, 0, 1),
  'Affine': lambda x, a, b: a * x + b,
  'ScaledTanh': lambda x, a, b: a * np.tanh(b * x),
  'Elu': lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1)),
  'Softsign': lambda x, a, b: x / (1 + np.abs(x)),
  'Softplus': lambda x, a, b: np.log1p(np.exp(x)),
  'ThresholdedRelu': lambda x, a, b: np.where(x > a, x, 0),
}

def recurrent(cell, X, W, R, B=None, lens=None, h0=None, c0=None, P=None, direction='forward',
              acts=None, clip=None, lbr=0, input_forget=0, layout=0):
    f64 = lambda a: None if a is None else a.astype(np.float64)
    X, W, R, B, h0, c0, P = map(f64, (X, W, R, B, h0, c0, P))
    if layout == 1:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else h0.transpose(1, 0, 2)
        c0 = None if c0 is None else c0.transpose(1, 0, 2)
    T, N, I = X.shape
    D, H = W.shape[0], R.shape[2]
    G = W.shape[1] // H
    k = len(acts) // D
    Y = np.zeros((T, D, N, H)); Yh = np.zeros((D, N, H)); Yc = np.zeros((D, N, H))
    cl = (lambda v: v) if clip is None else (lambda v: np.clip(v, -clip, clip))
    for d in range(D):
        a = acts[d * k:(d + 1) * k]
        f = lambda i, v: ACT[a[i][0]](cl(v), a[i][1], a[i][2])
        Wb = np.zeros(G * H) if B is None else B[d, :G * H]
        Rb = np.zeros(G * H) if B is None else B[d, G * H:]
        rev = direction == 'reverse' or d == 1
        for b in range(N):
            L = T if lens is None else int(lens[b])
            h = np.zeros(H) if h0 is None else h0[d, b].copy()
            c = np.zeros(H) if c0 is None else c0[d, b].copy()
            for s in range(L):
                t = L - 1 - s if rev else s
                x = X[t, b]
                if cell == 'rnn':
                    h = f(0, W[d] @ x + R[d] @ h + Wb + Rb)
                elif cell == 'gru':
                    gx = W[d] @ x + Wb
                    z = f(0, gx[:H] + R[d][:H] @ h + Rb[:H])
                    r = f(0, gx[H:2 * H] + R[d][H:2 * H] @ h + Rb[H:2 * H])
                    if lbr:
                        hh = f(1, gx[2 * H:] + r * (R[d][2 * H:] @ h + Rb[2 * H:]))
                    else:
                        hh = f(1, gx[2 * H:] + R[d][2 * H:] @ (r * h) + Rb[2 * H:])
                    h = (1 - z) * hh + z * h
                else:
                    g = W[d] @ x + R[d] @ h + Wb + Rb
                    p = np.zeros(3 * H) if P is None else P[d]
                    i = f(0, g[:H] + p[:H] * c)
                    fg = 1 - i if input_forget else f(0, g[2 * H:3 * H] + p[2 * H:] * c)
                    c = fg * c + i * f(1, g[3 * H:])
                    o = f(0, g[H:2 * H] + p[H:2 * H] * c)
                    h = o * ACT[a[2][0]](c, a[2][1], a[2][2])
                Y[t, d, b] = h
            Yh[d, b] = h; Yc[d, b] = c
    if layout == 1:
        return Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return Y, Yh, Yc

def save_outputs(prefix, outs):
    for name, v in zip(('Y', 'Y_h', 'Y_c'), outs):
        save(prefix + name, v.astype(np.float32))
)";

void expect_outputs(const TensorMap& out, const std::map<std::string, Tensor>& np,
                    std::vector<std::string> names) {
  for (const auto& n : names) EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;
}

TEST(RnnKernel, BidirectionalWithActivationListsAndSequenceLengths) {
  auto np = numpy_arrays(std::string(kNumpyRecurrent) + R"(
X = rng.randn(4, 3, 5).astype(np.float32); W = rng.randn(2, 6, 5).astype(np.float32) * 0.5
R = rng.randn(2, 6, 6).astype(np.float32) * 0.5; B = rng.randn(2, 12).astype(np.float32)
h0 = rng.randn(2, 3, 6).astype(np.float32); lens = np.array([4, 1, 3], np.int32)
for n, v in dict(X=X, W=W, R=R, B=B, h0=h0, lens=lens).items(): save(n, v)
save_outputs('', recurrent('rnn', X, W, R, B, lens, h0, direction='bidirectional',
                           acts=[('LeakyRelu', 0.2, 0), ('HardSigmoid', 0.3, 0.6)]))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[4,3,5] X, float[2,6,5] W, float[2,6,6] R, float[2,12] B, int32[3] lens,
       float[2,3,6] h0) => (float Y, float Y_h) {
      Y, Y_h = RNN<direction = "bidirectional", hidden_size = 6,
                   activations = ["LeakyRelu", "HardSigmoid"], activation_alpha = [0.2, 0.3],
                   activation_beta = [0.6]>(X, W, R, B, lens, h0)
    }
  )",
                                 feed_of(np, {"X", "W", "R", "B", "lens", "h0"}));
  expect_outputs(out, np, {"Y", "Y_h"});
}

TEST(RnnKernel, ReverseWithClipAtOpset7) {
  auto np = numpy_arrays(std::string(kNumpyRecurrent) + R"(
X = rng.randn(5, 2, 3).astype(np.float32); W = rng.randn(1, 4, 3).astype(np.float32)
R = rng.randn(1, 4, 4).astype(np.float32)
for n, v in dict(X=X, W=W, R=R).items(): save(n, v)
save_outputs('', recurrent('rnn', X, W, R, direction='reverse', acts=[('Tanh', 0, 0)],
                           clip=np.float32(0.7)))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 7]>
    g (float[5,2,3] X, float[1,4,3] W, float[1,4,4] R) => (float Y, float Y_h) {
      Y, Y_h = RNN<direction = "reverse", hidden_size = 4, clip = 0.7>(X, W, R)
    }
  )",
                                 feed_of(np, {"X", "W", "R"}));
  expect_outputs(out, np, {"Y", "Y_h"});
}

TEST(GruKernel, LinearBeforeResetBothWaysAndLayoutOne) {
  auto np = numpy_arrays(std::string(kNumpyRecurrent) + R"(
X = rng.randn(3, 4, 5).astype(np.float32); W = rng.randn(2, 12, 5).astype(np.float32) * 0.5
R = rng.randn(2, 12, 4).astype(np.float32) * 0.5; B = rng.randn(2, 24).astype(np.float32)
h0 = rng.randn(3, 2, 4).astype(np.float32); lens = np.array([4, 2, 3], np.int32)
for n, v in dict(X=X, W=W, R=R, B=B, h0=h0, lens=lens).items(): save(n, v)
acts = [('Sigmoid', 0, 0), ('Tanh', 0, 0)] * 2
save_outputs('a', recurrent('gru', X, W, R, B, lens, h0, direction='bidirectional', acts=acts,
                            lbr=1, layout=1))
save_outputs('b', recurrent('gru', X, W, R, B, lens, h0, direction='bidirectional', acts=acts,
                            lbr=0, layout=1))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[3,4,5] X, float[2,12,5] W, float[2,12,4] R, float[2,24] B, int32[3] lens,
       float[3,2,4] h0) => (float aY, float aY_h, float bY, float bY_h) {
      aY, aY_h = GRU<direction = "bidirectional", hidden_size = 4, layout = 1,
                     linear_before_reset = 1>(X, W, R, B, lens, h0)
      bY, bY_h = GRU<direction = "bidirectional", hidden_size = 4, layout = 1>(X, W, R, B, lens, h0)
    }
  )",
                                 feed_of(np, {"X", "W", "R", "B", "lens", "h0"}));
  expect_outputs(out, np, {"aY", "aY_h", "bY", "bY_h"});
}

TEST(GruKernel, ReverseWithCustomActivationsAtOpset3) {
  auto np = numpy_arrays(std::string(kNumpyRecurrent) + R"(
X = rng.randn(4, 2, 3).astype(np.float32); W = rng.randn(1, 9, 3).astype(np.float32)
R = rng.randn(1, 9, 3).astype(np.float32); B = rng.randn(1, 18).astype(np.float32)
for n, v in dict(X=X, W=W, R=R, B=B).items(): save(n, v)
save_outputs('', recurrent('gru', X, W, R, B, direction='reverse',
                           acts=[('HardSigmoid', 0.25, np.float32(0.4)), ('Softsign', 0, 0)], lbr=1,
                           clip=1.5))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 3]>
    g (float[4,2,3] X, float[1,9,3] W, float[1,9,3] R, float[1,18] B) => (float Y, float Y_h) {
      Y, Y_h = GRU<direction = "reverse", hidden_size = 3, linear_before_reset = 1, clip = 1.5,
                   activations = ["HardSigmoid", "Softsign"], activation_alpha = [0.25],
                   activation_beta = [0.4]>(X, W, R, B)
    }
  )",
                                 feed_of(np, {"X", "W", "R", "B"}));
  expect_outputs(out, np, {"Y", "Y_h"});
}

TEST(LstmKernel, BidirectionalPeepholesInputForgetAndLayoutOne) {
  auto np = numpy_arrays(std::string(kNumpyRecurrent) + R"(
X = rng.randn(2, 5, 3).astype(np.float32); W = rng.randn(2, 16, 3).astype(np.float32) * 0.5
R = rng.randn(2, 16, 4).astype(np.float32) * 0.5; B = rng.randn(2, 32).astype(np.float32)
h0 = rng.randn(2, 2, 4).astype(np.float32); c0 = rng.randn(2, 2, 4).astype(np.float32)
P = rng.randn(2, 12).astype(np.float32); lens = np.array([5, 3], np.int32)
for n, v in dict(X=X, W=W, R=R, B=B, h0=h0, c0=c0, P=P, lens=lens).items(): save(n, v)
acts = [('Sigmoid', 0, 0), ('Tanh', 0, 0), ('Tanh', 0, 0),
        ('HardSigmoid', 0.3, 0.4), ('Elu', 0.5, 0), ('ScaledTanh', 1.5, 0.8)]
save_outputs('', recurrent('lstm', X, W, R, B, lens, h0, c0, P, direction='bidirectional',
                           acts=acts, input_forget=1, layout=1))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[2,5,3] X, float[2,16,3] W, float[2,16,4] R, float[2,32] B, int32[2] lens,
       float[2,2,4] h0, float[2,2,4] c0, float[2,12] P) => (float Y, float Y_h, float Y_c) {
      Y, Y_h, Y_c = LSTM<direction = "bidirectional", hidden_size = 4, layout = 1,
                         input_forget = 1,
                         activations = ["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "Elu",
                                        "ScaledTanh"],
                         activation_alpha = [0.3, 0.5, 1.5], activation_beta = [0.4, 0.8]>
                    (X, W, R, B, lens, h0, c0, P)
    }
  )",
                                 feed_of(np, {"X", "W", "R", "B", "lens", "h0", "c0", "P"}));
  expect_outputs(out, np, {"Y", "Y_h", "Y_c"});
}

TEST(LstmKernel, ForwardWithClipPeepholesAndDoubleAtOpset7) {
  auto np = numpy_arrays(std::string(kNumpyRecurrent) + R"(
X = rng.randn(6, 3, 2); W = rng.randn(1, 20, 2); R = rng.randn(1, 20, 5)
B = rng.randn(1, 40); P = rng.randn(1, 15)
for n, v in dict(X=X, W=W, R=R, B=B, P=P).items(): save(n, v)
Y, Yh, Yc = recurrent('lstm', X, W, R, B, P=P, acts=[('Sigmoid', 0, 0), ('Tanh', 0, 0),
                      ('Tanh', 0, 0)], clip=np.float64(np.float32(0.9)))
save('Y', Y); save('Y_h', Yh); save('Y_c', Yc)
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 7]>
    g (double[6,3,2] X, double[1,20,2] W, double[1,20,5] R, double[1,40] B, double[1,15] P)
      => (double Y, double Y_h, double Y_c) {
      Y, Y_h, Y_c = LSTM<hidden_size = 5, clip = 0.9>(X, W, R, B, , , , P)
    }
  )",
                                 feed_of(np, {"X", "W", "R", "B", "P"}));
  for (const char* n : {"Y", "Y_h", "Y_c"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), 1e-12, 1e-12)) << n;
}

TEST(RecurrentKernels, GiveTheSameBitsOnAnyThreadCount) {
  auto np = numpy_arrays(R"(
save('X', rng.randn(7, 64, 8).astype(np.float32))
save('W', rng.randn(2, 64, 8).astype(np.float32) * 0.3)
save('R', rng.randn(2, 64, 16).astype(np.float32) * 0.3)
)");
  const char* text = R"(
    <ir_version: 8, opset_import: ["" : 14]>
    g (float[7,64,8] X, float[2,64,8] W, float[2,64,16] R) => (float Y) {
      Y = LSTM<direction = "bidirectional", hidden_size = 16>(X, W, R)
    }
  )";
  set_num_threads(1);
  Tensor one = run_text_model(text, feed_of(np, {"X", "W", "R"})).at("Y");
  set_num_threads(4);
  Tensor four = run_text_model(text, feed_of(np, {"X", "W", "R"})).at("Y");
  set_num_threads(0);
  EXPECT_TRUE(tensors_identical(one, four));
}

TEST(RecurrentKernels, MismatchedInputsAreErrorsNamingTheNode) {
  TensorMap feed;
  feed.set("X", Tensor(DataType::kFloat32, {2, 1, 3}));
  feed.set("W", Tensor(DataType::kFloat32, {1, 12, 4}));  // input size 4, X has 3
  feed.set("R", Tensor(DataType::kFloat32, {1, 12, 4}));
  std::string message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[2,1,3] X, float[1,12,4] W, float[1,12,4] R) => (float Y_h) {
        Y, Y_h = GRU<hidden_size = 4>(X, W, R)
      }
    )",
                   feed);
  });
  EXPECT_NE(message.find("failed to run node 'GRU_0' (GRU): input 'W' has shape (1, 12, 4); it "
                         "must be (1, 12, 3)"),
            std::string::npos)
      << message;

  feed.set("W", Tensor(DataType::kFloat32, {1, 12, 3}));
  feed.set("L", Tensor::from_vector<int32_t>({1}, {3}));
  message = error_of([&] {
    run_text_model(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[2,1,3] X, float[1,12,3] W, float[1,12,4] R, int32[1] L) => (float Y_h) {
        Y, Y_h = GRU<hidden_size = 4>(X, W, R, , L)
      }
    )",
                   feed);
  });
  EXPECT_NE(message.find("input 'sequence_lens' holds 3; each length must be in [0, 2]"),
            std::string::npos)
      << message;

  message = error_of([] {
    ref::Executor e(model_from_text(R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[2,1,3] X, float[1,4,3] W, float[1,4,4] R) => (float Y) {
        Y = RNN<hidden_size = 4, activations = ["Swish"]>(X, W, R)
      }
    )"));
  });
  EXPECT_NE(message.find("failed to prepare node 'RNN_0' (RNN): activation 'Swish' is not an RNN "
                         "activation"),
            std::string::npos)
      << message;
}

}  // namespace
}  // namespace parity::testing
