// The ops of opsets 23 and 24: Attention (4-D and 3-D, grouped-query heads, bool and float
// masks shorter than the keys, is_causal, softcap, past key/value and the present outputs,
// every qk_matmul_output_mode, scale, opset 24's nonpad_kv_seqlen), RMSNormalization,
// RotaryEmbedding (halves and interleaved, partial rotary_embedding_dim, position_ids, 3-D),
// TensorScatter (linear and circular), Swish, and TopK on bfloat16. Expected values are NumPy
// restatements of the specification in float64, computed at test time. Debian's onnx 1.12
// does not know these ops, so the models are written in ONNX text (which it parses without
// checking op names).
#include <gtest/gtest.h>

#include "core/thread_pool.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

constexpr double kRtol = 1e-6, kAtol = 1e-6;

// Scaled dot-product attention as ONNX's reference implementation computes it: scale * Q K^T,
// softcap, plus the mask (bool: -inf where false; padded with -inf to the key count) and the
// causal bias (key j > query i + offset masked; offset = the past length, or
// nonpad_kv_seqlen - q_len, or 0), softmax over the keys, times V.
constexpr const char* kNumpyAttention = R"(
def attention(Q, K, V, mask=None, past_k=None, past_v=None, scale=None, causal=False,
              qh=None, kvh=None, softcap=0.0, mode=0, nonpad=None):
    Q, K, V = [a.astype(np.float64) for a in (Q, K, V)]
    three = Q.ndim == 3
    if three:
        split = lambda a, h: a.reshape(a.shape[0], a.shape[1], h, -1).transpose(0, 2, 1, 3)
        Q, K, V = split(Q, qh), split(K, kvh), split(V, kvh)
    if past_k is not None:
        K = np.concatenate([past_k.astype(np.float64), K], axis=2)
        V = np.concatenate([past_v.astype(np.float64), V], axis=2)
    present_k, present_v = K, V
    past = 0 if past_k is None else past_k.shape[2]
    group = Q.shape[1] // K.shape[1]
    K, V = np.repeat(K, group, axis=1), np.repeat(V, group, axis=1)
    if scale is None:
        scale = 1 / np.sqrt(Q.shape[3])
    qk = scale * (Q @ K.transpose(0, 1, 3, 2))
    sq, total = qk.shape[2], qk.shape[3]
    bias = np.zeros(qk.shape)
    if mask is not None:
        m = np.where(mask, 0.0, -np.inf) if mask.dtype == bool else mask.astype(np.float64)
        m = np.concatenate([m, np.full(m.shape[:-1] + (total - m.shape[-1],), -np.inf)], axis=-1)
        bias = bias + m
    if causal:
        offset = np.full(qk.shape[0], past) if nonpad is None else nonpad - sq
        j, i = np.arange(total)[None, None, :], np.arange(sq)[None, :, None]
        bias = bias + np.where(j <= i + offset[:, None, None], 0.0, -np.inf)[:, None, :, :]
    if nonpad is not None:
        bias = bias + np.where(np.arange(total)[None, :] < nonpad[:, None], 0.0, -np.inf)[:, None, None, :]
    capped = softcap * np.tanh(qk / softcap) if softcap > 0 else qk
    biased = capped + bias
    e = np.exp(biased - biased.max(axis=-1, keepdims=True))
    p = e / e.sum(axis=-1, keepdims=True)
    y = p @ V
    if three:
        y = y.transpose(0, 2, 1, 3).reshape(y.shape[0], y.shape[2], -1)
    return y, present_k, present_v, [qk, capped, biased, p][mode]
)";

