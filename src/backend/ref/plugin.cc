// Op plugins: the host side of plugin_api.h. C++ never crosses the interface: every callback
// catches what it could throw and reports it as a status code and a message.
#include "backend/ref/plugin.h"

#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "backend/plugin_api.h"
#include "backend/ref/registry.h"
#include "core/logger.h"
#include "core/metadata.h"

// The opaque handles of plugin_api.h.
struct ParityNode {
  const parity::ref::OpContext* ctx;
  std::string error;
};

struct ParityRunContext {
  const parity::ir::Node* node;
  parity::ref::Outputs* outputs;
  std::string error;
};

namespace parity::ref {

namespace {

// A registered op: the plugin's definition with its strings copied.
struct PluginOp {
  ParityOpDef def{};
  std::string domain, op_type;
};

// What one load collects before its ops go into the registry (all or nothing).
struct LoadSession {
  std::vector<std::shared_ptr<const PluginOp>> ops;
  std::string error;
  bool open = true;  // register_op is valid only inside parity_register_ops
};

const ir::Attribute* find_attr(const ParityNode* node, const char* name, ir::Attribute::Type type,
                               int* status) {
  const ir::Attribute* a = name ? node->ctx->attr(name) : nullptr;
  *status = !a ? PARITY_ATTR_MISSING : a->type != type ? PARITY_ATTR_WRONG_TYPE : PARITY_OK;
  return *status == PARITY_OK ? a : nullptr;
}

int api_register_op(void* host, const ParityOpDef* def) {
  auto* session = static_cast<LoadSession*>(host);
  if (!session->open) return PARITY_ERROR;
  try {
    if (!def || !def->op_type || !*def->op_type || !def->run) {
      session->error = "register_op was given a definition without op_type or run()";
      return PARITY_ERROR;
    }
    const int64_t until = def->until_version == 0 ? kOpsetMax : def->until_version;
    if (def->since_version < 1 || def->since_version > until) {
      session->error = fmt::format(
          "op '{}' has the opset range [{}, {}]; since_version must be "
          "at least 1 and not above until_version",
          def->op_type, def->since_version, def->until_version);
      return PARITY_ERROR;
    }
    auto op = std::make_shared<PluginOp>();
    op->def = *def;
    op->def.until_version = until;
    op->domain = def->domain ? def->domain : "";
    op->op_type = def->op_type;
    op->def.domain = op->domain.c_str();
    op->def.op_type = op->op_type.c_str();
    session->ops.push_back(std::move(op));
    return PARITY_OK;
  } catch (const std::exception& e) {
    session->error = e.what();
    return PARITY_ERROR;
  }
}

const char* api_node_name(const ParityNode* node) { return node->ctx->node().name.c_str(); }
size_t api_node_num_inputs(const ParityNode* node) { return node->ctx->num_inputs(); }
size_t api_node_num_outputs(const ParityNode* node) { return node->ctx->num_outputs(); }

int api_attr_int(const ParityNode* node, const char* name, int64_t* value) {
  int status;
  if (auto* a = find_attr(node, name, ir::Attribute::Type::kInt, &status)) *value = a->i;
  return status;
}

int api_attr_float(const ParityNode* node, const char* name, float* value) {
  int status;
  if (auto* a = find_attr(node, name, ir::Attribute::Type::kFloat, &status)) *value = a->f;
  return status;
}

int api_attr_string(const ParityNode* node, const char* name, const char** data, size_t* size) {
  int status;
  if (auto* a = find_attr(node, name, ir::Attribute::Type::kString, &status)) {
    *data = a->s.c_str();
    *size = a->s.size();
  }
  return status;
}

int api_attr_ints(const ParityNode* node, const char* name, const int64_t** values, size_t* count) {
  int status;
  if (auto* a = find_attr(node, name, ir::Attribute::Type::kInts, &status)) {
    *values = a->ints.data();
    *count = a->ints.size();
  }
  return status;
}

int api_attr_floats(const ParityNode* node, const char* name, const float** values, size_t* count) {
  int status;
  if (auto* a = find_attr(node, name, ir::Attribute::Type::kFloats, &status)) {
    *values = a->floats.data();
    *count = a->floats.size();
  }
  return status;
}

void api_node_error(ParityNode* node, const char* message) { node->error = message ? message : ""; }

size_t api_num_outputs(const ParityRunContext* ctx) { return ctx->node->outputs.size(); }

void* api_allocate_output(ParityRunContext* ctx, size_t index, int32_t dtype, int32_t rank,
                          const int64_t* shape) {
  try {
    if (index >= ctx->outputs->size()) {
      ctx->error = fmt::format("the kernel allocated output {}, but the node has {} outputs", index,
                               ctx->outputs->size());
      return nullptr;
    }
    if (!dtype_is_valid(dtype) || dtype == static_cast<int32_t>(DataType::kUndefined) ||
        dtype == static_cast<int32_t>(DataType::kString)) {
      ctx->error = fmt::format(
          "the kernel allocated output {} with element type {}: plugins "
          "use the ONNX element type numbers except 0 and 8 (string)",
          index, dtype);
      return nullptr;
    }
    if (rank < 0 || (rank > 0 && !shape)) {
      ctx->error =
          fmt::format("the kernel allocated output {} with rank {} and no shape", index, rank);
      return nullptr;
    }
    Shape dims(shape, shape + rank);
    for (int64_t d : dims)
      if (d < 0) {
        ctx->error = fmt::format(
            "the kernel allocated output {} with shape {}: sizes cannot be "
            "negative",
            index, shape_str(dims));
        return nullptr;
      }
    Tensor t(static_cast<DataType>(dtype), std::move(dims));
    void* data = t.raw_data();
    (*ctx->outputs)[index] = Value(std::move(t));
    return data;
  } catch (const std::exception& e) {
    ctx->error = fmt::format("the kernel could not allocate output {}: {}", index, e.what());
    return nullptr;
  }
}

void api_run_error(ParityRunContext* ctx, const char* message) {
  ctx->error = message ? message : "";
}

// The table a plugin receives, with the session its register_op calls fill. A plugin may keep
// the table for the life of the process (plugin_api.h), so a loaded library's table is never
// freed: one small allocation per library.
struct HostTable {
  LoadSession session;
  ParityPluginApi api{PARITY_PLUGIN_API_VERSION,
                      &session,
                      api_register_op,
                      api_node_name,
                      api_node_num_inputs,
                      api_node_num_outputs,
                      api_attr_int,
                      api_attr_float,
                      api_attr_string,
                      api_attr_ints,
                      api_attr_floats,
                      api_node_error,
                      api_num_outputs,
                      api_allocate_output,
                      api_run_error};
};

// The tables of the loaded libraries, held for the life of the process (never destroyed: a
// plugin may use its table until the very end), so that they stay reachable rather than lost.
void keep_table(std::unique_ptr<HostTable> table) {
  static std::mutex mutex;
  static auto* tables = new std::vector<std::unique_ptr<HostTable>>;
  std::lock_guard lock(mutex);
  tables->push_back(std::move(table));
}

// A 64-bit fingerprint of a buffer, to find a plugin that wrote into its read-only inputs:
// words mixed by multiplication in four independent lanes (so the multiplies overlap). Measured
// on the shared 2-core machine (loaded): 5-15 GB/s, about half memcpy's speed, i.e. checking
// an input before and after the call costs about what copying it would.
uint64_t fingerprint(const void* data, size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0x9e3779b97f4a7c15ull ^ bytes;
  uint64_t lane[4] = {h, h + 1, h + 2, h + 3};
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32)
    for (int k = 0; k < 4; ++k) {
      uint64_t w;
      std::memcpy(&w, p + i + 8 * k, 8);
      lane[k] = (lane[k] ^ w) * 0xff51afd7ed558ccdull;
      lane[k] ^= lane[k] >> 29;
    }
  h = lane[0] ^ (lane[1] * 3) ^ (lane[2] * 5) ^ (lane[3] * 7);
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
  }
  for (; i < bytes; ++i) h = (h ^ p[i]) * 0x100000001b3ull;
  return h;
}

