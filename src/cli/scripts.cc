#include "cli/scripts.h"

#include <filesystem>

#include "cli/app.h"
#include "cli/gen_script.h"
#include "cli/python_process.h"
#include "core/error.h"
#include "core/logger.h"
#include "io/json.h"

namespace parity::cli {

namespace fs = std::filesystem;

void add_script_args(CLI::App& app, RunArgs& args) {
  app.add_option("--plugins", args.plugins,
                 "Plugin libraries that add reference kernels for custom ops, or backends "
                 "(docs/plugins.md)")
      ->group("Scripts and Plugins");
  app.add_option("--gen-script,--gen", args.gen_script,
                 "Write a Python script that does this run with the module parity, instead of "
                 "running ('-' for stdout)")
      ->group("Scripts and Plugins");
  app.add_option("--data-loader-script", args.data_loader_script,
                 "Python script whose function (default load_data) returns an iterable of feed "
                 "dicts: path.py[:func]")
      ->group("Scripts and Plugins");
  app.add_option("--compare-func-script", args.compare_func_script,
                 "Python script whose function (default compare_outputs) compares two "
                 "IterationResults and returns {output: bool}: path.py[:func]")
      ->group("Scripts and Plugins");
}

bool run_needs_python(const RunArgs& args) {
  return !args.data_loader_script.empty() || !args.compare_func_script.empty();
}

int run_in_python(const RunArgs& args, const ComparatorOptions& cmp,
                  const std::vector<ConfiguredBackend>& backends) {
  for (const std::string* spec : {&args.data_loader_script, &args.compare_func_script}) {
    if (spec->empty()) continue;
    const std::string path = parse_script_ref(*spec, "").path;
    if (!fs::is_regular_file(path))
      fail_usage("failed to use script '{}' with path '{}': no such file; give path.py[:func]",
                 *spec, path);
  }
  const std::string script = generate_run_script(args, cmp, backends, invoked_command());

  TempPath folder(make_temp_dir("parity-run"));
  const std::string path = (fs::path(folder.path) / "run.py").string();
  io::write_file(path, script);
  return run_python({path});
}

}  // namespace parity::cli