TEST(Opset23Kernels, Attention4dWithFloatMaskSoftcapAndEveryQkOutputMode) {
  auto np = numpy_arrays(std::string(kNumpyAttention) + R"(
q = rng.randn(2, 3, 4, 8).astype(np.float32); k = rng.randn(2, 3, 6, 8).astype(np.float32)
v = rng.randn(2, 3, 6, 5).astype(np.float32); m = rng.randn(4, 5).astype(np.float32)
for a, n in ((q, 'q'), (k, 'k'), (v, 'v'), (m, 'm')): save(n, a)
for mode in range(4):
    y, _, _, qk = attention(q, k, v, mask=m, softcap=2.5, mode=mode)
    save('y', y.astype(np.float32)); save('qk%d' % mode, qk.astype(np.float32))
y, _, _, _ = attention(q, k, v, scale=float(np.float32(0.3)))
save('ys', y.astype(np.float32))
)");
  for (int mode = 0; mode < 4; ++mode) {
    TensorMap out = run_text_model(fmt::format(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float[2,3,4,8] q, float[2,3,6,8] k, float[2,3,6,5] v, float[4,5] m)
        => (float y, float qk, float ys) {{
        y, , , qk = Attention<softcap = 2.5, qk_matmul_output_mode = {}>(q, k, v, m)
        ys = Attention<scale = 0.3>(q, k, v)
      }}
    )",
                                               mode),
                                   feed_of(np, {"q", "k", "v", "m"}));
    EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), kRtol, kAtol)) << mode;
    EXPECT_TRUE(tensors_close(out.at("qk"), np.at(fmt::format("qk{}", mode)), kRtol, kAtol))
        << "qk_matmul_output_mode " << mode;
    EXPECT_TRUE(tensors_close(out.at("ys"), np.at("ys"), kRtol, kAtol));
  }
}

TEST(Opset23Kernels, Attention3dGroupedQueryCausalBoolMaskAndPastKeyValue) {
  auto np = numpy_arrays(std::string(kNumpyAttention) + R"(
q = rng.randn(2, 3, 4 * 6).astype(np.float32); k = rng.randn(2, 3, 2 * 6).astype(np.float32)
v = rng.randn(2, 3, 2 * 5).astype(np.float32)
pk = rng.randn(2, 2, 4, 6).astype(np.float32); pv = rng.randn(2, 2, 4, 5).astype(np.float32)
mask = rng.rand(2, 1, 3, 6) > 0.3
mask[..., 0] = True  # no row is masked everywhere
for a, n in ((q, 'q'), (k, 'k'), (v, 'v'), (pk, 'pk'), (pv, 'pv'), (mask, 'mask')): save(n, a)
y, prk, prv, _ = attention(q, k, v, mask=mask, past_k=pk, past_v=pv, causal=True, qh=4, kvh=2)
save('y', y.astype(np.float32)); save('prk', prk.astype(np.float32)); save('prv', prv.astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[2,3,24] q, float[2,3,12] k, float[2,3,10] v, bool[2,1,3,6] mask,
       float[2,2,4,6] pk, float[2,2,4,5] pv) => (float y, float prk, float prv) {
      y, prk, prv = Attention<is_causal = 1, q_num_heads = 4, kv_num_heads = 2>(q, k, v, mask, pk, pv)
    }
  )",
                                 feed_of(np, {"q", "k", "v", "mask", "pk", "pv"}));
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), kRtol, kAtol));
  EXPECT_TRUE(tensors_identical(out.at("prk"), np.at("prk")));
  EXPECT_TRUE(tensors_identical(out.at("prv"), np.at("prv")));
}