class PluginKernel : public Kernel {
 public:
  PluginKernel(const OpContext& ctx, std::shared_ptr<const PluginOp> op) : op_(std::move(op)) {
    // What the model declares for each output, checked against what the plugin returns.
    for (size_t i = 0; i < ctx.node().outputs.size(); ++i) {
      const ir::ValueType* t = ctx.output_type(i);
      declared_.push_back(t ? std::optional<ir::ValueType>(*t) : std::nullopt);
    }
    state_ = op_->def.user_data;
    if (!op_->def.prepare) return;
    ParityNode node{&ctx, {}};
    int status = PARITY_ERROR;
    try {
      status = op_->def.prepare(op_->def.user_data, &node, &state_);
    } catch (...) {
      node.error = "the plugin's prepare() threw a C++ exception";
    }
    if (status != PARITY_OK)
      ctx.fail("the plugin kernel of {} refused the node (status {}): {}", op_->op_type, status,
               node.error.empty() ? "it gave no message" : node.error);
  }
  ~PluginKernel() override {
    if (op_->def.release) op_->def.release(state_);
  }

  Outputs run(const Inputs& inputs, RunContext& ctx) override {
    std::vector<ParityTensor> tensors(inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      const Value& v = inputs[i];
      if (v.is_none()) continue;  // dtype 0, data NULL: an absent optional input
      if (!v.is_tensor()) ctx.fail("input {} is a sequence; plugin kernels take tensors", i);
      if (v.tensor.dtype() == DataType::kString)
        ctx.fail("input {} is a string tensor; plugin kernels take numeric tensors", i);
      tensors[i] = ParityTensor{static_cast<int32_t>(v.tensor.dtype()),
                                static_cast<int32_t>(v.tensor.rank()), v.tensor.shape().data(),
                                v.tensor.raw_data()};
    }
    // Inputs are handed over as pointers into shared buffers (initializers, other nodes'
    // outputs): a plugin that writes into them corrupts every later reader.
    std::vector<uint64_t> before(inputs.size(), 0);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].is_tensor())
        before[i] = fingerprint(tensors[i].data, inputs[i].tensor.nbytes());
    Outputs outputs(ctx.node().outputs.size());
    ParityRunContext run_ctx{&ctx.node(), &outputs, {}};
    int status = PARITY_ERROR;
    try {
      status = op_->def.run(state_, &run_ctx, tensors.data(), tensors.size());
    } catch (...) {
      run_ctx.error = "the plugin's run() threw a C++ exception";
    }
    if (status != PARITY_OK)
      ctx.fail("the plugin kernel of {} failed (status {}): {}", op_->op_type, status,
               run_ctx.error.empty() ? "it gave no message" : run_ctx.error);
    for (size_t i = 0; i < inputs.size(); ++i)
      if (inputs[i].is_tensor() &&
          fingerprint(tensors[i].data, inputs[i].tensor.nbytes()) != before[i])
        ctx.fail(
            "the plugin kernel of {} wrote into its input {} ('{}'), which is read-only: "
            "the buffer may be shared with other nodes (an initializer), so the run's "
            "results cannot be trusted; a plugin must write only its outputs",
            op_->op_type, i, ctx.node().inputs[i]);
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].is_none() && !ctx.node().outputs[i].empty())
        ctx.fail("the plugin kernel of {} did not allocate output {} ('{}')", op_->op_type, i,
                 ctx.node().outputs[i]);
      if (outputs[i].is_tensor()) check_declared(i, outputs[i].tensor, ctx);
    }
    return outputs;
  }

 private:
  // The output must have the element type and shape the model declares, where it declares
  // them (a symbolic or unknown dim accepts any size).
  void check_declared(size_t i, const Tensor& out, RunContext& ctx) const {
    if (!declared_[i] || declared_[i]->kind != ir::ValueType::Kind::kTensor) return;
    const ir::ValueType& t = *declared_[i];
    const std::string& name = ctx.node().outputs[i];
    if (t.elem_type && *t.elem_type != out.dtype())
      ctx.fail(
          "the plugin kernel of {} returned output {} ('{}') as {}, but the model declares "
          "{}; a plugin must return the declared element type",
          op_->op_type, i, name, dtype_name(out.dtype()), dtype_name(*t.elem_type));
    if (!t.shape) return;
    bool fits = t.shape->size() == out.shape().size();
    for (size_t d = 0; fits && d < out.shape().size(); ++d)
      fits = !(*t.shape)[d].is_fixed() || (*t.shape)[d].value == out.shape()[d];
    if (!fits)
      ctx.fail(
          "the plugin kernel of {} returned output {} ('{}') with shape {}, but the model "
          "declares {}; a plugin must return the declared shape",
          op_->op_type, i, name, shape_str(out.shape()), dims_str(*t.shape));
  }

  std::shared_ptr<const PluginOp> op_;
  void* state_ = nullptr;
  std::vector<std::optional<ir::ValueType>> declared_;
};

}  // namespace

