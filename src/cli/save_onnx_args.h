// The model saving option group (Polygraphy's OnnxSaveArgs): -o/--output (run: --save-onnx),
// --save-external-data [PATH], --external-data-size-threshold, --no-save-all-tensors-to-one-file.
// Every subcommand that writes a model uses it.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "surgeon/model_file.h"

namespace parity::cli {

struct SaveOnnxArgs {
  std::string output;
  std::vector<std::string> external_data_path;  // given with no value: the default file
  CLI::Option* external_data_option = nullptr;
  std::string size_threshold;
  bool no_all_tensors_to_one_file = false;

  // The library's options (UsageError for a malformed threshold); `input_path` is the model
  // read, which is never overwritten.
  onnx_io::SaveOptions options(const std::string& input_path) const;
  // Logs "Saving ONNX model to: <path>" and writes the model, as Polygraphy's SaveOnnx.
  void save(surgeon::ModelFile& model, const std::string& input_path) const;
};
// `output_flags`: the flag naming the output model ("-o,--output"; run's is "--save-onnx").
void add_save_onnx_args(CLI::App& app, SaveOnnxArgs& args, bool output_required = true,
                        const std::string& output_flags = "-o,--output");

}  // namespace parity::cli
