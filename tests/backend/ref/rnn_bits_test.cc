// RNN, GRU and LSTM bit for bit against the arithmetic of the scalar kernel the batched one
// replaced, restated in plain Python floats: each gate's x · W and h · R as a sequential dot
// product from 0.0, then (x · W + Wb) + (h · R + Rb), glibc's exp and tanh through Python's math
// module, the state in double, rounded once to the element type. Python's float operations are
// IEEE double operations without fused multiply-adds, and math calls the same libm, so any
// change of summation order, fusion or activation shows as a differing bit.
#include <gtest/gtest.h>

#include "backend/ref/ops/gemm_kernel.h"
#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr const char* kScalarRecurrent = R"(
import math
def dot(row, x):
    acc = 0.0
    for a, b in zip(row, x):
        acc += a * b
    return acc
sig = lambda v: 1.0 / (1.0 + math.exp(-v))
def scalar(cell, X, W, R, B=None, lens=None, h0=None, c0=None, P=None, direction='forward',
           clip=None, lbr=0, input_forget=0):
    X, W, R = (a.astype(np.float64).tolist() for a in (X, W, R))
    B, h0, c0, P = (None if a is None else a.astype(np.float64).tolist() for a in (B, h0, c0, P))
    T, N, D, H = len(X), len(X[0]), len(W), len(R[0][0])
    G = len(W[0]) // H; gh = G * H
    cl = (lambda v: v) if clip is None else (lambda v: min(max(v, -clip), clip))
    with_r = {'rnn': 1, 'gru': 2, 'lstm': 4}[cell]
    Y = np.zeros((T, D, N, H)); Yh = np.zeros((D, N, H)); Yc = np.zeros((D, N, H))
    for d in range(D):
        rev = direction == 'reverse' or d == 1
        bias = lambda k: B[d][k] if B is not None else 0.0
        for b in range(N):
            L = T if lens is None else int(lens[b])
            h = [0.0] * H if h0 is None else list(h0[d][b])
            c = [0.0] * H if c0 is None else list(c0[d][b])
            for s in range(L):
                t = L - 1 - s if rev else s
                x = X[t][b]
                pre = []
                for k in range(gh):
                    v = dot(W[d][k], x) + bias(k)
                    if k < with_r * H:
                        v += dot(R[d][k], h) + bias(gh + k)
                    pre.append(v)
                if cell == 'rnn':
                    h = [math.tanh(cl(pre[j])) for j in range(H)]
                elif cell == 'gru':
                    z = [sig(cl(pre[j])) for j in range(H)]
                    r = [sig(cl(pre[H + j])) for j in range(H)]
                    nxt = [r[j] * h[j] for j in range(H)]
                    hh = []
                    for j in range(H):
                        rb = bias(gh + 2 * H + j)
                        rec = r[j] * (dot(R[d][2 * H + j], h) + rb) if lbr else dot(R[d][2 * H + j], nxt) + rb
                        hh.append(math.tanh(cl(pre[2 * H + j] + rec)))
                    h = [(1 - z[j]) * hh[j] + z[j] * h[j] for j in range(H)]
                else:
                    peep = lambda g, j: P[d][g * H + j] * c[j] if P is not None else 0.0
                    for j in range(H):
                        i = sig(cl(pre[j] + peep(0, j)))
                        f = 1.0 - i if input_forget else sig(cl(pre[2 * H + j] + peep(2, j)))
                        cc = math.tanh(cl(pre[3 * H + j]))
                        c[j] = f * c[j] + i * cc
                        o = sig(cl(pre[H + j] + peep(1, j)))
                        h[j] = o * math.tanh(c[j])
                Y[t, d, b] = h
            Yh[d, b] = h; Yc[d, b] = c
    return Y, Yh, Yc
)";

struct BitsCase {
  std::string name, python, model;
  std::vector<std::string> inputs, outputs;
};

void expect_same_bits(const BitsCase& c) {
  SCOPED_TRACE(c.name);
  auto np = numpy_arrays(std::string(kScalarRecurrent) + c.python);
  for (ref::GemmPath path : ref::supported_gemm_paths()) {
    ref::force_gemm_path(path);
    for (int threads : {1, 3}) {
      set_num_threads(threads);
      TensorMap out = run_text_model(c.model, feed_of(np, c.inputs));
      for (const std::string& name : c.outputs)
        EXPECT_TRUE(tensors_identical(out.at(name), np.at(name)))
            << name << " on path " << static_cast<int>(path) << ", " << threads << " threads";
    }
  }
  ref::reset_gemm_path();
  set_num_threads(0);
}