TEST(Opset23Kernels, AttentionNonpadKvSeqlenAtOpset24AndClearErrors) {
  auto np = numpy_arrays(std::string(kNumpyAttention) + R"(
q = rng.randn(2, 2, 3, 4).astype(np.float32); k = rng.randn(2, 2, 5, 4).astype(np.float32)
v = rng.randn(2, 2, 5, 4).astype(np.float32); n = np.array([3, 5], dtype=np.int64)
for a, nm in ((q, 'q'), (k, 'k'), (v, 'v'), (n, 'n')): save(nm, a)
save('y', attention(q, k, v, nonpad=n)[0].astype(np.float32))
save('yc', attention(q, k, v, nonpad=n, causal=True)[0].astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[2,2,3,4] q, float[2,2,5,4] k, float[2,2,5,4] v, int64[2] n) => (float y, float yc) {
      y = Attention(q, k, v, , , , n)
      yc = Attention<is_causal = 1>(q, k, v, , , , n)
    }
  )",
                                 feed_of(np, {"q", "k", "v", "n"}));
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), kRtol, kAtol));
  EXPECT_TRUE(tensors_close(out.at("yc"), np.at("yc"), kRtol, kAtol));

  std::string e = error_of([&] {
    run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float[2,2,3,4] q, float[2,2,5,4] k, float[2,2,5,4] v) => (float y) {
        y = Attention<qk_matmul_output_mode = 7>(q, k, v)
      }
    )",
                   feed_of(np, {"q", "k", "v"}));
  });
  EXPECT_NE(e.find("'qk_matmul_output_mode' is 7"), std::string::npos) << e;
  e = error_of([&] {
    run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float[2,2,3,4] q, float[2,2,5,4] k, float[2,2,5,4] v) => (float y) {
        y = Attention<q_num_heads = 3, kv_num_heads = 2>(q, k, v)
      }
    )",
                   feed_of(np, {"q", "k", "v"}));
  });
  EXPECT_TRUE(e.empty()) << "4-D inputs take their head counts from the shapes: " << e;
  auto q3 = numpy_arrays(
      "save('q', np.ones((1, 2, 6), np.float32)); save('k', np.ones((1, 2, 4), np.float32))");
  e = error_of([&] {
    run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float[1,2,6] q, float[1,2,4] k) => (float y) {
        y = Attention<q_num_heads = 3, kv_num_heads = 2>(q, k, k)
      }
    )",
                   feed_of(q3, {"q", "k"}));
  });
  EXPECT_NE(e.find("multiple of kv_num_heads"), std::string::npos) << e;
}

TEST(Opset23Kernels, RMSNormalizationOverTheTrailingAxes) {
  auto np = numpy_arrays(R"(
x = (rng.randn(3, 4, 5) * 2 + 1).astype(np.float32); s = rng.randn(4, 5).astype(np.float32)
s1 = rng.randn(5).astype(np.float32)
save('x', x); save('s', s); save('s1', s1)
X = x.astype(np.float64)
eps = float(np.float32(1e-3))
save('y', (X / np.sqrt((X ** 2).mean(axis=(1, 2), keepdims=True) + eps) * s).astype(np.float32))
save('y1', (X / np.sqrt((X ** 2).mean(axis=-1, keepdims=True) + float(np.float32(1e-5))) * s1).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[3,4,5] x, float[4,5] s, float[5] s1) => (float y, float y1) {
      y = RMSNormalization<axis = 1, epsilon = 0.001>(x, s)
      y1 = RMSNormalization(x, s1)
    }
  )",
                                 feed_of(np, {"x", "s", "s1"}));
  EXPECT_TRUE(tensors_close(out.at("y"), np.at("y"), kRtol, kAtol));
  EXPECT_TRUE(tensors_close(out.at("y1"), np.at("y1"), kRtol, kAtol));
}

