// The cases of ONNX Runtime's com.microsoft fused ops, shared by the reference backend's tests
// (each case against its NumPy restatement, ms_ops_test.cc) and the ONNX Runtime differential
// tests (the same cases on the real ONNX Runtime, tests/backend/onnxrt/contrib_ops_test.cc).
//
// Every case is a model in ONNX text and a NumPy script that saves the model's inputs and the
// expected outputs, computed in float64 from the documentation's formulas
// (docs/ContribOperators.md of the onnxruntime repository) and rounded to the output type.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace parity::testing {

struct MsOpCase {
  std::string name;   // a gtest name: letters, digits, underscores
  std::string model;  // ONNX text
  std::string numpy;  // saves every input and output named below
  std::vector<std::string> inputs, outputs;
  // Empty when ONNX Runtime's CPU provider runs the case; otherwise part of the error ONNX
  // Runtime gives when the session is made or run (the differential test checks that it still
  // gives it, and compares that case with NumPy only).
  std::string ort_cpu_error = "";
  // The tolerance against ONNX Runtime when the defaults (float32) do not fit: float16 outputs.
  double ort_rtol = 0, ort_atol = 0;
  // The oldest ONNX Runtime 1.x (minor version) the case is known to agree with. The suite also
  // runs on 1.17 (tests/backend/onnxrt/library_test.cc), whose CPU kernels lack some inputs,
  // outputs and types the documentation of 1.30 has: there such a case is compared with NumPy
  // only, and says so.
  int ort_min_minor = 17;
  // Set when ONNX Runtime cannot be given the case at all (it crashes the process): why. The
  // differential test then compares the reference with NumPy only and prints the reason.
  std::string ort_unsafe = "";
};

// gtest prints the case by name (not as bytes).
inline void PrintTo(const MsOpCase& c, std::ostream* os) { *os << c.name; }

// Helpers every case script may use (after ref_test_util.h's prelude: np, rng, save).
inline const char* kMsNumpyHelpers = R"(
import math
erf = np.vectorize(math.erf)
def f32(a): return np.asarray(a, dtype=np.float32)
def D(a): return np.asarray(a, dtype=np.float64)
def eps32(e): return float(np.float32(e))
def gelu(x): return 0.5 * x * (1 + erf(x / np.sqrt(2)))
def gelu_tanh(x): return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
def layer_norm(s, g, b, eps):
    m = s.mean(-1, keepdims=True); v = ((s - m) ** 2).mean(-1, keepdims=True)
    return (s - m) / np.sqrt(v + eps) * g + b
