// The library of `debug reduce` / `debug repeat`: the check verdict rule, the markers, the
// candidates (cut, frozen, exported and run), the iteration machinery with artifacts and
// replays, and the native reduction of a 1,000-node model with one wrong node.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include <onnx/onnx_pb.h>

#include "backend/registry.h"
#include "core/logger.h"
#include "debug/candidate.h"
#include "debug/iterate.h"
#include "debug/markers.h"
#include "debug/reduce.h"
#include "io/json.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {
namespace {

namespace fs = std::filesystem;
using namespace parity::debug;

// ---- the verdict of a check command (Polygraphy's CheckCmdArgs.run_check) ----

TEST(DebugCheck, ExitStatusDecidesByDefault) {
  CheckOptions o;
  EXPECT_TRUE(check_passed(o, {}, 0, ""));
  EXPECT_FALSE(check_passed(o, {}, 1, ""));
  EXPECT_FALSE(check_passed(o, {}, -11, ""));  // a crash
}

TEST(DebugCheck, FailCodesAndIgnoredCodes) {
  CheckOptions o;
  o.fail_codes = std::vector<int>{3};
  EXPECT_FALSE(check_passed(o, {}, 3, ""));
  EXPECT_TRUE(check_passed(o, {}, 1, ""));  // any other status passes
  CheckOptions ignore;
  ignore.ignore_fail_codes = std::vector<int>{2};
  EXPECT_TRUE(check_passed(ignore, {}, 2, ""));
  EXPECT_FALSE(check_passed(ignore, {}, 1, ""));
}

TEST(DebugCheck, RegexAloneDecidesEvenForStatusZero) {
  CheckOptions o;
  o.fail_regexes = {"mismatch"};
  const std::vector<std::regex> r{std::regex("mismatch")};
  EXPECT_FALSE(check_passed(o, r, 0, "output mismatch here"));
  EXPECT_TRUE(check_passed(o, r, 1, "crashed for another reason"));
  // With --fail-code, both must hold.
  o.fail_codes = std::vector<int>{1};
  EXPECT_FALSE(check_passed(o, r, 1, "mismatch"));
  EXPECT_TRUE(check_passed(o, r, 1, "other"));
  EXPECT_TRUE(check_passed(o, r, 0, "mismatch"));
}

TEST(DebugCheck, BadRegexIsAUsageError) {
  CheckOptions o;
  o.command = {"true"};
  o.fail_regexes = {"(unclosed"};
  EXPECT_THROW(check_command_judge(o), UsageError);
}

TEST(DebugCheck, MissingProgramIsAnError) {
  CheckOptions o;
  o.command = {"/nonexistent/program-for-parity"};
  LogCapture capture;
  Judge judge = check_command_judge(o);
  EXPECT_THROW(judge(""), Error);
}

// ---- markers: the search finds the boundary wherever it is ----

// The candidate cut at node i (outputs of node i) fails when it holds the culprit k.
template <typename M>
int64_t search_outputs(int64_t n, int64_t culprit, int64_t* steps) {
  M marker(n);
  *steps = 0;
  for (;;) {
    const int64_t i = marker.node_index();
    ++*steps;
    marker.step(/*success=*/i < culprit, i + 1);
    if (marker.stop()) break;
  }
  marker.finish();
  return marker.best_bad_node_index().value_or(-1);
}

TEST(DebugMarkers, BisectFindsEveryCulpritInLogSteps) {
  for (int64_t n = 2; n <= 64; ++n)
    for (int64_t k = 0; k < n; ++k) {
      int64_t steps = 0;
      // As Polygraphy's, the bisection assumes the cut at node 0 passes: a culprit there is
      // found as the cut at node 1 (the inputs phase then removes the extra node).
      EXPECT_EQ(search_outputs<BisectMarker>(n, k, &steps), std::max<int64_t>(k, 1))
          << "n=" << n << " k=" << k;
      EXPECT_LE(steps, static_cast<int64_t>(std::ceil(std::log2(n))) + 1);
    }
}

TEST(DebugMarkers, LinearFindsEveryCulprit) {
  for (int64_t n = 1; n <= 20; ++n)
    for (int64_t k = 0; k < n; ++k) {
      int64_t steps = 0;
      EXPECT_EQ(search_outputs<LinearMarker>(n, k, &steps), k);
      EXPECT_EQ(steps, n);
    }
}

TEST(DebugMarkers, BestGoodIsTheLargestPassingBelowTheBad) {
  BisectMarker m(10);
  // Culprit 6: candidates below 6 pass.
  for (;;) {
    const int64_t i = m.node_index();
    m.step(i < 6, i + 1);
    if (m.stop()) break;
  }
  m.finish();
  EXPECT_EQ(m.best_bad_node_index(), 6);
  EXPECT_EQ(m.best_good_node_index(), 5);
}

// ---- candidates ----

// Every tensor of `model` on the reference backend for `feed`.
struct ReferenceValues : TensorSource {
  ModelPtr model;
  TensorMap feed;
  TensorMap values(const std::vector<std::string>& names) override {
    return BackendRegistry::global().configure("pluginref", {}).fetch_tensors(model, feed, names);
  }
  bool random_data() const override { return false; }
};

TensorMap run_reference(const ModelPtr& model, const TensorMap& feed) {
  auto runner =
      BackendRegistry::global().configure("pluginref", {}).make_runner(Loader<ModelPtr>(model));
  RunnerActivation active(*runner);
  return runner->infer(feed);
}

bool same_bytes(const Tensor& a, const Tensor& b) {
  return a.dtype() == b.dtype() && a.shape() == b.shape() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

constexpr const char* kBranchy = R"(
  <ir_version: 8, opset_import: ["" : 13]>
  branchy (float[2,3] x) => (float[2,3] y) {
    a = Sigmoid(x)
    b = Neg(x)
    c = Add(a, b)
    d = Exp(c)
    y = Neg(d)
  }
)";

TEST(DebugCandidate, CutsOutputsAndInputsAsCleanupDoes) {
  ModelPtr model = model_from_text(kBranchy);
  LogCapture capture;
  Candidate c(*model);
  ASSERT_EQ(c.nodes().size(), 5u);
  c.mark_outputs({"c"});
  EXPECT_EQ(c.nodes().size(), 3u);  // Sigmoid, Neg, Add
  EXPECT_EQ(c.inputs(), std::vector<std::string>{"x"});
  // GraphSurgeon's words; `c` has no type in the file, the graph output `y` has one.
  EXPECT_TRUE(capture.contains("Marking model outputs: [Variable (c): (shape=None, dtype=None)]"));
  Candidate e(*model);
  e.mark_outputs({"y"});
  EXPECT_TRUE(
      capture.contains("Marking model outputs: [Variable (y): (shape=[2, 3], dtype=float32)]"));
  Candidate d(*model);
  d.mark_inputs({"c"});
  EXPECT_EQ(d.nodes().size(), 2u);  // Exp, Neg
  EXPECT_EQ(d.inputs(), std::vector<std::string>{"c"});
}

TEST(DebugCandidate, CutOffBranchIsFrozenWithTheFullModelsValues) {
  ModelPtr model = model_from_text(kBranchy);
  TensorMap feed;
  feed.set("x", Tensor::from_vector<float>({2, 3}, {0.1f, -0.2f, 0.3f, 0.4f, -0.5f, 0.6f}));
  ReferenceValues source;
  source.model = model;
  source.feed = feed;
  LogCapture capture;
  Candidate c(*model);
  c.mark_inputs({"a"});  // b = Neg(x) no longer has its input: frozen
  const ModelPtr cut = c.to_model(source);
  EXPECT_TRUE(capture.contains("Freezing tensor: Variable (x)"));
  ASSERT_EQ(cut->graph.inputs.size(), 1u);
  EXPECT_EQ(cut->graph.inputs[0].name, "a");
  EXPECT_TRUE(cut->graph.initializers.count("b"));  // Neg folded into its value
  std::vector<std::string> ops;
  for (const auto& n : cut->graph.nodes) ops.push_back(n.op_type);
  EXPECT_EQ(ops, (std::vector<std::string>{"Add", "Exp", "Neg"}));
  // Run with `a` as it was in the full model: the output is the full model's, bit for bit.
  TensorMap cut_feed;
  cut_feed.set("a", source.values({"a"}).at("a"));
  EXPECT_TRUE(same_bytes(run_reference(cut, cut_feed).at("y"), run_reference(model, feed).at("y")));
}

TEST(DebugCandidate, InputsWithoutTypesTakeThemFromTheValues) {
  // No value_info: `c`'s type is only known from running the full model.
  ModelPtr model = model_from_text(kBranchy);
  model->proto->mutable_graph()->clear_value_info();
  ReferenceValues source;
  source.model = model;
  source.feed.set("x", Tensor(DataType::kFloat32, {2, 3}));
  LogCapture capture;
  Candidate c(*model);
  c.mark_inputs({"c"});
  const ModelPtr cut = c.to_model(source);
  ASSERT_EQ(cut->graph.inputs.size(), 1u);
  const auto& type = cut->graph.inputs[0].type;
  EXPECT_EQ(type.elem_type, DataType::kFloat32);
  ASSERT_TRUE(type.shape.has_value());
  EXPECT_EQ(dims_str(*type.shape), "(2, 3)");
}

// ---- the iteration machinery ----

TEST(DebugIterate, RepeatUntilBadSortsArtifactsAndWritesTheReplay) {
  TempDir dir;
  const std::string count = dir.file("count"), art = dir.file("art.txt");
  // Passes twice, then fails; writes the artifact each time.
  CheckOptions check;
  check.command = {"sh", "-c",
                   "n=$(cat '" + count + "' 2>/dev/null || echo 0); echo $((n+1)) > '" + count +
                       "'; echo run $n > '" + art + "'; [ $n -lt 2 ]"};
  IterateOptions options;
  options.until = Until::parse("bad");
  options.save_debug_replay = dir.file("replay.json");
  ArtifactSorter sorter({art}, dir.file("arts"));
  LogCapture capture;
  Iterator it(options, check_command_judge(check), &sorter);
  const Replay replay = it.iterate({});
  ASSERT_EQ(replay.entries().size(), 3u);
  EXPECT_TRUE(replay.entries()[0].second.success);
  EXPECT_FALSE(replay.entries()[2].second.success);
  size_t good = 0, bad = 0;
  for (const auto& e : fs::directory_iterator(dir.file("arts/good"))) good += e.is_regular_file();
  for (const auto& e : fs::directory_iterator(dir.file("arts/bad"))) bad += e.is_regular_file();
  EXPECT_EQ(good, 2u);
  EXPECT_EQ(bad, 1u);
  EXPECT_TRUE(
      capture.contains("Finished 3 iteration(s) | Passed: 2/3 | Pass Rate: 66.66666666666667%"));

  // A second session loading the replay skips the iterations it decided: the command never runs.
  IterateOptions again = options;
  again.load_debug_replay = options.save_debug_replay;
  again.save_debug_replay = "";
  Iterator it2(again, check_command_judge(check), nullptr);
  const Replay replayed = it2.iterate({});
  EXPECT_EQ(replayed.entries().size(), 3u);
  EXPECT_EQ(read_text(count), "3\n");
  EXPECT_TRUE(capture.contains("Loading iteration information from debug replay: success=False"));
}

TEST(DebugIterate, ReplayJsonRoundTrips) {
  Replay r;
  IterationContext c;
  c.iteration = 4;
  c.success = false;
  c.state["num_nodes"] = 17;
  r.set("_N4_outputs", c);
  const Replay back = replay_from_json(replay_to_json(r), "x.json");
  ASSERT_EQ(back.entries().size(), 1u);
  EXPECT_EQ(back.entries()[0].first, "_N4_outputs");
  EXPECT_EQ(back.entries()[0].second.state.at("num_nodes"), 17);
  EXPECT_FALSE(back.entries()[0].second.success);
  EXPECT_THROW(replay_from_json("[1, 2]", "x.json"), Error);
}

TEST(DebugIterate, UntilParsesPolygraphysChoices) {
  EXPECT_EQ(Until::parse("good").kind, Until::Kind::kGood);
  EXPECT_EQ(Until::parse("3").last_index, 2);
  EXPECT_THROW(Until::parse("often"), UsageError);
}

TEST(DebugIterate, RefusesToOverwriteTheIterationArtifact) {
  TempDir dir;
  write_text(dir.file("polygraphy_debug.onnx"), "x");
  IterateOptions options;
  options.iter_artifact = dir.file("polygraphy_debug.onnx");
  EXPECT_THROW(Iterator(
                   options, [](const std::string&) { return true; }, nullptr),
               Error);
}

// ---- native reduction ----

// A chain of `n` elementwise nodes t0 .. t{n-1} cycling through `ops`.
ModelPtr chain_model(int n, std::vector<std::string> ops = {"Neg", "Sigmoid", "Neg", "Abs"}) {
  std::string body;
  std::string prev = "x";
  for (int i = 0; i < n; ++i) {
    const std::string out = i == n - 1 ? "y" : "t" + std::to_string(i);
    body += fmt::format("    {} = {}({})\n", out, ops[i % ops.size()], prev);
    prev = out;
  }
  return model_from_text(fmt::format(R"(
  <ir_version: 8, opset_import: ["" : 13]>
  chain (float[4,64] x) => (float[4,64] y) {{
{}  }}
)",
                                     body));
}