// RotaryEmbedding per the specification: X as (batch, seq, heads, head_size), the first `dim`
// values of each head rotated pairwise (halves, or even/odd when interleaved).
constexpr const char* kNumpyRotary = R"(
def rotary(x, cos, sin, pos=None, interleaved=False, dim=0, heads=0):
    X = x.astype(np.float64)
    four = X.ndim == 4
    X = X.transpose(0, 2, 1, 3) if four else X.reshape(X.shape[0], X.shape[1], heads, -1)
    dim = dim or X.shape[3]
    c, s = cos.astype(np.float64), sin.astype(np.float64)
    if pos is not None:
        c, s = c[pos], s[pos]
    c, s = c[:, :, None, :], s[:, :, None, :]
    r = X[..., :dim].copy()
    i1, i2 = (slice(0, dim, 2), slice(1, dim, 2)) if interleaved else (slice(0, dim // 2), slice(dim // 2, dim))
    x1, x2 = r[..., i1].copy(), r[..., i2].copy()
    r[..., i1] = c * x1 - s * x2
    r[..., i2] = s * x1 + c * x2
    out = np.concatenate([r, X[..., dim:]], axis=-1)
    return out.transpose(0, 2, 1, 3) if four else out.reshape(x.shape)
)";

TEST(Opset23Kernels, RotaryEmbeddingHalvesInterleavedPartialAndPositionIds) {
  auto np = numpy_arrays(std::string(kNumpyRotary) + R"(
x4 = rng.randn(2, 3, 5, 8).astype(np.float32)
x3 = rng.randn(2, 5, 3 * 8).astype(np.float32)
ang = rng.rand(10, 3) * 6
cos_t, sin_t = np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)
pos = rng.randint(0, 10, size=(2, 5)).astype(np.int64)
ang4 = rng.rand(2, 5, 4) * 6
cos_b, sin_b = np.cos(ang4).astype(np.float32), np.sin(ang4).astype(np.float32)
for a, n in ((x4, 'x4'), (x3, 'x3'), (cos_t, 'ct'), (sin_t, 'st'), (pos, 'pos'), (cos_b, 'cb'), (sin_b, 'sb')): save(n, a)
save('y_half', rotary(x4, cos_b, sin_b).astype(np.float32))
save('y_inter', rotary(x4, cos_b, sin_b, interleaved=True).astype(np.float32))
save('y_part', rotary(x3, cos_t, sin_t, pos=pos, interleaved=True, dim=6, heads=3).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 23]>
    g (float[2,3,5,8] x4, float[2,5,24] x3, float[10,3] ct, float[10,3] st, int64[2,5] pos,
       float[2,5,4] cb, float[2,5,4] sb) => (float y_half, float y_inter, float y_part) {
      y_half = RotaryEmbedding(x4, cb, sb)
      y_inter = RotaryEmbedding<interleaved = 1>(x4, cb, sb)
      y_part = RotaryEmbedding<interleaved = 1, rotary_embedding_dim = 6, num_heads = 3>(x3, ct, st, pos)
    }
  )",
                                 feed_of(np, {"x4", "x3", "ct", "st", "pos", "cb", "sb"}));
  for (const char* n : {"y_half", "y_inter", "y_part"})
    EXPECT_TRUE(tensors_close(out.at(n), np.at(n), kRtol, kAtol)) << n;

  std::string e = error_of([&] {
    run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float[2,5,24] x3, float[10,3] ct, float[10,3] st, int64[2,5] pos) => (float y) {
        y = RotaryEmbedding<num_heads = 3, rotary_embedding_dim = 5>(x3, ct, st, pos)
      }
    )",
                   feed_of(np, {"x3", "ct", "st", "pos"}));
  });
  EXPECT_NE(e.find("rotary_embedding_dim is 5; it must be even"), std::string::npos) << e;
}

TEST(Opset24Kernels, TensorScatterLinearAndCircular) {
  auto np = numpy_arrays(R"(
cache = rng.randn(2, 3, 6, 4).astype(np.float32); upd = rng.randn(2, 3, 3, 4).astype(np.float32)
idx = np.array([1, 5], dtype=np.int64); lin = np.array([0, 3], dtype=np.int64)
save('cache', cache); save('upd', upd); save('idx', idx); save('lin', lin)
def scatter(c, u, w, circular):
    out = c.copy()
    for b in range(c.shape[0]):
        for s in range(u.shape[2]):
            p = w[b] + s
            out[b, :, p % c.shape[2] if circular else p] = u[b, :, s]
    return out
save('yl', scatter(cache, upd, lin, False)); save('yc', scatter(cache, upd, idx, True))
save('y0', scatter(cache, upd, np.zeros(2, np.int64), False))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[2,3,6,4] cache, float[2,3,3,4] upd, int64[2] idx, int64[2] lin)
      => (float yl, float yc, float y0) {
      yl = TensorScatter(cache, upd, lin)
      yc = TensorScatter<mode = "circular">(cache, upd, idx)
      y0 = TensorScatter<axis = 2>(cache, upd)
    }
  )",
                                 feed_of(np, {"cache", "upd", "idx", "lin"}));
  for (const char* n : {"yl", "yc", "y0"}) EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;

  std::string e = error_of([&] {
    run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 24]>
      g (float[2,3,6,4] cache, float[2,3,3,4] upd, int64[2] idx) => (float y) {
        y = TensorScatter(cache, upd, idx)
      }
    )",
                   feed_of(np, {"cache", "upd", "idx"}));
  });
  EXPECT_NE(e.find("write_indices[1] is 5"), std::string::npos) << e;
}

