// An example op plugin: a reference kernel for the custom op parity.example::ScaledTanh,
//
//   y = alpha * tanh(beta * x) + bias      (alpha, beta: float attributes, default 1;
//                                            bias: optional one-element input, default 0)
//
// for float and double tensors. Built as libparity_example_plugin.so and loaded with
// `parity run model.onnx --pluginref --plugins libparity_example_plugin.so`. It includes only
// plugin_api.h: nothing of Parity's C++ crosses the interface. docs/plugins.md walks through it.
#include <cmath>
#include <cstdio>
#include <new>

#include "backend/plugin_api.h"

namespace {

const ParityPluginApi* g_api = nullptr;  // kept: the table lives as long as the process

// Per-node state, made by prepare() from the node's attributes.
struct ScaledTanh {
  double alpha = 1.0;
  double beta = 1.0;
};

// Reads an optional float attribute; false (with the node's error set) if it has another type.
bool read_float(ParityNode* node, const char* name, double* value) {
  float f = 0;
  int status = g_api->attr_float(node, name, &f);
  if (status == PARITY_OK) *value = f;
  if (status == PARITY_ATTR_WRONG_TYPE) {
    char message[128];
    std::snprintf(message, sizeof message, "attribute '%s' must be a float", name);
    g_api->node_error(node, message);
    return false;
  }
  return true;
}

int prepare(void* /*user_data*/, ParityNode* node, void** state) {
  if (g_api->node_num_inputs(node) < 1 || g_api->node_num_outputs(node) != 1) {
    g_api->node_error(node, "ScaledTanh takes inputs (x, [bias]) and has one output");
    return PARITY_ERROR;
  }
  auto* op = new (std::nothrow) ScaledTanh;
  if (!op) return PARITY_ERROR;
  if (!read_float(node, "alpha", &op->alpha) || !read_float(node, "beta", &op->beta)) {
    delete op;
    return PARITY_ERROR;
  }
  *state = op;
  return PARITY_OK;
}

void release(void* state) { delete static_cast<ScaledTanh*>(state); }

// The math in double, rounded once to T (the project's rule for reference kernels).
template <typename T>
void compute(const ScaledTanh& op, const T* x, double bias, T* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = static_cast<T>(op.alpha * std::tanh(op.beta * static_cast<double>(x[i])) + bias);
}

template <typename T>
double first_element(const ParityTensor& t) {
  return static_cast<double>(*static_cast<const T*>(t.data));
}

int run(void* state, ParityRunContext* ctx, const ParityTensor* inputs, size_t num_inputs) {
  const ScaledTanh& op = *static_cast<const ScaledTanh*>(state);
  const ParityTensor& x = inputs[0];
  if (x.dtype != PARITY_DTYPE_FLOAT && x.dtype != PARITY_DTYPE_DOUBLE) {
    g_api->run_error(ctx, "input x must be float or double");
    return PARITY_ERROR;
  }
  double bias = 0;
  if (num_inputs > 1 && inputs[1].data) {
    const ParityTensor& b = inputs[1];
    int64_t count = 1;
    for (int32_t d = 0; d < b.rank; ++d) count *= b.shape[d];
    if (b.dtype != x.dtype || count != 1) {
      g_api->run_error(ctx, "input bias must hold one element of x's type");
      return PARITY_ERROR;
    }
    bias = b.dtype == PARITY_DTYPE_FLOAT ? first_element<float>(b) : first_element<double>(b);
  }
  int64_t n = 1;
  for (int32_t d = 0; d < x.rank; ++d) n *= x.shape[d];
  void* y = g_api->allocate_output(ctx, 0, x.dtype, x.rank, x.shape);
  if (!y) return PARITY_ERROR;  // allocate_output recorded why
  if (x.dtype == PARITY_DTYPE_FLOAT)
    compute(op, static_cast<const float*>(x.data), bias, static_cast<float*>(y), n);
  else
    compute(op, static_cast<const double*>(x.data), bias, static_cast<double*>(y), n);
  return PARITY_OK;
}

}  // namespace

PARITY_PLUGIN_DEFINE_VERSION()

PARITY_PLUGIN_EXPORT int parity_register_ops(const ParityPluginApi* api) {
  g_api = api;
  ParityOpDef def{};
  def.domain = "parity.example";
  def.op_type = "ScaledTanh";
  def.since_version = 1;
  def.until_version = 0;  // every opset of the domain
  def.prepare = prepare;
  def.run = run;
  def.release = release;
  return api->register_op(api->host, &def);
}