TEST(DebugReduceNative, ThousandNodesWithOneWrongNodeReduceToThatNode) {
  ModelPtr model = chain_model(1000);
  const BackendRegistry& registry = BackendRegistry::global();
  BackendOptionValues wrong_options;
  wrong_options.set("wrong-tensor", {"t500"});
  const ConfiguredBackend wrong = registry.configure("wrongref", wrong_options);
  const ConfiguredBackend ref = registry.configure("pluginref", {});
  DataLoader loader;
  const TensorMap feed = first_feed(*model, loader);
  TempDir dir;
  ReduceOptions options;
  options.output = dir.file("min.onnx");
  options.iterate.save_debug_replay = dir.file("replay.json");
  LogCapture capture;
  const auto start = std::chrono::steady_clock::now();
  const ReduceResult r =
      reduce_by_comparison(model, wrong, ref, TensorCompareOptions{}, feed, true, options);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("native reduce of 1000 nodes: %.2f s, %lld candidates\n", seconds,
              static_cast<long long>(r.candidates));
  ASSERT_EQ(r.bad->graph.nodes.size(), 1u);
  EXPECT_EQ(r.bad->graph.nodes[0].outputs[0], "t500");
  EXPECT_EQ(r.bad->graph.inputs[0].name, "t499");
  EXPECT_LE(r.candidates, 2);  // the first divergence alone reproduces it
  EXPECT_TRUE(fs::exists(options.output));
  EXPECT_TRUE(capture.contains("Starting from the first divergence"));
}

