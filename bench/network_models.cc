#include "network_models.h"

#include <cmath>
#include <vector>

#include "graph_builder.h"

namespace parity::bench {

namespace {

std::string conv(GraphBuilder& g, const std::string& x, const std::string& name, int64_t cin,
                 int64_t cout, int64_t k, int64_t stride) {
  float scale = std::sqrt(2.0f / static_cast<float>(cin * k * k));
  auto* n = g.node(
      "Conv",
      {x, g.weight(name + ".w", {cout, cin, k, k}, scale), g.weight(name + ".b", {cout}, 0.01f)},
      name);
  GraphBuilder::attr(n, "kernel_shape", {k, k});
  GraphBuilder::attr(n, "strides", {stride, stride});
  GraphBuilder::attr(n, "pads", {k / 2, k / 2, k / 2, k / 2});
  return name;
}

std::string basic_block(GraphBuilder& g, const std::string& x, const std::string& name, int64_t cin,
                        int64_t cout, int64_t stride) {
  std::string a = conv(g, x, name + ".conv1", cin, cout, 3, stride);
  a = g.node("Relu", {a}, name + ".relu1")->output(0);
  a = conv(g, a, name + ".conv2", cout, cout, 3, 1);
  std::string shortcut = x;
  if (stride != 1 || cin != cout) shortcut = conv(g, x, name + ".proj", cin, cout, 1, stride);
  std::string sum = g.node("Add", {a, shortcut}, name + ".add")->output(0);
  return g.node("Relu", {sum}, name + ".out")->output(0);
}

}  // namespace

std::string resnet_style_model_bytes() {
  GraphBuilder g("resnet_style", 13);
  g.input("image", {1, 3, 224, 224});
  std::string x = conv(g, "image", "stem", 3, 64, 7, 2);
  x = g.node("Relu", {x}, "stem.relu")->output(0);
  auto* pool = g.node("MaxPool", {x}, "stem.pool");
  GraphBuilder::attr(pool, "kernel_shape", {3, 3});
  GraphBuilder::attr(pool, "strides", {2, 2});
  GraphBuilder::attr(pool, "pads", {1, 1, 1, 1});
  x = "stem.pool";
  int64_t channels = 64;
  const int64_t widths[] = {64, 128, 256, 512};
  for (int stage = 0; stage < 4; ++stage) {
    for (int block = 0; block < 2; ++block) {
      int64_t stride = (stage > 0 && block == 0) ? 2 : 1;
      x = basic_block(g, x, "layer" + std::to_string(stage + 1) + "." + std::to_string(block),
                      channels, widths[stage], stride);
      channels = widths[stage];
    }
  }
  x = g.node("GlobalAveragePool", {x}, "gap")->output(0);
  x = g.node("Flatten", {x}, "flatten")->output(0);
  g.node("Gemm", {x, g.weight("fc.w", {512, 1000}, 0.04f), g.weight("fc.b", {1000}, 0.01f)},
         "logits");
  g.output("logits", {1, 1000});
  return g.bytes();
}

std::string transformer_block_model_bytes() {
  const int64_t seq = 128, hidden = 768, heads = 12, head = hidden / heads, ffn = 3072;
  GraphBuilder g("transformer_block", 17);
  g.input("x", {1, seq, hidden});
  auto linear = [&](const std::string& in, const std::string& name, int64_t n_in, int64_t n_out) {
    std::string m =
        g.node("MatMul", {in, g.weight(name + ".w", {n_in, n_out}, 0.02f)}, name + ".mm")
            ->output(0);
    return g.node("Add", {m, g.weight(name + ".b", {n_out}, 0.01f)}, name)->output(0);
  };
  auto split_heads = [&](const std::string& in, const std::string& name, bool transpose_k) {
    std::string r =
        g.node("Reshape", {in, g.ints(name + ".shape", {1, seq, heads, head})}, name + ".reshape")
            ->output(0);
    auto* t = g.node("Transpose", {r}, name + ".heads");
    GraphBuilder::attr(
        t, "perm",
        transpose_k ? std::vector<int64_t>{0, 2, 3, 1} : std::vector<int64_t>{0, 2, 1, 3});
    return t->output(0);
  };
  auto layer_norm = [&](const std::string& in, const std::string& name) {
    auto* n = g.node(
        "LayerNormalization",
        {in, g.weight(name + ".gamma", {hidden}, 1.0f), g.weight(name + ".beta", {hidden}, 0.01f)},
        name);
    GraphBuilder::attr(n, "axis", int64_t{-1});
    return n->output(0);
  };

  std::string q = split_heads(linear("x", "q", hidden, hidden), "q", false);
  std::string k = split_heads(linear("x", "k", hidden, hidden), "k", true);
  std::string v = split_heads(linear("x", "v", hidden, hidden), "v", false);
  std::string scores = g.node("MatMul", {q, k}, "scores")->output(0);
  scores = g.node("Div", {scores, g.scalar("sqrt_d", std::sqrt(float(head)))}, "scaled")->output(0);
  auto* sm = g.node("Softmax", {scores}, "probs");
  GraphBuilder::attr(sm, "axis", int64_t{-1});
  std::string ctx = g.node("MatMul", {"probs", v}, "context")->output(0);
  auto* merge = g.node("Transpose", {ctx}, "context.t");
  GraphBuilder::attr(merge, "perm", {0, 2, 1, 3});
  ctx =
      g.node("Reshape", {"context.t", g.ints("context.shape", {1, seq, hidden})}, "context.merged")
          ->output(0);
  std::string attn = linear(ctx, "o", hidden, hidden);
  std::string h = layer_norm(g.node("Add", {"x", attn}, "residual1")->output(0), "ln1");

  std::string f = linear(h, "ffn1", hidden, ffn);
  // Gelu(f) = 0.5 f (1 + erf(f / sqrt(2)))
  std::string e = g.node("Div", {f, g.scalar("sqrt2", std::sqrt(2.0f))}, "gelu.div")->output(0);
  e = g.node("Erf", {e}, "gelu.erf")->output(0);
  e = g.node("Add", {e, g.scalar("one", 1.0f)}, "gelu.add")->output(0);
  e = g.node("Mul", {f, e}, "gelu.mul")->output(0);
  e = g.node("Mul", {e, g.scalar("half", 0.5f)}, "gelu")->output(0);
  std::string out = linear(e, "ffn2", ffn, hidden);
  layer_norm(g.node("Add", {h, out}, "residual2")->output(0), "y");
  g.output("y", {1, seq, hidden});
  return g.bytes();
}

}  // namespace parity::bench
