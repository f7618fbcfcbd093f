// Loading op plugins: shared libraries that add reference kernels through the C interface of
// plugin_api.h (`parity run --plugins libmyops.so`).
//
//   ref::PluginInfo info = ref::load_plugin("build/libmyops.so");
//   // info.ops: {"my.domain::MyOp", ...}, now in Registry::global()
//
// A library is loaded once per process and stays loaded: the registry's kernels call into it.
// Loading the same file again registers its ops again (replacing the earlier entries).
#pragma once

#include <string>
#include <vector>

namespace parity::ref {

struct PluginInfo {
  std::string path;
  std::vector<std::string> ops;  // "<domain>::<op_type>" ("ai.onnx" for the default domain)
};

// Loads the library and registers its ops. Throws Error when the library cannot be opened,
// lacks the entry point or the version function, implements another interface version, or
// its entry point reports a failure; nothing is registered then.
PluginInfo load_plugin(const std::string& path);

}  // namespace parity::ref