TEST(DebugReduceNative, ASecondSessionFromTheReplayGivesTheSameModel) {
  ModelPtr model = chain_model(64, {"Neg", "Abs"});
  const BackendRegistry& registry = BackendRegistry::global();
  BackendOptionValues wrong_options;
  wrong_options.set("wrong-tensor", {"t30"});
  const ConfiguredBackend wrong = registry.configure("wrongref", wrong_options);
  const ConfiguredBackend ref = registry.configure("pluginref", {});
  DataLoader loader;
  const TensorMap feed = first_feed(*model, loader);
  TempDir dir;
  ReduceOptions options;
  options.output = dir.file("min.onnx");
  options.iterate.save_debug_replay = dir.file("replay.json");
  LogCapture capture;
  const ReduceResult first =
      reduce_by_comparison(model, wrong, ref, TensorCompareOptions{}, feed, true, options);
  options.output = dir.file("min2.onnx");
  options.iterate.load_debug_replay = dir.file("replay.json");
  options.iterate.save_debug_replay = "";
  const ReduceResult second =
      reduce_by_comparison(model, wrong, ref, TensorCompareOptions{}, feed, true, options);
  EXPECT_EQ(first.bad_nodes, second.bad_nodes);
  ASSERT_EQ(second.bad->graph.nodes.size(), 1u);
  EXPECT_EQ(second.bad->graph.nodes[0].outputs[0], "t30");
  EXPECT_TRUE(capture.contains("Loading iteration information from debug replay: success=False"));
}

