// A backend that lives only in the tests, to show what adding a backend takes: this file and
// its one registration line. It wraps the reference backend and adds a constant to some float
// tensors, so that parity's own comparison and layer-wise code, which know it only through the
// registry, have something to find:
//
//   parity run m.onnx --pluginref --offsetref --offset 1e-3 --offset-tensor t2
#include <algorithm>
#include <cstdlib>

#include "backend/ref/runner.h"
#include "backend/registry.h"
#include "core/error.h"

namespace parity::testing {
namespace {

struct OffsetConfig {
  double offset = 1e-3;
  std::vector<std::string> tensors;  // empty: every float32 output
};

class OffsetRunner : public Runner {
 public:
  OffsetRunner(Loader<ModelPtr> model, OffsetConfig config, std::string name)
      : Runner(std::move(name), "offsetref-runner"),
        inner_(std::move(model)),
        config_(std::move(config)) {}

 protected:
  void activate_impl() override { inner_.activate(); }
  void deactivate_impl() override { inner_.deactivate(); }
  TensorMetadata input_metadata_impl() override { return inner_.input_metadata(); }
  TensorMap infer_impl(const TensorMap& feed) override {
    TensorMap outputs = inner_.infer(feed, /*check_inputs=*/false);
    TensorMap shifted;
    for (const auto& [name, t] : outputs) {
      const bool chosen =
          config_.tensors.empty() ||
          std::find(config_.tensors.begin(), config_.tensors.end(), name) != config_.tensors.end();
      if (!chosen || t.dtype() != DataType::kFloat32) {
        shifted.set(name, t);
        continue;
      }
      Tensor copy(DataType::kFloat32, t.shape());
      for (int64_t i = 0; i < t.numel(); ++i)
        copy.data<float>()[i] = static_cast<float>(t.data<float>()[i] + config_.offset);
      shifted.set(name, std::move(copy));
    }
    return shifted;
  }

 private:
  PluginRefRunner inner_;
  OffsetConfig config_;
};

Backend offset_backend() {
  using Kind = BackendOption::Kind;
  Backend b;
  b.name = "offsetref";
  b.flags = "--offsetref";
  b.help = "Run the reference backend and add --offset to float outputs (a test backend)";
  b.group = "Offset Runner (tests only)";
  b.options = {{"--offset", Kind::kValue, "The constant added", "0.001"},
               {"--offset-tensor", Kind::kList, "The tensors shifted (default: every one)"}};
  b.configure = [](const BackendOptionValues& v) {
    OffsetConfig c;
    const std::string text = v.value("offset", "0.001");
    char* end = nullptr;
    c.offset = std::strtod(text.c_str(), &end);
    if (end == text.c_str() || *end != '\0')
      fail_usage("failed to parse --offset with value '{}': it must be a number", text);
    c.tensors = v.list("offset-tensor", {});
    return std::any(c);
  };
  b.make_runner = [](Loader<ModelPtr> model, const std::any& config, const std::string& name) {
    return std::unique_ptr<Runner>(std::make_unique<OffsetRunner>(
        std::move(model), std::any_cast<const OffsetConfig&>(config), name));
  };
  return b;
}

}  // namespace

PARITY_REGISTER_BACKEND(offset_backend());

}  // namespace parity::testing
