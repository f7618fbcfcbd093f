#include "cli/scripts.h"

#include <filesystem>

#include "cli/app.h"
#include "cli/gen_script.h"
#include "cli/python_process.h"
#include "core/error.h"
#include "core/interrupt.h"
#include "core/logger.h"
#include "io/json.h"

namespace parity::cli {

namespace fs = std::filesystem;

void add_script_args(CLI::App& app, RunArgs& args) {
  app.add_option("--plugins", args.plugins,
                 "Plugin libraries that add reference kernels for custom ops, or backends "
                 "(docs/plugins.md)")
      ->group("Plugin Loading");
  app.add_option("--gen-script,--gen", args.gen_script,
                 "Write a Python script that does this run with the module parity, instead of "
                 "running ('-' for stdout)")
      ->group("Options");  // Polygraphy's --gen-script stands beside --help
  app.add_option("--data-loader-script", args.data_loader_script,
                 "Python script whose function (default load_data) returns an iterable of feed "
                 "dicts: path.py[:func]")
      ->group("Data Loader");
  app.add_option("--compare-func-script", args.compare_func_script,
                 "Python script whose function (default compare_outputs) compares two "
                 "IterationResults and returns {output: bool}: path.py[:func]")
      ->group("Comparator Comparisons");
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
  return run_python_script(generate_run_script(args, cmp, backends, invoked_command()));
}

int run_python_script(const std::string& script) {
  // Removed when done, and when the run is interrupted (the guards, innermost first).
  TempPath folder(make_temp_dir("parity-run"));
  TemporaryFileGuard folder_guard(folder.path.c_str());
  const std::string path = (fs::path(folder.path) / "run.py").string();
  TemporaryFileGuard script_guard(path.c_str());
  io::write_file(path, script);
  // The script writes its verdict here as its last act: a script that ends early (a data
  // loader, Python op or compare function calling os._exit() or sys.exit()) writes none, and
  // its exit status alone must not pass the run.
  const std::string verdict = (fs::path(folder.path) / "verdict").string();
  TemporaryFileGuard verdict_guard(verdict.c_str());
  const int exit_status = run_python({path}, {std::string(kVerdictFileVariable) + "=" + verdict});
  std::string reported;
  if (fs::exists(verdict)) reported = io::read_file(verdict);
  if (reported.empty()) {
    logger().error(
        "The run's Python script exited with status {} before it reached a verdict: a data "
        "loader, compare function or Python op ended the process (os._exit() or sys.exit()?). "
        "Nothing was compared to the end, so the run fails",
        exit_status);
    return 1;
  }
  // Passing needs both: the verdict written by the script and a clean exit after it.
  if (reported == "0" && exit_status == 0) return 0;
  return exit_status == 0 ? 1 : exit_status;
}

}  // namespace parity::cli
