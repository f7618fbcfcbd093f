// A backend served by a plugin library through plugin_api.h alone (no Parity C++), for the
// tests: each output is a copy of an input plus a constant, as its options say:
//
//   parity run m.onnx --pluginref --echo --plugins libparity_test_echo_backend.so
//       --echo-option y=x --echo-option offset=0.5
//
// ("y=x": output y echoes input x; "offset=V": added to float inputs; "crash=segv|abort|exit|hang":
// what infer does instead, to test --use-subprocess).
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "backend/plugin_api.h"

namespace {

const ParityBackendApi* g_api = nullptr;

struct Echo {
  std::vector<std::pair<std::string, std::string>> outputs;  // (output, input)
  float offset = 0;
  std::string crash;
};

int echo_create(void*, const void* model, size_t model_size, const char*,
                const char* const* options, size_t num_options, void** runner,
                ParityBackendCall* call) {
  if (!model || model_size == 0) {
    g_api->call_error(call, "no model was given");
    return PARITY_ERROR;
  }
  Echo* echo = new (std::nothrow) Echo();
  if (!echo) return PARITY_ERROR;
  for (size_t i = 0; i < num_options; ++i) {
    const std::string option = options[i];
    const size_t eq = option.find('=');
    if (eq == std::string::npos) {
      g_api->call_error(call, ("option '" + option + "' is not key=value").c_str());
      delete echo;
      return PARITY_ERROR;
    }
    if (option.substr(0, eq) == "crash")
      echo->crash = option.substr(eq + 1);
    else if (option.substr(0, eq) == "offset")
      echo->offset = std::strtof(option.c_str() + eq + 1, nullptr);
    else
      echo->outputs.emplace_back(option.substr(0, eq), option.substr(eq + 1));
  }
  *runner = echo;
  return PARITY_OK;
}

int echo_infer(void* runner, const ParityNamedTensor* inputs, size_t num_inputs,
               ParityBackendCall* call) {
  const Echo* echo = static_cast<const Echo*>(runner);
  if (echo->crash == "segv") std::raise(SIGSEGV);
  if (echo->crash == "abort") std::abort();
  if (echo->crash == "exit") std::exit(3);
  if (echo->crash == "hang") pause();
  for (const auto& [output, input] : echo->outputs) {
    const ParityNamedTensor* in = nullptr;
    for (size_t i = 0; i < num_inputs; ++i)
      if (input == inputs[i].name) in = &inputs[i];
    if (!in) {
      g_api->call_error(call, ("no input named '" + input + "'").c_str());
      return PARITY_ERROR;
    }
    ParityTensor out = in->tensor;
    std::vector<float> shifted;
    if (out.dtype == PARITY_DTYPE_FLOAT) {
      size_t n = 1;
      for (int32_t d = 0; d < out.rank; ++d) n *= static_cast<size_t>(out.shape[d]);
      const float* x = static_cast<const float*>(out.data);
      shifted.assign(x, x + n);
      for (float& v : shifted) v += echo->offset;
      out.data = shifted.data();
    }
    if (g_api->set_output(call, output.c_str(), &out) != PARITY_OK) return PARITY_ERROR;
  }
  return PARITY_OK;
}

void echo_destroy(void* runner) { delete static_cast<Echo*>(runner); }

}  // namespace

PARITY_BACKEND_DEFINE_VERSION()

PARITY_PLUGIN_EXPORT int parity_register_backends(const ParityBackendApi* api) {
  g_api = api;
  ParityBackendDef def;
  std::memset(&def, 0, sizeof def);
  def.name = "echo";
  def.flag = "--echo";
  def.help = "Outputs that echo inputs (a test backend in a plugin library)";
  def.create = echo_create;
  def.infer = echo_infer;
  def.destroy = echo_destroy;
  return api->register_backend(api->host, &def);
}
