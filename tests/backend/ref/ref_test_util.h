// Helpers for the reference backend's tests: expected values computed at test time by NumPy,
// models run through an Executor, and tensor comparisons.
#pragma once

// Header-only: each test folder builds its *_test.cc files into one binary.
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "backend/ref/executor.h"
#include "backend/ref/ops/kernel_util.h"
#include "core/tensor.h"
#include "support/onnx_text.h"
#include "support/test_util.h"

namespace parity::testing {

// One array file: a text line "<dtype> <dim> <dim>...", then the raw bytes.
inline Tensor read_array(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string header;
  std::getline(in, header);
  std::istringstream fields(header);
  std::string dtype_text;
  fields >> dtype_text;
  Shape shape;
  for (int64_t d; fields >> d;) shape.push_back(d);
  auto dtype = dtype_from_name(dtype_text);
  if (!dtype) fail("failed to read test array '{}' with dtype '{}'", path, dtype_text);
  Tensor t(*dtype, shape);
  in.read(static_cast<char*>(t.raw_data()), static_cast<std::streamsize>(t.nbytes()));
  if (!in) fail("failed to read test array '{}': it is shorter than its header says", path);
  return t;
}

// Runs `body` with Debian's Python after a prelude that imports numpy as np, seeds
// `rng = np.random.RandomState(0)` and defines save(name, array). Returns the saved arrays.
inline std::map<std::string, Tensor> numpy_arrays(const std::string& body) {
  TempDir dir;
  std::string script =
      "import numpy as np\n"
      "rng = np.random.RandomState(0)\n"
      "OUT = '" +
      dir.path().string() +
      "'\n"
      "def save(name, a):\n"
      "    a = np.asarray(a, order='C')  # ascontiguousarray makes scalars 1-D\n"
      "    head = ' '.join([a.dtype.name] + [str(d) for d in a.shape]) + '\\n'\n"
      "    with open(OUT + '/' + name + '.arr', 'wb') as f:\n"
      "        f.write(head.encode() + a.tobytes())\n" +
      body;
  CommandResult r = run_python(script);
  if (r.exit_code != 0) fail("the NumPy reference script failed:\n{}\n{}", r.output, body);
  std::map<std::string, Tensor> arrays;
  for (const auto& entry : std::filesystem::directory_iterator(dir.path()))
    if (entry.path().extension() == ".arr")
      arrays[entry.path().stem().string()] = read_array(entry.path().string());
  return arrays;
}

// The named arrays of `np` (from numpy_arrays) as a feed, in the order given.
inline TensorMap feed_of(const std::map<std::string, Tensor>& np,
                         const std::vector<std::string>& names) {
  TensorMap f;
  for (const auto& n : names) f.set(n, np.at(n));
  return f;
}

// Builds a model from ONNX text and runs it on `feed`; returns the graph outputs.
inline TensorMap run_text_model(const std::string& onnx_text, const TensorMap& feed) {
  ref::Executor executor(model_from_text(onnx_text));
  return executor.run(feed);
}

// Every element within atol + rtol * |expected| (NaN only where expected is NaN); same dtype
// and shape.
inline ::testing::AssertionResult tensors_close(const Tensor& actual, const Tensor& expected,
                                                double rtol, double atol) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape())
    return ::testing::AssertionFailure()
           << "got " << dtype_name(actual.dtype()) << " " << shape_str(actual.shape())
           << ", expected " << dtype_name(expected.dtype()) << " " << shape_str(expected.shape());
  auto values = [](const Tensor& t) {
    return ref::dispatch<ref::AllTypes>(t.dtype(), [&]<typename T>() {
      std::vector<double> v(static_cast<size_t>(t.numel()));
      for (size_t i = 0; i < v.size(); ++i) v[i] = ref::to_double(t.data<T>()[i]);
      return v;
    });
  };
  std::vector<double> a = values(actual), e = values(expected);
  for (size_t i = 0; i < a.size(); ++i) {
    bool ok = std::isnan(e[i])
                  ? std::isnan(a[i])
                  : (a[i] == e[i] || std::abs(a[i] - e[i]) <= atol + rtol * std::abs(e[i]));
    if (!ok)
      return ::testing::AssertionFailure()
             << "element " << i << " is " << a[i] << ", expected " << e[i];
  }
  return ::testing::AssertionSuccess();
}

// Same dtype, shape and bytes.
inline ::testing::AssertionResult tensors_identical(const Tensor& actual, const Tensor& expected) {
  if (actual.equals(expected)) return ::testing::AssertionSuccess();
  ::testing::AssertionResult close = tensors_close(actual, expected, 0, 0);
  return ::testing::AssertionFailure()
         << "tensors differ: " << (close ? "values equal but bits differ" : close.message());
}

// Calls fn and returns the message of the parity::Error it throws ("" if none).
template <typename F>
std::string error_of(F&& fn) {
  try {
    fn();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace parity::testing
