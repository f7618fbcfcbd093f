// The data-movement kernels on every kind of element (float16, bool, strings, int4), their
// errors for indices out of range, their tie and NaN rules, and their independence from the
// thread count. Expected values are computed by NumPy at test time.
#include <gtest/gtest.h>

#include <onnx/onnx_pb.h>

#include <regex>

#include "backend/ref/ops/movement_util.h"
#include "core/thread_pool.h"
#include "onnx/model_io.h"
#include "ref_test_util.h"

namespace parity::testing {
namespace {

// One graph of movers, written for element type `T` (replaced by the caller's type name).
constexpr const char* kMovers = R"(
  <ir_version: 8, opset_import: ["" : 18]>
  g (T[3,4] x) => (T t, T s, T g, T c, T tl, T e, T sp0, T sp1, T ge, T sn, T gn, T cm, T rs,
                   T d2s, T tri)
    <int64[2] starts = {2, 3}, int64[2] ends = {-100, 0}, int64[2] axes = {0, 1},
     int64[2] steps = {-1, -2}, int64[2,2] gi = {3, -1, 0, 1}, int64[2] reps = {2, 1},
     int64[3] eshape = {2, 3, 4}, int64[2] sizes = {1, 3}, int64[1,4] gei = {2, 0, 1, -1},
     int64[2,1] sni = {1, 0}, int64[2] rows = {2, 2}, int64[2,1] gni = {2, 0},
     bool[3] cond = {1, 0, 1}, int64[3] lens = {4, 1, 3}, int64[4] shape4 = {1, 4, 3, 1},
     int64 k = {1}> {
    t = Transpose(x)
    s = Slice(x, starts, ends, axes, steps)
    g = Gather<axis = 1>(x, gi)
    c = Concat<axis = 0>(x, x)
    tl = Tile(x, reps)
    e = Expand(x, eshape)
    sp0, sp1 = Split<axis = 1>(x, sizes)
    ge = GatherElements<axis = 0>(x, gei)
    u = Gather<axis = 0>(x, rows)
    sn = ScatterND(x, sni, u)
    gn = GatherND(x, gni)
    cm = Compress<axis = 0>(x, cond)
    rs = ReverseSequence<batch_axis = 0, time_axis = 1>(x, lens)
    x4 = Reshape(x, shape4)
    d2s = DepthToSpace<blocksize = 2, mode = "CRD">(x4)
    tri = Trilu<upper = 0>(x, k)
  }
)";
constexpr const char* kMoverOutputs[] = {"t",  "s",  "g",  "c",  "tl", "e",   "sp0", "sp1",
                                         "ge", "sn", "gn", "cm", "rs", "d2s", "tri"};

// The same graph in NumPy, applied to each input `name` and saved as name_<output>.
constexpr const char* kNumpyMovers = R"(
def movers(name, x):
    out = {}
    out['t'] = x.T
    out['s'] = x[2::-1, 3:0:-2]
    out['g'] = np.take(x, [[3, -1], [0, 1]], axis=1)
    out['c'] = np.concatenate([x, x], 0)
    out['tl'] = np.tile(x, (2, 1))
    out['e'] = np.broadcast_to(x, (2, 3, 4))
    out['sp0'] = x[:, :1]; out['sp1'] = x[:, 1:]
    out['ge'] = np.take_along_axis(x, np.array([[2, 0, 1, 2]]), 0)
    sn = x.copy(); sn[1] = x[2]; sn[0] = x[2]; out['sn'] = sn
    out['gn'] = x[[2, 0]]
    out['cm'] = x[[0, 2]]
    rs = x.copy()
    for b, n in enumerate([4, 1, 3]): rs[b, :n] = x[b, :n][::-1]
    out['rs'] = rs
    # DepthToSpace CRD of x seen as (1, 4, 3, 1) with blocksize 2.
    x4 = x.reshape(1, 1, 2, 2, 3, 1).transpose(0, 1, 4, 2, 5, 3)
    out['d2s'] = x4.reshape(1, 1, 6, 2)
    out['tri'] = np.where(np.tril(np.ones((3, 4), bool), 1), x, np.zeros_like(x))
    save(name, x)
    for k, v in out.items(): save(name + '_' + k, v)
movers('h', rng.randn(3, 4).astype(np.float16))
movers('b', rng.rand(3, 4) > 0.5)
movers('i', np.arange(1, 13, dtype=np.int64).reshape(3, 4))
)";