TEST(DebugReduceNative, WrongNodeFoundByBisectionWithoutAStartNode) {
  // The same search the --check mode runs, judged in memory, without the first divergence.
  // (Neg and Abs carry the error to the output unchanged; a Sigmoid would shrink it.)
  ModelPtr model = chain_model(64, {"Neg", "Abs"});
  const BackendRegistry& registry = BackendRegistry::global();
  BackendOptionValues wrong_options;
  wrong_options.set("wrong-tensor", {"t20"});
  const ConfiguredBackend wrong = registry.configure("wrongref", wrong_options);
  const ConfiguredBackend ref = registry.configure("pluginref", {});
  DataLoader loader;
  const TensorMap feed = first_feed(*model, loader);
  FullModelValues values(model, ref, feed, true);
  const BackendPairJudge judge(wrong, ref, TensorCompareOptions{}, values);
  TempDir dir;
  ReduceOptions options;
  options.output = dir.file("min.onnx");
  options.iterate.save_debug_replay = "";
  LogCapture capture(Severity::kVerbose);
  const ReduceResult r = reduce_model(model, options, values, nullptr, {},
                                      [&](const ModelPtr& m) { return judge(m); });
  ASSERT_EQ(r.bad->graph.nodes.size(), 1u) << capture.text();
  EXPECT_EQ(r.bad->graph.nodes[0].outputs[0], "t20");
  EXPECT_LE(r.candidates, 2 * 7);  // two bisections of at most 64 nodes
}

