// The model option group (Polygraphy's ModelArgs and OnnxLoadArgs): the model file, its
// external data, and the outputs to mark.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "onnx/loaders.h"
#include "onnx/model_io.h"

namespace parity::cli {

struct ModelArgs {
  std::string model_file;
  std::string external_data_dir;
  bool ignore_external_data = false;
  std::vector<std::string> onnx_outputs;  // names, or the two tokens "mark all"
  std::vector<std::string> onnx_exclude_outputs;

  bool mark_all() const;
  // The model file as an absolute path, as Polygraphy's tools name it ("Loading model: ...").
  std::string path() const;
  // Whether outputs are marked or unmarked (--onnx-outputs / --onnx-exclude-outputs).
  bool marks_outputs() const { return !onnx_outputs.empty() || !onnx_exclude_outputs.empty(); }
  onnx_io::LoadOptions load_options() const;
  // The model loader these flags describe: the file, with the outputs marked as asked
  // (unmarked with marked = false).
  Loader<ModelPtr> loader(bool marked = true) const;
};
// `required` false: the model may be left out (`run --load-outputs a.json b.json` compares
// saved results only).
void add_model_args(CLI::App& app, ModelArgs& args, bool with_outputs, bool required = true);

}  // namespace parity::cli