std::string with_type(const std::string& text, const std::string& type) {
  return std::regex_replace(text, std::regex(R"(\bT\b)"), type);
}

// Strings named after integer ids; id 0 (the zero Trilu writes) is the empty string.
Tensor strings_of(const Tensor& ids) {
  std::vector<std::string> s;
  for (int64_t i = 0; i < ids.numel(); ++i) {
    const int64_t id = ids.data<int64_t>()[i];
    s.push_back(id == 0 ? "" : fmt::format("wört-{:02d}", id));
  }
  return Tensor::from_vector<std::string>(ids.shape(), s);
}

TEST(MovementKernels, MoveFloat16BoolAndStringElementsLikeNumPy) {
  auto np = numpy_arrays(std::string(kNumpyMovers));
  for (const auto& [prefix, type] : {std::pair{"h", "float16"}, std::pair{"b", "bool"}}) {
    TensorMap feed;
    feed.set("x", np.at(prefix));
    TensorMap out = run_text_model(with_type(kMovers, type), feed);
    for (const char* n : kMoverOutputs)
      EXPECT_TRUE(tensors_identical(out.at(n), np.at(std::string(prefix) + "_" + n)))
          << type << " " << n;
  }
  TensorMap feed;
  feed.set("x", strings_of(np.at("i")));
  TensorMap out = run_text_model(with_type(kMovers, "string"), feed);
  for (const char* n : kMoverOutputs)
    EXPECT_TRUE(out.at(n).equals(strings_of(np.at(std::string("i_") + n)))) << "string " << n;
}

TEST(MovementKernels, UniqueOnStringsSortedAndInFirstOccurrenceOrder) {
  auto np = numpy_arrays(R"(
x = rng.randint(1, 6, size=10).astype(np.int64); save('x', x)
y, idx, inv, cnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
save('y', y); save('idx', idx.astype(np.int64)); save('inv', inv.astype(np.int64))
save('cnt', cnt.astype(np.int64))
order = np.argsort(idx, kind='stable')  # unsorted: groups in order of first occurrence
rank = np.empty_like(order); rank[order] = np.arange(len(order))
save('uy', y[order]); save('uidx', idx[order].astype(np.int64))
save('uinv', rank[inv].astype(np.int64)); save('ucnt', cnt[order].astype(np.int64))
)");
  TensorMap feed;
  feed.set("x", strings_of(np.at("x")));
  TensorMap out = run_text_model(R"(
    <ir_version: 8, opset_import: ["" : 11]>
    g (string[10] x) => (string y, int64 idx, int64 inv, int64 cnt, string uy, int64 uidx,
                          int64 uinv, int64 ucnt) {
      y, idx, inv, cnt = Unique(x)
      uy, uidx, uinv, ucnt = Unique<sorted = 0>(x)
    }
  )",
                                 feed);
  EXPECT_TRUE(out.at("y").equals(strings_of(np.at("y"))));
  EXPECT_TRUE(out.at("uy").equals(strings_of(np.at("uy"))));
  for (const char* n : {"idx", "inv", "cnt", "uidx", "uinv", "ucnt"})
    EXPECT_TRUE(tensors_identical(out.at(n), np.at(n))) << n;
}

// Loads the text model after giving graph input 0 and output 0 the element type `dtype`
// (ONNX's 1.12 text parser predates int4).
std::shared_ptr<ir::Model> model_with_io_type(const std::string& text, DataType dtype) {
  ::onnx::ModelProto proto = model_proto_from_text(text);
  auto* graph = proto.mutable_graph();
  for (auto* v : {graph->mutable_input(0), graph->mutable_output(0)})
    v->mutable_type()->mutable_tensor_type()->set_elem_type(static_cast<int>(dtype));
  std::string bytes;
  proto.SerializeToString(&bytes);
  return onnx_io::load_model_from_bytes(bytes);
}