TEST(DebugReduceValues, LayerwiseInputsAreUsedAsTheyAre) {
  // A feed that holds intermediate tensors too (what `data to-input` makes from a mark-all
  // run): a candidate's new inputs take those values, with no reference run.
  ModelPtr model = chain_model(6);
  const ConfiguredBackend ref = BackendRegistry::global().configure("pluginref", {});
  TensorMap feed;
  feed.set("x", Tensor(DataType::kFloat32, {4, 64}));
  Tensor golden(DataType::kFloat32, {4, 64});
  for (int64_t i = 0; i < golden.numel(); ++i) golden.data<float>()[i] = 0.25f * i;
  feed.set("t2", golden);
  FullModelValues values(model, ref, feed, /*random_data=*/false);
  EXPECT_TRUE(same_bytes(values.values({"t2"}).at("t2"), golden));
  EXPECT_EQ(values.reference_runs(), 0u);
  // A tensor the feed lacks is computed from the graph inputs on the reference.
  LogCapture capture;
  const Tensor t3 = values.values({"t3"}).at("t3");
  EXPECT_EQ(values.reference_runs(), 1u);
  TensorMap inputs;
  inputs.set("x", feed.at("x"));
  EXPECT_TRUE(same_bytes(t3, ref.fetch_tensors(model, inputs, {"t3"}).at("t3")));
}

TEST(DebugReduceNative, PassingModelIsAnError) {
  ModelPtr model = chain_model(8);
  const ConfiguredBackend ref = BackendRegistry::global().configure("pluginref", {});
  DataLoader loader;
  const TensorMap feed = first_feed(*model, loader);
  ReduceOptions options;
  options.output = "unused.onnx";
  LogCapture capture;
  EXPECT_THROW(reduce_by_comparison(model, ref, ref, TensorCompareOptions{}, feed, true, options),
               Error);
}

}  // namespace
}  // namespace parity::testing
