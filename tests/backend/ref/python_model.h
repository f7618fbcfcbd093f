// Models built with ONNX's Python helpers (onnx.helper), for graphs the textual syntax of ONNX
// 1.12 cannot write (sequence and optional types), together with the values NumPy computes
// for them in the same script.
#pragma once

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/ref/executor.h"
#include "onnx/model_io.h"
#include "ref_test_util.h"
#include "support/value_compare.h"

namespace parity::testing {

struct PythonModel {
  std::shared_ptr<ir::Model> model;
  std::map<std::string, Tensor> arrays;

  const Tensor& tensor(const std::string& name) const {
    auto it = arrays.find(name);
    if (it == arrays.end()) fail("failed to find array '{}' saved by the script", name);
    return it->second;
  }
  // A list saved with save_seq(name, items) (its element type is the first item's, or
  // `empty_type` for an empty list).
  Value sequence(const std::string& name, DataType empty_type = DataType::kFloat32) const {
    const int64_t n = tensor(name + "__len").data<int64_t>()[0];
    std::vector<Tensor> items;
    for (int64_t i = 0; i < n; ++i) items.push_back(tensor(fmt::format("{}__{}", name, i)));
    DataType dtype = items.empty() ? empty_type : items.front().dtype();
    return Value::make_sequence(std::move(items), dtype);
  }
  // Runs the model through the reference Executor.
  std::vector<ref::NamedValue> run(const std::vector<ref::NamedValue>& feed) const {
    ref::Executor executor(model);
    return executor.run(feed);
  }
};

// Runs `body` with Debian's Python after a prelude that imports numpy as np, onnx, and
// onnx.helper as oh, TensorProto as TP, seeds `rng = np.random.RandomState(0)` and defines
// save(name, array), save_seq(name, arrays) and save_model(model). Returns the saved model
// (loaded into the IR) and arrays.
inline PythonModel python_model(const std::string& body) {
  TempDir dir;
  std::string script =
      "import numpy as np\n"
      "import onnx\n"
      "from onnx import helper as oh, TensorProto as TP\n"
      "rng = np.random.RandomState(0)\n"
      "OUT = '" +
      dir.path().string() +
      "'\n"
      "def save(name, a):\n"
      "    a = np.asarray(a, order='C')  # (ascontiguousarray would make scalars 1-D)\n"
      "    head = ' '.join([a.dtype.name] + [str(d) for d in a.shape]) + '\\n'\n"
      "    with open(OUT + '/' + name + '.arr', 'wb') as f:\n"
      "        f.write(head.encode() + a.tobytes())\n"
      "def save_seq(name, items):\n"
      "    save(name + '__len', np.array(len(items), dtype=np.int64))\n"
      "    for i, a in enumerate(items):\n"
      "        save(f'{name}__{i}', a)\n"
      "def save_model(m):\n"
      "    onnx.save(m, OUT + '/model.onnx')\n" +
      body;
  CommandResult r = run_python(script);
  if (r.exit_code != 0) fail("the Python model script failed:\n{}\n{}", r.output, body);
  PythonModel result;
  result.model = onnx_io::load_model((dir.path() / "model.onnx").string());
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    if (entry.path().extension() == ".arr")
      result.arrays[entry.path().stem().string()] = read_array(entry.path().string());
  return result;
}

// Equal kind, element types, shapes and values (bit-exact; NaN equals NaN).
inline ::testing::AssertionResult values_equal(const Value& actual, const Value& expected) {
  std::string diff = compare_values(actual, expected, Tolerance{0, 0});
  if (diff.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << diff;
}

}  // namespace parity::testing