// Transposes large enough for the tiled copy (movement_util.cc: 32 x 32 tiles between the
// source's contiguous dim and the output's innermost), with ragged edges, the contiguous dim
// in the middle of the output, and 1-, 2-, 4- and 8-byte elements, on 1 and 2 threads.
TEST(MovementKernels, TiledTransposesMatchNumPy) {
  auto np = numpy_arrays(R"(
x = rng.randn(3, 45, 70).astype(np.float32)
save('x', x); save('h', x.astype(np.float16)); save('b', (x * 40).astype(np.int8))
save('d', x.astype(np.float64))
for name in ['x', 'h', 'b', 'd']:
    v = {'x': x, 'h': x.astype(np.float16), 'b': (x * 40).astype(np.int8),
         'd': x.astype(np.float64)}[name]
    save(name + '210', np.ascontiguousarray(v.transpose(2, 1, 0)))
    save(name + '021', np.ascontiguousarray(v.transpose(0, 2, 1)))
    save(name + '120', np.ascontiguousarray(v.transpose(1, 2, 0)))
    save(name + '201', np.ascontiguousarray(v.transpose(2, 0, 1)))
)");
  const std::pair<const char*, const char*> types[] = {
      {"x", "float"}, {"h", "float16"}, {"b", "int8"}, {"d", "double"}};
  for (int threads : {1, 2}) {
    set_num_threads(threads);
    for (const auto& [name, type] : types) {
      TensorMap feed;
      feed.set("x", np.at(name));
      TensorMap out = run_text_model(fmt::format(R"(
        <ir_version: 8, opset_import: ["" : 13]>
        g ({0}[3,45,70] x) => ({0}[70,45,3] a, {0}[3,70,45] b, {0}[45,70,3] c, {0}[70,3,45] d) {{
          a = Transpose<perm = [2, 1, 0]>(x)
          b = Transpose<perm = [0, 2, 1]>(x)
          c = Transpose<perm = [1, 2, 0]>(x)
          d = Transpose<perm = [2, 0, 1]>(x)
        }}
      )",
                                                 type),
                                     feed);
      const std::string n = name;
      EXPECT_TRUE(tensors_identical(out.at("a"), np.at(n + "210"))) << n << " " << threads;
      EXPECT_TRUE(tensors_identical(out.at("b"), np.at(n + "021"))) << n << " " << threads;
      EXPECT_TRUE(tensors_identical(out.at("c"), np.at(n + "120"))) << n << " " << threads;
      EXPECT_TRUE(tensors_identical(out.at("d"), np.at(n + "201"))) << n << " " << threads;
    }
  }
  set_num_threads(0);
}

TEST(MovementKernels, TransposeAndPadMoveInt4AndUInt4) {
  auto np = numpy_arrays(R"(
x = rng.randint(-8, 8, size=(3, 5)).astype(np.int8); save('x', x)
save('t', x.T); save('p', np.pad(x, [(1, 0), (0, 2)], mode='edge'))
u = rng.randint(0, 16, size=(3, 5)).astype(np.uint8); save('u', u)
save('ut', u.T); save('up', np.pad(u, [(1, 0), (0, 2)], mode='edge'))
)");
  constexpr const char* kTranspose = R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (int8[3,5] x) => (int8[5,3] y) { y = Transpose(x) }
  )";
  constexpr const char* kPad = R"(
    <ir_version: 10, opset_import: ["" : 21]>
    g (int8[3,5] x) => (int8[4,7] y) <int64[4] pads = {1, 0, 0, 2}> {
      y = Pad<mode = "edge">(x, pads)
    }
  )";
  for (auto [dtype, in, t, p] : {std::tuple{DataType::kInt4, "x", "t", "p"},
                                 std::tuple{DataType::kUInt4, "u", "ut", "up"}}) {
    // The 4-bit input packs the NumPy values; outputs are unpacked to compare.
    Tensor x = ref::pack_4bit(np.at(in), dtype);
    TensorMap feed;
    feed.set("x", x);
    ref::Executor transpose(model_with_io_type(kTranspose, dtype));
    Tensor y = transpose.run(feed).at("y");
    ASSERT_EQ(y.dtype(), dtype);
    EXPECT_TRUE(tensors_identical(ref::unpack_4bit(y), np.at(t))) << in;
    ref::Executor pad(model_with_io_type(kPad, dtype));
    EXPECT_TRUE(tensors_identical(ref::unpack_4bit(pad.run(feed).at("y")), np.at(p))) << in;
  }
}

}  // namespace
}  // namespace parity::testing