TEST(Opset24Kernels, SwishWithAlpha) {
  auto np = numpy_arrays(R"(
x = (rng.randn(4, 7) * 4).astype(np.float32); save('x', x)
X = x.astype(np.float64)
save('y', (X / (1 + np.exp(-X))).astype(np.float32))
a = float(np.float32(1.702))
save('ya', (X / (1 + np.exp(-a * X))).astype(np.float32))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[4,7] x) => (float y, float ya) {
      y = Swish(x)
      ya = Swish<alpha = 1.702>(x)
    }
  )",
                                 feed_of(np, {"x"}));
  EXPECT_TRUE(tensors_identical(out.at("y"), np.at("y")));
  EXPECT_TRUE(tensors_identical(out.at("ya"), np.at("ya")));
}

TEST(Opset24Kernels, TopKOnBfloat16) {
  // Quarter steps in [-8, 8) are exact in bfloat16, so the Casts around TopK lose nothing.
  auto np = numpy_arrays(R"(
x = np.stack([rng.permutation(64) for _ in range(3)]).astype(np.float32) / 4 - 8; save('x', x)
order = np.argsort(-x, axis=1, kind='stable')[:, :5]
save('v', np.take_along_axis(x, order, axis=1)); save('i', order.astype(np.int64))
)");
  TensorMap out = run_text_model(R"(
    <ir_version: 10, opset_import: ["" : 24]>
    g (float[3,64] x) => (float v, int64 i) {
      b = Cast<to = 16>(x)
      k = Constant<value = int64[1] {5}>()
      vb, i = TopK<axis = 1>(b, k)
      v = Cast<to = 1>(vb)
    }
  )",
                                 feed_of(np, {"x"}));
  EXPECT_TRUE(tensors_identical(out.at("v"), np.at("v")));
  EXPECT_TRUE(tensors_identical(out.at("i"), np.at("i")));
}

TEST(Opset23Kernels, SameBitsOnAnyThreadCountAndFloat16Attention) {
  auto np = numpy_arrays(std::string(kNumpyAttention) + R"(
q = rng.randn(4, 8, 64, 16).astype(np.float16); k = rng.randn(4, 2, 64, 16).astype(np.float16)
v = rng.randn(4, 2, 64, 16).astype(np.float16); x = rng.randn(4, 64, 128).astype(np.float32)
s = rng.randn(128).astype(np.float32)
for a, n in ((q, 'q'), (k, 'k'), (v, 'v'), (x, 'x'), (s, 's')): save(n, a)
save('y', attention(q, k, v, causal=True)[0].astype(np.float16))
)");
  auto run = [&] {
    return run_text_model(R"(
      <ir_version: 10, opset_import: ["" : 23]>
      g (float16[4,8,64,16] q, float16[4,2,64,16] k, float16[4,2,64,16] v, float[4,64,128] x,
         float[128] s) => (float16 y, float r) {
        y = Attention<is_causal = 1>(q, k, v)
        r = RMSNormalization(x, s)
      }
    )",
                          feed_of(np, {"q", "k", "v", "x", "s"}));
  };
  set_num_threads(1);
  TensorMap one = run();
  set_num_threads(4);
  TensorMap four = run();
  set_num_threads(0);
  EXPECT_TRUE(tensors_identical(four.at("y"), one.at("y")));
  EXPECT_TRUE(tensors_identical(four.at("r"), one.at("r")));
  // float16: computed in double and rounded once, within one float16 step of NumPy's float64
  // result rounded (the sums' order differs).
  EXPECT_TRUE(tensors_close(one.at("y"), np.at("y"), 1e-3, 1e-3));
}

}  // namespace
}  // namespace parity::testing
