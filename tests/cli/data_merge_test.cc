// `parity data merge` and `parity run --shard` from the command line: usage errors and the merge
// of shards (the byte-for-byte comparison with an unsharded run is in
// tests/python/test_dataset.py, which builds the dataset with NumPy).
#include <gtest/gtest.h>

#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const CommandResult& r, const std::string& s) {
  return r.output.find(s) != std::string::npos;
}

TEST(DataMerge, ShardsOfAGeneratedDatasetMergeInOrder) {
  TempDir dir;
  const std::string model = source_path("examples/identity.onnx");
  std::vector<std::string> shards;
  for (int k = 0; k < 2; ++k) {
    shards.push_back(dir.file("s" + std::to_string(k) + ".json"));
    CommandResult r =
        run_parity({"run", model, "--pluginref", "--onnxrt", "--iterations", "5", "--shard",
                    std::to_string(k) + "/2", "--save-outputs", shards.back()});
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_TRUE(has(r, "Dataset Accuracy")) << r.output;
    EXPECT_TRUE(has(r, k == 0 ? "Passed: 3/3 iterations" : "Passed: 2/2 iterations")) << r.output;
  }
  const std::string merged = dir.file("all.json");
  CommandResult m = run_parity({"data", "merge", shards[1], shards[0], "-o", merged});
  ASSERT_EQ(m.exit_code, 0) << m.output;
  EXPECT_TRUE(has(m, "2 runner(s), 5 iteration(s)")) << m.output;
  CommandResult c = run_parity({"run", "--load-outputs", merged});
  EXPECT_EQ(c.exit_code, 0) << c.output;
  EXPECT_TRUE(has(c, "Passed: 5/5 iterations")) << c.output;
  const std::string text = read_text(merged);
  size_t last = 0;
  for (int i = 0; i < 5; ++i) {  // runner 0's iterations, in dataset order
    const size_t at = text.find("\"parity_dataset_index\": " + std::to_string(i), last);
    ASSERT_NE(at, std::string::npos) << i;
    last = at;
  }
}

TEST(DataMerge, UsageErrors) {
  TempDir dir;
  write_text(dir.file("a.json"), "{}");
  CommandResult same = run_parity({"data", "merge", dir.file("a.json"), "-o", dir.file("a.json")});
  EXPECT_EQ(same.exit_code, 2) << same.output;
  EXPECT_TRUE(has(same, "it is one of the inputs")) << same.output;
  CommandResult missing = run_parity({"data", "merge", dir.file("none.json"), "-o", "x.json"});
  EXPECT_EQ(missing.exit_code, 2) << missing.output;
  const std::string model = source_path("examples/identity.onnx");
  CommandResult shard = run_parity({"run", model, "--pluginref", "--shard", "2/2"});
  EXPECT_EQ(shard.exit_code, 2) << shard.output;
  EXPECT_TRUE(has(shard, "failed to parse --shard with value '2/2'")) << shard.output;
  // --dask takes an optional value, so the model given after it is taken as the address.
  CommandResult dask = run_parity({"run", "--dask", model, "--pluginref"});
  EXPECT_EQ(dask.exit_code, 2) << dask.output;
  EXPECT_TRUE(has(dask, "not being consumed as an argument for another parameter")) << dask.output;
  CommandResult address = run_parity({"run", model, "--pluginref", "--dask", "scheduler"});
  EXPECT_EQ(address.exit_code, 2) << address.output;
  EXPECT_TRUE(has(address, "failed to use --dask with the scheduler address 'scheduler'"))
      << address.output;
  CommandResult validate = run_parity({"run", model, "--pluginref", "--dataset", "--validate"});
  EXPECT_EQ(validate.exit_code, 2) << validate.output;
  EXPECT_TRUE(has(validate, "failed to use --validate with a dataset run")) << validate.output;
}

}  // namespace
}  // namespace parity::testing
