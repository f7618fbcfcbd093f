// Streaming --save-outputs and the merge of shards (io/json.h), and feeds read from files and
// folders (io/feed_files.h).
#include <gtest/gtest.h>

#include "io/feed_files.h"
#include "io/io_test_helpers.h"
#include "io/json.h"
#include "io/npy.h"

namespace parity::io {
namespace {

using testing::read_text;
using testing::TempDir;

Tensor values(std::vector<float> v) {
  Tensor t(DataType::kFloat32, {static_cast<int64_t>(v.size())});
  for (size_t i = 0; i < v.size(); ++i) t.data<float>()[i] = v[i];
  return t;
}

IterationResult iteration(const std::string& runner, size_t index, float x) {
  IterationResult it;
  it.outputs.set("y", values({x, x * 2}));
  it.runtime = 0.5 + static_cast<double>(index);
  it.runner_name = runner;
  it.dataset_index = index;
  return it;
}

// What the writer streams is exactly what run_results_to_json writes for the same results,
// including runners without iterations and a failed iteration.
TEST(DatasetResults, StreamedFileEqualsWholeFile) {
  TempDir dir;
  RunResults whole;
  std::vector<IterationResult> a, b;
  for (size_t i = 0; i < 3; ++i) a.push_back(iteration("a", i, static_cast<float>(i)));
  IterationResult failed;
  failed.runner_name = "b";
  failed.dataset_index = 1;
  failed.error = "infer failed: \"shape\" (1, 17)";
  b.push_back(iteration("b", 0, 7));
  b.push_back(failed);
  whole.add(a, "a");
  whole.add(b, "b");
  whole.add({}, "c");
  const std::string path = (dir.path() / "out.json").string();
  {
    RunResultsStream w(path, {"a", "b", "c"});
    for (size_t i = 0; i < 3; ++i) w.add(0, a[i]);
    for (const auto& it : b) w.add(1, it);
    w.finish();
  }
  EXPECT_EQ(read_text(path), run_results_to_json(whole));
  // Nothing is left beside the file.
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += !e.is_directory();
  EXPECT_EQ(files, 1u);
  // And it reads back with the indices and the error.
  RunResults back = load_run_results(path);
  EXPECT_EQ(back[1].second[1].error, failed.error);
  EXPECT_EQ(back[0].second[2].dataset_index, std::optional<size_t>(2));
}

TEST(DatasetResults, WriterWithoutFinishLeavesNothing) {
  TempDir dir;
  const std::string path = (dir.path() / "out.json").string();
  {
    RunResultsStream w(path, {"a"});
    w.add(0, iteration("a", 0, 1));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(DatasetResults, MergeOrdersByIndexAndRefusesOverlap) {
  TempDir dir;
  auto shard = [&](const std::string& name, std::vector<size_t> indices) {
    RunResults r;
    std::vector<IterationResult> its;
    for (size_t i : indices) its.push_back(iteration("a", i, static_cast<float>(i)));
    r.add(its, "a");
    const std::string path = (dir.path() / name).string();
    save_run_results(path, r);
    return path;
  };
  const std::string s0 = shard("s0.json", {0, 2, 4}), s1 = shard("s1.json", {1, 3});
  RunResults merged = merge_dataset_results({s1, s0});
  ASSERT_EQ(merged.size(), 1u);
  std::vector<size_t> order;
  for (const auto& it : merged[0].second) order.push_back(*it.dataset_index);
  EXPECT_EQ(order, (std::vector<size_t>{0, 1, 2, 3, 4}));
  EXPECT_THROW(
      {
        try {
          merge_dataset_results({s0, shard("again.json", {4})});
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("must not overlap"), std::string::npos);
          throw;
        }
      },
      Error);
  // Files a plain run saved have no indices to merge by.
  RunResults plain;
  plain.add({IterationResult{}}, "a");
  save_run_results((dir.path() / "plain.json").string(), plain);
  EXPECT_THROW(merge_dataset_results({(dir.path() / "plain.json").string()}), Error);
}

TEST(FileFeeds, FolderInNameOrderOneFileAtATime) {
  TempDir dir;
  std::filesystem::create_directory(dir.path() / "d");
  save_npy((dir.path() / "d" / "b.npy").string(), values({2}));
  save_inputs((dir.path() / "d" / "a.json").string(), {TensorMap{}, TensorMap{}});  // two feeds
  std::vector<std::pair<std::string, Tensor>> arrays{{"x", values({3})}};
  write_file((dir.path() / "d" / "c.npz").string(), npz_encode(arrays));
  FileFeedSource source({(dir.path() / "d").string()});
  TensorMetadata meta;
  meta.add("x", DataType::kFloat32, std::nullopt);
  source.set_input_metadata(meta);
  ASSERT_EQ(source.files().size(), 3u);
  EXPECT_TRUE(source.get(0)->empty());
  EXPECT_TRUE(source.get(1)->empty());
  EXPECT_EQ(source.get(2)->find("x")->data<float>()[0], 2.0f);
  EXPECT_EQ(source.get(3)->find("x")->data<float>()[0], 3.0f);
  EXPECT_FALSE(source.get(4));
  EXPECT_TRUE(source.get(0)->empty());  // back to the start
}

}  // namespace
}  // namespace parity::io