PluginInfo load_plugin(const std::string& path) {
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    fail(
        "failed to load plugin library '{}' with dlopen: {}; give the path of a shared library "
        "built for this machine",
        path, why ? why : "unknown error");
  }
  // From here on, a failure closes the library: none of its code is referenced yet.
  auto refuse = [&](const std::string& message) {
    dlclose(handle);
    fail("{}", message);
  };
  auto entry = reinterpret_cast<ParityRegisterOpsFn>(dlsym(handle, PARITY_PLUGIN_ENTRY_POINT));
  if (!entry)
    refuse(
        fmt::format("failed to load plugin library '{}' without the entry point '{}': a "
                    "plugin exports extern \"C\" int parity_register_ops(const "
                    "ParityPluginApi* api) (see docs/plugins.md)",
                    path, PARITY_PLUGIN_ENTRY_POINT));
  auto version_fn =
      reinterpret_cast<ParityPluginVersionFn>(dlsym(handle, PARITY_PLUGIN_VERSION_SYMBOL));
  if (!version_fn)
    refuse(
        fmt::format("failed to load plugin library '{}' without the function '{}': a plugin "
                    "states the interface version it was built for with "
                    "PARITY_PLUGIN_DEFINE_VERSION() from plugin_api.h",
                    path, PARITY_PLUGIN_VERSION_SYMBOL));
  const uint32_t version = version_fn();
  if (version != PARITY_PLUGIN_API_VERSION)
    refuse(
        fmt::format("failed to load plugin library '{}' with plugin interface version {}: "
                    "this Parity implements version {}; rebuild the plugin against this "
                    "Parity's plugin_api.h",
                    path, version, PARITY_PLUGIN_API_VERSION));

  auto table = std::make_unique<HostTable>();
  LoadSession& session = table->session;
  int status = PARITY_ERROR;
  try {
    status = entry(&table->api);
  } catch (...) {
    session.error = "it threw a C++ exception";
  }
  session.open = false;
  if (status != PARITY_OK)
    refuse(fmt::format("failed to load plugin library '{}': its {} returned status {}: {}", path,
                       PARITY_PLUGIN_ENTRY_POINT, status,
                       session.error.empty() ? "it gave no message" : session.error));

  keep_table(std::move(table));  // the plugin may keep the table (see HostTable)
  PluginInfo info{path, {}};
  Registry& registry = Registry::global();
  for (const auto& op : session.ops) {
    registry.add(KernelEntry{op->domain, op->op_type, op->def.since_version, op->def.until_version,
                             [op](const OpContext& ctx) -> std::unique_ptr<Kernel> {
                               return std::make_unique<PluginKernel>(ctx, op);
                             },
                             fmt::format("plugin library {}", path)});
    info.ops.push_back(
        fmt::format("{}::{}", op->domain.empty() ? "ai.onnx" : op->domain, op->op_type));
  }
  logger().verbose("Loaded plugin library {} with ops: [{}]", path, fmt::join(info.ops, ", "));
  return info;
}

}  // namespace parity::ref