def rms_norm(s, g, eps): return s / np.sqrt((s * s).mean(-1, keepdims=True) + eps) * g
def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True)); return e / e.sum(-1, keepdims=True)
def heads(x, n):
    b, s, d = x.shape; return x.reshape(b, s, n, d // n).transpose(0, 2, 1, 3)
def merge(x):
    b, n, s, h = x.shape; return x.transpose(0, 2, 1, 3).reshape(b, s, n * h)
def attend(q, k, v, scale, bias):  # q [B,N,S,H], k and v [B,N,T,*], bias broadcast to scores
    return softmax(scale * q @ k.transpose(0, 1, 3, 2) + bias) @ v
def rope(x, cos, sin, interleaved):  # x [..., H]; cos, sin [..., r/2] broadcast to x's rows
    r = cos.shape[-1] * 2; x = x.copy(); a = x[..., :r]
    x1, x2 = (a[..., 0::2], a[..., 1::2]) if interleaved else (a[..., :r // 2], a[..., r // 2:])
    o1 = x1 * cos - x2 * sin; o2 = x2 * cos + x1 * sin
    x[..., :r] = np.stack([o1, o2], -1).reshape(a.shape) if interleaved else np.concatenate([o1, o2], -1)
    return x
def rope_cache(positions, r):
    ang = np.outer(np.arange(positions), 1.0 / 10000 ** (np.arange(0, r, 2) / r))
    return f32(np.cos(ang)), f32(np.sin(ang))
def conv2d(x, w, b, pad):
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    m, _, kh, kw = w.shape; oh = xp.shape[2] - kh + 1; ow = xp.shape[3] - kw + 1
    y = np.zeros((x.shape[0], m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum('nchw,mc->nmhw', xp[:, :, i:i + oh, j:j + ow], w[:, :, i, j])
    return y + b.reshape(1, -1, 1, 1)
def unpack(b, bits):  # uint8 [..., bytes] -> values [..., bytes * 8 / bits], lowest bits first
    per = 8 // bits
    return np.stack([(b >> (bits * i)) & ((1 << bits) - 1) for i in range(per)], -1).reshape(b.shape[:-1] + (-1,))
)";

inline std::vector<MsOpCase> ms_op_cases() {
  const std::string header = R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>)";
  std::vector<MsOpCase> c;
  c.push_back({"Gelu",
               header + R"(
    g (float[2,3,8] x) => (float[2,3,8] y) { y = com.microsoft.Gelu(x) })",
               R"(
x = f32(rng.randn(2, 3, 8) * 2); save('x', x); save('y', f32(gelu(D(x))))
)",
               {"x"},
               {"y"}});
  c.push_back({"BiasGelu",
               header + R"(
    g (float[2,3,8] a, float[8] b) => (float[2,3,8] y) { y = com.microsoft.BiasGelu(a, b) })",
               R"(
a = f32(rng.randn(2, 3, 8) * 2); b = f32(rng.randn(8)); save('a', a); save('b', b)
save('y', f32(gelu(D(a) + D(b))))
)",
               {"a", "b"},
               {"y"}});
  c.push_back({"FastGeluWithAndWithoutBias",
               header + R"(
    g (float[2,3,8] x, float[8] b) => (float[2,3,8] y, float[2,3,8] z) {
      y = com.microsoft.FastGelu(x, b)
      z = com.microsoft.FastGelu(x)
    })",
               R"(
x = f32(rng.randn(2, 3, 8) * 2); b = f32(rng.randn(8)); save('x', x); save('b', b)
save('y', f32(gelu_tanh(D(x) + D(b)))); save('z', f32(gelu_tanh(D(x))))
)",
               {"x", "b"},
               {"y", "z"}});
  c.push_back({"QuickGeluDefaultAndGivenAlpha",
               header + R"(
    g (float[4,8] x) => (float[4,8] y, float[4,8] z) {
      y = com.microsoft.QuickGelu(x)
      z = com.microsoft.QuickGelu<alpha = 1.5>(x)
    })",
               R"(
x = f32(rng.randn(4, 8) * 3); save('x', x); X = D(x)
save('y', f32(X / (1 + np.exp(-eps32(1.702) * X)))); save('z', f32(X / (1 + np.exp(-1.5 * X))))
)",
               {"x"},
               {"y", "z"}});
  c.push_back({"BiasAdd",
               header + R"(
    g (float[2,4,8] x, float[8] b, float[2,4,8] s) => (float[2,4,8] y) {
      y = com.microsoft.BiasAdd(x, b, s)
    })",
               R"(
x = f32(rng.randn(2, 4, 8)); b = f32(rng.randn(8)); s = f32(rng.randn(2, 4, 8))
save('x', x); save('b', b); save('s', s); save('y', f32(D(x) + D(b) + D(s)))
)",
               {"x", "b", "s"},
               {"y"},
               // ONNX Runtime implements BiasAdd for CUDA and ROCm only.
               "Could not find an implementation for BiasAdd(1)"});
  c.push_back({"SkipLayerNormalizationWithBetaBiasAndSum",
               header + R"(
    g (float[2,3,16] x, float[2,3,16] s, float[16] g, float[16] b, float[16] bias)
      => (float[2,3,16] y, float[2,3,1] mean, float[2,3,1] inv, float[2,3,16] sum) {
      y, mean, inv, sum = com.microsoft.SkipLayerNormalization<epsilon = 0.00001>(x, s, g, b, bias)
    })",
               R"(
x = f32(rng.randn(2, 3, 16) * 2 + 1); s = f32(rng.randn(2, 3, 16)); g = f32(rng.randn(16))
b = f32(rng.randn(16)); bias = f32(rng.randn(16))
for n, v in [('x', x), ('s', s), ('g', g), ('b', b), ('bias', bias)]: save(n, v)
S = D(x) + D(s) + D(bias)
save('y', f32(layer_norm(S, D(g), D(b), eps32(1e-5)))); save('sum', f32(S))
save('mean', f32(S.mean(-1, keepdims=True))); save('inv', f32(1 / np.sqrt(S.var(-1, keepdims=True) + eps32(1e-5))))
)",
               {"x", "s", "g", "b", "bias"},
               {"y", "mean", "inv", "sum"}});
  c.back().ort_min_minor = 30;
  c.push_back({"SkipLayerNormalizationWithoutBetaDefaultEpsilon",
               header + R"(
    g (float[2,3,16] x, float[2,3,16] s, float[16] g) => (float[2,3,16] y) {
      y = com.microsoft.SkipLayerNormalization(x, s, g)
    })",
               R"(
x = f32(rng.randn(2, 3, 16)); s = f32(rng.randn(2, 3, 16)); g = f32(rng.randn(16))
save('x', x); save('s', s); save('g', g)
save('y', f32(layer_norm(D(x) + D(s), D(g), 0.0, eps32(1e-12))))
)",
               {"x", "s", "g"},
               {"y"}});
  c.push_back({"SkipSimplifiedLayerNormalizationWithBiasAndSum",
               header + R"(
    g (float[2,3,16] x, float[2,3,16] s, float[16] g, float[16] bias)
      => (float[2,3,16] y, float[2,3,1] inv, float[2,3,16] sum) {
      y, , inv, sum = com.microsoft.SkipSimplifiedLayerNormalization<epsilon = 0.000001>(x, s, g, bias)
    })",
               R"(
x = f32(rng.randn(2, 3, 16) + 0.5); s = f32(rng.randn(2, 3, 16)); g = f32(rng.randn(16))
bias = f32(rng.randn(16))
for n, v in [('x', x), ('s', s), ('g', g), ('bias', bias)]: save(n, v)
S = D(x) + D(s) + D(bias)
save('y', f32(rms_norm(S, D(g), eps32(1e-6)))); save('sum', f32(S))
save('inv', f32(1 / np.sqrt((S * S).mean(-1, keepdims=True) + eps32(1e-6))))
)",
               {"x", "s", "g", "bias"},
               {"y", "inv", "sum"}});
  c.back().ort_min_minor = 30;
  c.push_back({"SimplifiedLayerNormalizationWithInvStdVar",
               header + R"(
    g (float[2,3,16] x, float[16] g) => (float[2,3,16] y, float[2,3,1] inv) {
      y, inv = SimplifiedLayerNormalization<axis = -1, epsilon = 0.00001>(x, g)
    })",
               R"(
x = f32(rng.randn(2, 3, 16) * 3); g = f32(rng.randn(16)); save('x', x); save('g', g)
X = D(x); e = eps32(1e-5)
save('y', f32(rms_norm(X, D(g), e))); save('inv', f32(1 / np.sqrt((X * X).mean(-1, keepdims=True) + e)))
)",
               {"x", "g"},
               {"y", "inv"}});
  c.push_back({"EmbedLayerNormalizationWithSegmentsAndMask",
               header + R"(
    g (int32[2,5] ids, int32[2,5] seg, float[10,8] we, float[6,8] pe, float[2,8] se, float[8] g,
       float[8] b, int32[2,5] mask) => (float[2,5,8] y, int32[2] mi, float[2,5,8] sum) {
      y, mi, sum = com.microsoft.EmbedLayerNormalization<epsilon = 0.00001>(ids, seg, we, pe, se, g, b, mask)
    })",
               R"(
ids = rng.randint(0, 10, (2, 5)).astype(np.int32); seg = rng.randint(0, 2, (2, 5)).astype(np.int32)
we = f32(rng.randn(10, 8)); pe = f32(rng.randn(6, 8)); se = f32(rng.randn(2, 8))
g = f32(rng.randn(8)); b = f32(rng.randn(8))
mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=np.int32)
for n, v in [('ids', ids), ('seg', seg), ('we', we), ('pe', pe), ('se', se), ('g', g), ('b', b), ('mask', mask)]: save(n, v)
S = D(we)[ids] + D(pe)[np.arange(5)][None] + D(se)[seg]
save('y', f32(layer_norm(S, D(g), D(b), eps32(1e-5)))); save('sum', f32(S))
save('mi', (mask == 1).sum(1).astype(np.int32))
)",
               {"ids", "seg", "we", "pe", "se", "g", "b", "mask"},
               {"y", "mi", "sum"}});
  c.push_back({"FusedMatMulTransposesAndAlpha",
               header + R"(
    g (float[2,3,4] a, float[2,5,4] b, float[4,3] a2, float[4,5] b2) => (float[2,3,5] y, float[3,5] z) {
      y = com.microsoft.FusedMatMul<alpha = 0.5, transB = 1>(a, b)
      z = com.microsoft.FusedMatMul<transA = 1>(a2, b2)
    })",
               R"(
a = f32(rng.randn(2, 3, 4)); b = f32(rng.randn(2, 5, 4)); a2 = f32(rng.randn(4, 3)); b2 = f32(rng.randn(4, 5))
for n, v in [('a', a), ('b', b), ('a2', a2), ('b2', b2)]: save(n, v)
save('y', f32(0.5 * D(a) @ D(b).transpose(0, 2, 1))); save('z', f32(D(a2).T @ D(b2)))
)",
               {"a", "b", "a2", "b2"},
               {"y", "z"}});
  c.push_back({"FusedMatMulTransBatch",
               header + R"(
    g (float[3,2,4] a, float[2,4,5] b) => (float[2,3,5] y) {
      y = com.microsoft.FusedMatMul<transBatchA = 1>(a, b)
    })",
               R"(
a = f32(rng.randn(3, 2, 4)); b = f32(rng.randn(2, 4, 5)); save('a', a); save('b', b)
save('y', f32(D(a).transpose(1, 0, 2) @ D(b)))
)",
               {"a", "b"},
               {"y"}});
  c.push_back({"MatMulNBits4BitWithZeroPoints",
               header + R"(
    g (float[2,3,32] a, uint8[6,2,8] q, float[12] s, uint8[6] zp) => (float[2,3,6] y) {
      y = com.microsoft.MatMulNBits<K = 32, N = 6, bits = 4, block_size = 16>(a, q, s, zp)
    })",
               R"(
a = f32(rng.randn(2, 3, 32)); q = rng.randint(0, 256, (6, 2, 8)).astype(np.uint8)
s = f32(rng.rand(12) * 0.2 + 0.01); zp = rng.randint(0, 256, 6).astype(np.uint8)
for n, v in [('a', a), ('q', q), ('s', s), ('zp', zp)]: save(n, v)
W = (D(unpack(q, 4)) - D(unpack(zp.reshape(6, 1), 4))[:, :, None]) * D(s).reshape(6, 2, 1)
save('y', f32(D(a) @ W.reshape(6, 32).T))
)",
               {"a", "q", "s", "zp"},
               {"y"}});
  c.push_back({"MatMulNBits8BitDefaultZeroPointAndBias",
               header + R"(
    g (float[3,40] a, uint8[5,3,16] q, float[5,3] s, float[5] bias) => (float[3,5] y) {
      y = com.microsoft.MatMulNBits<K = 40, N = 5, bits = 8, block_size = 16>(a, q, s, , , bias)
    })",
               R"(
a = f32(rng.randn(3, 40)); q = rng.randint(0, 256, (5, 3, 16)).astype(np.uint8)
s = f32(rng.rand(5, 3) * 0.02 + 0.001); bias = f32(rng.randn(5))
for n, v in [('a', a), ('q', q), ('s', s), ('bias', bias)]: save(n, v)
W = ((D(q) - 128) * D(s)[:, :, None]).reshape(5, 48)[:, :40]
save('y', f32(D(a) @ W.T + D(bias)))
)",
               {"a", "q", "s", "bias"},
               {"y"}});
  c.back().ort_min_minor = 30;
  c.push_back({"FusedConvReluWithSum",
               header + R"(
    g (float[1,3,6,6] x, float[4,3,3,3] w, float[4] b, float[1,4,6,6] z) => (float[1,4,6,6] y) {
      y = com.microsoft.FusedConv<activation = "Relu", pads = [1, 1, 1, 1]>(x, w, b, z)
    })",
               R"(
x = f32(rng.randn(1, 3, 6, 6)); w = f32(rng.randn(4, 3, 3, 3) * 0.3); b = f32(rng.randn(4)); z = f32(rng.randn(1, 4, 6, 6))
for n, v in [('x', x), ('w', w), ('b', b), ('z', z)]: save(n, v)
save('y', f32(np.maximum(conv2d(D(x), D(w), D(b), 1) + D(z), 0)))
)",
               {"x", "w", "b", "z"},
               {"y"}});
  c.push_back({"FusedConvEveryActivation",
               header + R"(
    g (float[2,2,5,5] x, float[3,2,3,3] w, float[3] b)
      => (float[2,3,3,3] y, float[2,3,3,3] c, float[2,3,3,3] t, float[2,3,3,3] sg, float[2,3,3,3] hs) {
      y = com.microsoft.FusedConv<activation = "LeakyRelu", activation_params = [0.125]>(x, w, b)
      c = com.microsoft.FusedConv<activation = "Clip", activation_params = [-0.5, 0.75]>(x, w, b)
      t = com.microsoft.FusedConv<activation = "Tanh">(x, w, b)
      sg = com.microsoft.FusedConv<activation = "Sigmoid">(x, w)
      hs = com.microsoft.FusedConv<activation = "HardSigmoid", activation_params = [0.25, 0.5]>(x, w, b)
    })",
               R"(
x = f32(rng.randn(2, 2, 5, 5)); w = f32(rng.randn(3, 2, 3, 3) * 0.3); b = f32(rng.randn(3))
for n, v in [('x', x), ('w', w), ('b', b)]: save(n, v)
C = conv2d(D(x), D(w), D(b), 0)
save('y', f32(np.where(C < 0, 0.125 * C, C))); save('c', f32(np.clip(C, -0.5, 0.75)))
save('t', f32(np.tanh(C))); save('sg', f32(1 / (1 + np.exp(-conv2d(D(x), D(w), np.zeros(3), 0)))))
save('hs', f32(np.clip(0.25 * C + 0.5, 0, 1)))
)",
               {"x", "w", "b"},
               {"y", "c", "t", "sg", "hs"}});
  c.push_back({"AttentionWithBiasAndRawMask",
               header + R"(
    g (float[2,4,8] x, float[8,24] w, float[24] b, int32[2,4] mask) => (float[2,4,8] y) {
      y = com.microsoft.Attention<num_heads = 2>(x, w, b, mask)
    })",
               R"(
x = f32(rng.randn(2, 4, 8)); w = f32(rng.randn(8, 24) * 0.5); b = f32(rng.randn(24) * 0.1)
mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=np.int32)
for n, v in [('x', x), ('w', w), ('b', b), ('mask', mask)]: save(n, v)
P = D(x) @ D(w) + D(b); q, k, v = heads(P[..., :8], 2), heads(P[..., 8:16], 2), heads(P[..., 16:], 2)
bias = np.where(mask[:, None, None, :] == 0, eps32(-10000.0), 0.0)
save('y', f32(merge(attend(q, k, v, 1 / np.sqrt(4), bias))))
)",
               {"x", "w", "b", "mask"},
               {"y"}});
  c.push_back({"AttentionUnidirectionalWithPast",
               header + R"(
    g (float[2,3,8] x, float[8,24] w, float[24] b, float[2,2,2,2,4] past)
      => (float[2,3,8] y, float[2,2,2,5,4] present) {
      y, present = com.microsoft.Attention<num_heads = 2, unidirectional = 1>(x, w, b, , past)
    })",
               R"(
x = f32(rng.randn(2, 3, 8)); w = f32(rng.randn(8, 24) * 0.5); b = f32(rng.randn(24) * 0.1)
past = f32(rng.randn(2, 2, 2, 2, 4))
for n, v in [('x', x), ('w', w), ('b', b), ('past', past)]: save(n, v)
P = D(x) @ D(w) + D(b); q, k, v = heads(P[..., :8], 2), heads(P[..., 8:16], 2), heads(P[..., 16:], 2)
k = np.concatenate([D(past[0]), k], 2); v = np.concatenate([D(past[1]), v], 2)
s, t = np.arange(3)[:, None], np.arange(5)[None, :]
bias = np.where(t > s + 2, eps32(-10000.0), 0.0)
save('y', f32(merge(attend(q, k, v, 1 / np.sqrt(4), bias)))); save('present', f32(np.stack([k, v])))
)",
               {"x", "w", "b", "past"},
               {"y", "present"}});
  c.push_back({"MultiHeadAttentionCrossWithBiasAndPaddingMask",
               header + R"(
    g (float[2,3,8] q, float[2,5,8] k, float[2,5,8] v, float[24] b, int32[2,5] mask)
      => (float[2,3,8] y) {
      y = com.microsoft.MultiHeadAttention<num_heads = 2>(q, k, v, b, mask)
    })",
               R"(
q = f32(rng.randn(2, 3, 8)); k = f32(rng.randn(2, 5, 8)); v = f32(rng.randn(2, 5, 8)); b = f32(rng.randn(24) * 0.1)
mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], dtype=np.int32)
for n, a in [('q', q), ('k', k), ('v', v), ('b', b), ('mask', mask)]: save(n, a)
Q, K, V = heads(D(q) + D(b[:8]), 2), heads(D(k) + D(b[8:16]), 2), heads(D(v) + D(b[16:]), 2)
bias = np.where(mask[:, None, None, :] == 0, eps32(-10000.0), 0.0)
save('y', f32(merge(attend(Q, K, V, 1 / np.sqrt(4), bias))))
)",
               {"q", "k", "v", "b", "mask"},
               {"y"}});
  c.back().ort_min_minor = 30;
  c.push_back({"MultiHeadAttentionWithPastAndAttentionBias",
               header + R"(
    g (float[2,2,8] q, float[2,2,8] k, float[2,2,8] v, float[1,2,2,5] ab, float[2,2,3,4] pk,
       float[2,2,3,4] pv) => (float[2,2,8] y, float[2,2,5,4] ok, float[2,2,5,4] ov) {
      y, ok, ov = com.microsoft.MultiHeadAttention<num_heads = 2, scale = 0.25>(q, k, v, , , ab, pk, pv)
    })",
               R"(
q = f32(rng.randn(2, 2, 8)); k = f32(rng.randn(2, 2, 8)); v = f32(rng.randn(2, 2, 8))
ab = f32(rng.randn(1, 2, 2, 5)); pk = f32(rng.randn(2, 2, 3, 4)); pv = f32(rng.randn(2, 2, 3, 4))
for n, a in [('q', q), ('k', k), ('v', v), ('ab', ab), ('pk', pk), ('pv', pv)]: save(n, a)
K = np.concatenate([D(pk), heads(D(k), 2)], 2); V = np.concatenate([D(pv), heads(D(v), 2)], 2)
save('y', f32(merge(attend(heads(D(q), 2), K, V, 0.25, D(ab))))); save('ok', f32(K)); save('ov', f32(V))
)",
               {"q", "k", "v", "ab", "pk", "pv"},
               {"y", "ok", "ov"}});
  c.back().ort_min_minor = 30;
  c.push_back({"RotaryEmbeddingHalvesAndInterleaved",
               header + R"(
    g (float[2,3,16] x, int64[2,3] pos, float[10,4] cos, float[10,4] sin)
      => (float[2,3,16] y, float[2,3,16] z) {
      y = com.microsoft.RotaryEmbedding<num_heads = 2>(x, pos, cos, sin)
      z = com.microsoft.RotaryEmbedding<num_heads = 2, interleaved = 1>(x, pos, cos, sin)
    })",
               R"(
x = f32(rng.randn(2, 3, 16)); pos = np.array([[0, 1, 2], [4, 6, 9]], dtype=np.int64); cos, sin = rope_cache(10, 8)
for n, a in [('x', x), ('pos', pos), ('cos', cos), ('sin', sin)]: save(n, a)
X = D(x).reshape(2, 3, 2, 8); C = D(cos)[pos][:, :, None]; S = D(sin)[pos][:, :, None]
save('y', f32(rope(X, C, S, False).reshape(2, 3, 16))); save('z', f32(rope(X, C, S, True).reshape(2, 3, 16)))
)",
               {"x", "pos", "cos", "sin"},
               {"y", "z"}});
  // ONNX Runtime's CPU kernel wants head sizes that are multiples of 8 (16 with do_rotary).
  c.push_back({"GroupQueryAttentionPrompt",
               header + R"(
    g (float[1,4,32] q, float[1,4,16] k, float[1,4,16] v, int32[1] lens, int32 total)
      => (float[1,4,32] y, float[1,2,4,8] pk, float[1,2,4,8] pv) {
      y, pk, pv = com.microsoft.GroupQueryAttention<num_heads = 4, kv_num_heads = 2>(q, k, v, , , lens, total)
    })",
               R"(
q = f32(rng.randn(1, 4, 32)); k = f32(rng.randn(1, 4, 16)); v = f32(rng.randn(1, 4, 16))
lens = np.array([3], dtype=np.int32); total = np.array(4, dtype=np.int32)
for n, a in [('q', q), ('k', k), ('v', v), ('lens', lens), ('total', total)]: save(n, a)
K, V = heads(D(k), 2), heads(D(v), 2)
s, t = np.arange(4)[:, None], np.arange(4)[None, :]
bias = np.where(t > s, -np.inf, 0.0)
Y = attend(heads(D(q), 4), np.repeat(K, 2, 1), np.repeat(V, 2, 1), 1 / np.sqrt(8), bias)
save('y', f32(merge(Y))); save('pk', f32(K)); save('pv', f32(V))
)",
               {"q", "k", "v", "lens", "total"},
               {"y", "pk", "pv"}});
  c.back().ort_min_minor = 30;
  c.push_back({"GroupQueryAttentionDecodeWithRotary",
               header + R"(
    g (float[2,1,64] q, float[2,1,32] k, float[2,1,32] v, float[2,2,3,16] pk, float[2,2,3,16] pv,
       int32[2] lens, int32 total, float[8,8] cos, float[8,8] sin)
      => (float[2,1,64] y, float[2,2,4,16] ok, float[2,2,4,16] ov) {
      y, ok, ov = com.microsoft.GroupQueryAttention<num_heads = 4, kv_num_heads = 2, do_rotary = 1>(q, k, v, pk, pv, lens, total, cos, sin)
    })",
               R"(
q = f32(rng.randn(2, 1, 64)); k = f32(rng.randn(2, 1, 32)); v = f32(rng.randn(2, 1, 32))
pk = f32(rng.randn(2, 2, 3, 16)); pv = f32(rng.randn(2, 2, 3, 16))
lens = np.array([3, 3], dtype=np.int32); total = np.array(4, dtype=np.int32); cos, sin = rope_cache(8, 16)
for n, a in [('q', q), ('k', k), ('v', v), ('pk', pk), ('pv', pv), ('lens', lens), ('total', total), ('cos', cos), ('sin', sin)]: save(n, a)
C, S = D(cos)[3], D(sin)[3]
Q = rope(heads(D(q), 4), C, S, False); Kn = rope(heads(D(k), 2), C, S, False)
K = np.concatenate([D(pk), Kn], 2); V = np.concatenate([D(pv), heads(D(v), 2)], 2)
t = np.arange(4)
bias = 0.0
Y = attend(Q, np.repeat(K, 2, 1), np.repeat(V, 2, 1), 1 / np.sqrt(16), bias)
save('y', f32(merge(Y))); save('ok', f32(K)); save('ov', f32(V))
)",
               {"q", "k", "v", "pk", "pv", "lens", "total", "cos", "sin"},
               {"y", "ok", "ov"}});
  c.back().ort_min_minor = 30;
  c.push_back({"GroupQueryAttentionDecodeWithWindow",
               header + R"(
    g (float[2,1,64] q, float[2,1,32] k, float[2,1,32] v, float[2,2,3,16] pk, float[2,2,3,16] pv,
       int32[2] lens, int32 total, float[8,8] cos, float[8,8] sin)
      => (float[2,1,64] y, float[2,2,4,16] ok, float[2,2,4,16] ov) {
      y, ok, ov = com.microsoft.GroupQueryAttention<num_heads = 4, kv_num_heads = 2,
                                                    local_window_size = 2>(q, k, v, pk, pv, lens, total, cos, sin)
    })",
               R"(
q = f32(rng.randn(2, 1, 64)); k = f32(rng.randn(2, 1, 32)); v = f32(rng.randn(2, 1, 32))
pk = f32(rng.randn(2, 2, 3, 16)); pv = f32(rng.randn(2, 2, 3, 16))
lens = np.array([3, 3], dtype=np.int32); total = np.array(4, dtype=np.int32); cos, sin = rope_cache(8, 16)
for n, a in [('q', q), ('k', k), ('v', v), ('pk', pk), ('pv', pv), ('lens', lens), ('total', total), ('cos', cos), ('sin', sin)]: save(n, a)
Q = heads(D(q), 4); Kn = heads(D(k), 2)
K = np.concatenate([D(pk), Kn], 2); V = np.concatenate([D(pv), heads(D(v), 2)], 2)
t = np.arange(4)
bias = np.where(t <= 3 - 2, -np.inf, 0.0)  # the last local_window_size keys, the own included
Y = attend(Q, np.repeat(K, 2, 1), np.repeat(V, 2, 1), 1 / np.sqrt(16), bias)
save('y', f32(merge(Y))); save('ok', f32(K)); save('ov', f32(V))
)",
               {"q", "k", "v", "pk", "pv", "lens", "total", "cos", "sin"},
               {"y", "ok", "ov"}});
  c.back().ort_min_minor = 30;
  c.push_back({"GroupQueryAttentionSoftcapSmoothSoftmaxAndBias",
               header + R"(
    g (float[1,3,32] q, float[1,3,16] k, float[1,3,16] v, int32[1] lens, int32 total, float[1,4,3,3] ab)
      => (float[1,3,32] y) {
      y, , = com.microsoft.GroupQueryAttention<num_heads = 4, kv_num_heads = 2, softcap = 2.0,
                                               smooth_softmax = 1, scale = 0.5>(q, k, v, , , lens, total, , , , ab)
    })",
               R"(
q = f32(rng.randn(1, 3, 32)); k = f32(rng.randn(1, 3, 16)); v = f32(rng.randn(1, 3, 16))
lens = np.array([2], dtype=np.int32); total = np.array(3, dtype=np.int32); ab = f32(rng.randn(1, 4, 3, 3))
for n, a in [('q', q), ('k', k), ('v', v), ('lens', lens), ('total', total), ('ab', ab)]: save(n, a)
K, V = np.repeat(heads(D(k), 2), 2, 1), np.repeat(heads(D(v), 2), 2, 1)
sc = 0.5 * heads(D(q), 4) @ K.transpose(0, 1, 3, 2)
sc = 2.0 * np.tanh(sc / 2.0) + D(ab)
s, t = np.arange(3)[:, None], np.arange(3)[None, :]
sc = np.where(t > s, -np.inf, sc)
m = np.maximum(sc.max(-1, keepdims=True), 0)  # smooth softmax: one more logit, 0
e = np.exp(sc - m); p = e / (e.sum(-1, keepdims=True) + np.exp(-m))
save('y', f32(merge(p @ V)))
)",
               {"q", "k", "v", "lens", "total", "ab"},
               {"y"}});
  c.back().ort_min_minor = 30;
  c.push_back({"EmbedLayerNormalizationWithPositionIdsNoSegmentsNoMask",
               header + R"(
    g (int32[2,4] ids, float[10,8] we, float[6,8] pe, float[8] g, float[8] b, int32[1,4] pos)
      => (float[2,4,8] y, int32[2] mi) {
      y, mi = com.microsoft.EmbedLayerNormalization(ids, , we, pe, , g, b, , pos)
    })",
               R"(
ids = rng.randint(0, 10, (2, 4)).astype(np.int32); we = f32(rng.randn(10, 8)); pe = f32(rng.randn(6, 8))
g = f32(rng.randn(8)); b = f32(rng.randn(8)); pos = np.array([[5, 3, 0, 2]], dtype=np.int32)
for n, v in [('ids', ids), ('we', we), ('pe', pe), ('g', g), ('b', b), ('pos', pos)]: save(n, v)
S = D(we)[ids] + D(pe)[pos[0]][None]
save('y', f32(layer_norm(S, D(g), D(b), eps32(1e-12)))); save('mi', np.zeros(2, np.int32))  # no mask
)",
               {"ids", "we", "pe", "g", "b", "pos"},
               {"y", "mi"}});
  c.push_back({"SkipLayerNormalizationSkipSharedByTheBatch",
               header + R"(
    g (float[2,3,16] x, float[1,3,16] s, float[16] g, float[16] b) => (float[2,3,16] y) {
      y = com.microsoft.SkipLayerNormalization<epsilon = 0.00001>(x, s, g, b)
    })",
               R"(
x = f32(rng.randn(2, 3, 16)); s = f32(rng.randn(1, 3, 16)); g = f32(rng.randn(16)); b = f32(rng.randn(16))
for n, v in [('x', x), ('s', s), ('g', g), ('b', b)]: save(n, v)
save('y', f32(layer_norm(D(x) + D(s), D(g), D(b), eps32(1e-5))))
)",
               {"x", "s", "g", "b"},
               {"y"}});
  c.push_back({"MatMulNBits2BitWithFloatZeroPoints",
               header + R"(
    g (float[4,64] a, uint8[3,2,8] q, float[3,2] s, float[6] zp) => (float[4,3] y) {
      y = com.microsoft.MatMulNBits<K = 64, N = 3, bits = 2, block_size = 32>(a, q, s, zp)
    })",
               R"(
a = f32(rng.randn(4, 64)); q = rng.randint(0, 256, (3, 2, 8)).astype(np.uint8)
s = f32(rng.rand(3, 2) * 0.5 + 0.1); zp = f32(rng.rand(6) * 3)
for n, v in [('a', a), ('q', q), ('s', s), ('zp', zp)]: save(n, v)
W = (D(unpack(q, 2)) - D(zp).reshape(3, 2, 1)) * D(s)[:, :, None]
save('y', f32(D(a) @ W.reshape(3, 64).T))
)",
               {"a", "q", "s", "zp"},
               {"y"}});
  c.back().ort_min_minor = 30;
  c.push_back({"RotaryEmbedding4DWithStartPositionAndPartialRotation",
               header + R"(
    g (float[1,2,3,16] x, int64[1] pos, float[12,4] cos, float[12,4] sin) => (float[1,2,3,16] y) {
      y = com.microsoft.RotaryEmbedding<rotary_embedding_dim = 8, num_heads = 2>(x, pos, cos, sin)
    })",
               R"(
x = f32(rng.randn(1, 2, 3, 16)); pos = np.array([5], dtype=np.int64); cos, sin = rope_cache(12, 8)
for n, a in [('x', x), ('pos', pos), ('cos', cos), ('sin', sin)]: save(n, a)
p = 5 + np.arange(3)
save('y', f32(rope(D(x), D(cos)[p][None, None], D(sin)[p][None, None], False)))
)",
               {"x", "pos", "cos", "sin"},
               {"y"}});
  c.push_back({"AttentionRightPaddingLengthsAndQkvSizes",
               header + R"(
    g (float[2,4,8] x, float[8,28] w, float[28] b, int32[2] lens) => (float[2,4,12] y) {
      y = com.microsoft.Attention<num_heads = 2, qkv_hidden_sizes = [8, 8, 12]>(x, w, b, lens)
    })",
               R"(
x = f32(rng.randn(2, 4, 8)); w = f32(rng.randn(8, 28) * 0.5); b = f32(rng.randn(28) * 0.1)
lens = np.array([4, 2], dtype=np.int32)
for n, v in [('x', x), ('w', w), ('b', b), ('lens', lens)]: save(n, v)
P = D(x) @ D(w) + D(b); q, k, v = heads(P[..., :8], 2), heads(P[..., 8:16], 2), heads(P[..., 16:], 2)
t = np.arange(4)
bias = np.where(t[None, None, None, :] >= lens[:, None, None, None], eps32(-10000.0), 0.0)
save('y', f32(merge(attend(q, k, v, 1 / np.sqrt(4), bias))))
)",
               {"x", "w", "b", "lens"},
               {"y"}});
  // float16: the reference widens to double and rounds once to float16; ONNX Runtime works in
  // float16 or float32 steps, so it is compared within float16's precision.
  c.push_back({"Float16GeluSkipLayerNormAndMatMulNBits",
               header + R"(
    g (float16[2,3,32] x, float16[2,3,32] s, float16[32] gm, float16[32] bt, uint8[8,2,8] q, float16[16] sc)
      => (float16[2,3,32] y, float16[2,3,32] n, float16[2,3,8] m) {
      y = com.microsoft.Gelu(x)
      n = com.microsoft.SkipLayerNormalization<epsilon = 0.00001>(x, s, gm, bt)
      m = com.microsoft.MatMulNBits<K = 32, N = 8, bits = 4, block_size = 16>(x, q, sc)
    })",
               R"(
h = lambda a: np.asarray(a).astype(np.float16)
x = h(rng.randn(2, 3, 32)); s = h(rng.randn(2, 3, 32)); gm = h(rng.randn(32)); bt = h(rng.randn(32))
q = rng.randint(0, 256, (8, 2, 8)).astype(np.uint8); sc = h(rng.rand(16) * 0.1 + 0.01)
for n_, v in [('x', x), ('s', s), ('gm', gm), ('bt', bt), ('q', q), ('sc', sc)]: save(n_, v)
save('y', h(gelu(D(x)))); save('n', h(layer_norm(D(x) + D(s), D(gm), D(bt), eps32(1e-5))))
W = (D(unpack(q, 4)) - 8) * D(sc).reshape(8, 2, 1)
save('m', h(D(x) @ W.reshape(8, 32).T))
)",
               {"x", "s", "gm", "bt", "q", "sc"},
               {"y", "n", "m"},
               "",
               1e-2,
               1e-2});
  c.push_back({"AttentionPerQueryMaskAndAttentionBias",
               header + R"(
    g (float[1,3,8] x, float[8,24] w, float[24] b, int32[1,3,3] mask, float[1,2,3,3] ab) => (float[1,3,8] y) {
      y = com.microsoft.Attention<num_heads = 2, mask_filter_value = -1000.0, scale = 0.3>(x, w, b, mask, , ab)
    })",
               R"(
x = f32(rng.randn(1, 3, 8)); w = f32(rng.randn(8, 24) * 0.5); ab = f32(rng.randn(1, 2, 3, 3)); b = f32(rng.randn(24) * 0.1)
mask = np.array([[[1, 0, 1], [1, 1, 0], [0, 1, 1]]], dtype=np.int32)
for n, v in [('x', x), ('w', w), ('b', b), ('mask', mask), ('ab', ab)]: save(n, v)
P = D(x) @ D(w) + D(b); q, k, v = heads(P[..., :8], 2), heads(P[..., 8:16], 2), heads(P[..., 16:], 2)
bias = np.where(mask[:, None] == 0, -1000.0, 0.0) + D(ab)
save('y', f32(merge(attend(q, k, v, eps32(0.3), bias))))
)",
               {"x", "w", "b", "mask", "ab"},
               {"y"}});
  c.push_back({"MultiHeadAttentionSplitKeyValueUnidirectional",
               header + R"(
    g (float[2,4,8] q, float[2,2,4,4] k, float[2,2,4,4] v) => (float[2,4,8] y) {
      y = com.microsoft.MultiHeadAttention<num_heads = 2, unidirectional = 1>(q, k, v)
    })",
               R"(
q = f32(rng.randn(2, 4, 8)); k = f32(rng.randn(2, 2, 4, 4)); v = f32(rng.randn(2, 2, 4, 4))
for n, a in [('q', q), ('k', k), ('v', v)]: save(n, a)
s, t = np.arange(4)[:, None], np.arange(4)[None, :]
bias = np.where(t > s, eps32(-10000.0), 0.0)
save('y', f32(merge(attend(heads(D(q), 2), D(k), D(v), 0.5, bias))))
)",
               {"q", "k", "v"},
               {"y"}});
  // Packed QKV: query [B, S, N, 3, H] holds Q, K, V per head; packed KV: key [B, L, N, 2, H].
  c.push_back({"MultiHeadAttentionPackedQkvWithBias",
               header + R"(
    g (float[2,3,2,3,4] qkv, float[24] b) => (float[2,3,8] y) {
      y = com.microsoft.MultiHeadAttention<num_heads = 2>(qkv, , , b)
    })",
               R"(
qkv = f32(rng.randn(2, 3, 2, 3, 4)); b = f32(rng.randn(24) * 0.1)
for n, a in [('qkv', qkv), ('b', b)]: save(n, a)
q, k, v = [D(qkv[:, :, :, i, :]).reshape(2, 3, 8) for i in range(3)]
Q, K, V = heads(q + D(b[:8]), 2), heads(k + D(b[8:16]), 2), heads(v + D(b[16:]), 2)
save('y', f32(merge(attend(Q, K, V, 1 / np.sqrt(4), 0.0))))
)",
               {"qkv", "b"},
               {"y"}});
  c.back().ort_cpu_error = "Packed QKV of shape (B, L, N, 3, H) not implemented for CPU";
  c.push_back({"MultiHeadAttentionPackedKvUnidirectional",
               header + R"(
    g (float[2,4,8] q, float[2,4,2,2,4] kv) => (float[2,4,8] y) {
      y = com.microsoft.MultiHeadAttention<num_heads = 2, unidirectional = 1>(q, kv)
    })",
               R"(
q = f32(rng.randn(2, 4, 8)); kv = f32(rng.randn(2, 4, 2, 2, 4))
for n, a in [('q', q), ('kv', kv)]: save(n, a)
k, v = [D(kv[:, :, :, i, :]).reshape(2, 4, 8) for i in range(2)]
s, t = np.arange(4)[:, None], np.arange(4)[None, :]
bias = np.where(t > s, eps32(-10000.0), 0.0)
save('y', f32(merge(attend(heads(D(q), 2), heads(k, 2), heads(v, 2), 0.5, bias))))
)",
               {"q", "kv"},
               {"y"}});
  c.back().ort_cpu_error = "Packed KV not implemented for CPU";
  c.push_back({"AttentionWithoutBias",
               header + R"(
    g (float[1,3,8] x, float[8,24] w) => (float[1,3,8] y) {
      y = com.microsoft.Attention<num_heads = 2>(x, w)
    })",
               R"(
x = f32(rng.randn(1, 3, 8)); w = f32(rng.randn(8, 24) * 0.5); save('x', x); save('w', w)
P = D(x) @ D(w); q, k, v = heads(P[..., :8], 2), heads(P[..., 8:16], 2), heads(P[..., 16:], 2)
save('y', f32(merge(attend(q, k, v, 0.5, 0.0))))
)",
               {"x", "w"},
               {"y"}});
  c.back().ort_unsafe =
      "ONNX Runtime 1.30's CPU Attention crashes (segmentation fault) without its bias input";
  return c;
}

}  // namespace parity::testing