TEST(RecurrentBits, LstmBidirectionalWithPeepholesClipAndSequenceLengths) {
  expect_same_bits({"lstm",
                    R"(
T, N, I, H = 6, 3, 21, 18
X = rng.randn(T, N, I).astype(np.float32); W = rng.randn(2, 4 * H, I).astype(np.float32)
R = (0.3 * rng.randn(2, 4 * H, H)).astype(np.float32); B = rng.randn(2, 8 * H).astype(np.float32)
h0 = rng.randn(2, N, H).astype(np.float32); c0 = rng.randn(2, N, H).astype(np.float32)
P = rng.randn(2, 3 * H).astype(np.float32); lens = np.array([6, 2, 5], np.int32)
clip = float(np.float32(2.5))
Y, Yh, Yc = scalar('lstm', X, W, R, B, lens, h0, c0, P, 'bidirectional', clip)
for n, a in dict(X=X, W=W, R=R, B=B, h0=h0, c0=c0, P=P, lens=lens).items(): save(n, a)
save('Y', Y.astype(np.float32)); save('Yh', Yh.astype(np.float32)); save('Yc', Yc.astype(np.float32))
)",
                    R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[6,3,21] X, float[2,72,21] W, float[2,72,18] R, float[2,144] B, int32[3] lens,
         float[2,3,18] h0, float[2,3,18] c0, float[2,54] P) => (float Y, float Yh, float Yc) {
        Y, Yh, Yc = LSTM<direction = "bidirectional", hidden_size = 18, clip = 2.5>(X, W, R, B, lens, h0, c0, P)
      }
    )",
                    {"X", "W", "R", "B", "lens", "h0", "c0", "P"},
                    {"Y", "Yh", "Yc"}});
}

TEST(RecurrentBits, LstmInputForgetReverseInDouble) {
  // Double inputs: products are rounded, so the GEMM and the matrix-vector product may not
  // fuse them.
  expect_same_bits({"lstm double",
                    R"(
T, N, I, H = 5, 2, 13, 11
X = rng.randn(T, N, I); W = rng.randn(1, 4 * H, I); R = 0.3 * rng.randn(1, 4 * H, H)
B = rng.randn(1, 8 * H)
Y, Yh, Yc = scalar('lstm', X, W, R, B, direction='reverse', input_forget=1)
for n, a in dict(X=X, W=W, R=R, B=B).items(): save(n, a)
save('Y', Y); save('Yh', Yh); save('Yc', Yc)
)",
                    R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (double[5,2,13] X, double[1,44,13] W, double[1,44,11] R, double[1,88] B)
        => (double Y, double Yh, double Yc) {
        Y, Yh, Yc = LSTM<direction = "reverse", hidden_size = 11, input_forget = 1>(X, W, R, B)
      }
    )",
                    {"X", "W", "R", "B"},
                    {"Y", "Yh", "Yc"}});
}

TEST(RecurrentBits, GruBothResetOrdersAndRnn) {
  expect_same_bits({"gru",
                    R"(
T, N, I, H = 7, 2, 19, 70
X = rng.randn(T, N, I).astype(np.float32); W = rng.randn(2, 3 * H, I).astype(np.float32)
R = (0.2 * rng.randn(2, 3 * H, H)).astype(np.float32); B = rng.randn(2, 6 * H).astype(np.float32)
h0 = rng.randn(2, N, H).astype(np.float32); lens = np.array([7, 4], np.int32)
Y, Yh, _ = scalar('gru', X, W, R, B, lens, h0, direction='bidirectional')
_, Yl, _ = scalar('gru', X, W, R, B, lens, h0, direction='bidirectional', lbr=1)
Wr = rng.randn(1, H, I).astype(np.float32); Rr = (0.2 * rng.randn(1, H, H)).astype(np.float32)
Br = rng.randn(1, 2 * H).astype(np.float32)
Yr, _, _ = scalar('rnn', X, Wr, Rr, Br)
for n, a in dict(X=X, W=W, R=R, B=B, h0=h0, lens=lens, Wr=Wr, Rr=Rr, Br=Br).items(): save(n, a)
save('Y', Y.astype(np.float32)); save('Yh', Yh.astype(np.float32))
save('Yl', Yl.astype(np.float32)); save('Yr', Yr.astype(np.float32))
)",
                    R"(
      <ir_version: 8, opset_import: ["" : 14]>
      g (float[7,2,19] X, float[2,210,19] W, float[2,210,70] R, float[2,420] B, int32[2] lens,
         float[2,2,70] h0, float[1,70,19] Wr, float[1,70,70] Rr, float[1,140] Br)
        => (float Y, float Yh, float Yl, float Yr) {
        Y, Yh = GRU<direction = "bidirectional", hidden_size = 70>(X, W, R, B, lens, h0)
        unused, Yl = GRU<direction = "bidirectional", hidden_size = 70, linear_before_reset = 1>(X, W, R, B, lens, h0)
        Yr = RNN<hidden_size = 70>(X, Wr, Rr, Br)
      }
    )",
                    {"X", "W", "R", "B", "lens", "h0", "Wr", "Rr", "Br"},
                    {"Y", "Yh", "Yl", "Yr"}});
}

}  // namespace
}  // namespace parity::testing
