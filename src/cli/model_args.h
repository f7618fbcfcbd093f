// The model option group (Polygraphy's ModelArgs and OnnxLoadArgs): the model file, its
// type, its external data, and the outputs to mark.
//
// A model is an ONNX file, or (--model-type onnx-script, guessed from a .py extension) a
// Python script `script.py[:func]` whose function (default load_model) takes no arguments and
// returns an onnx.ModelProto or a Parity model: the ONNX counterpart of Polygraphy's
// --trt-network-script. Every subcommand gets its model from ModelArgs::loader(), so each one
// that takes a model takes a script too.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/python_process.h"
#include "onnx/loaders.h"
#include "onnx/model_io.h"
#include "surgeon/model_file.h"

namespace parity::cli {

struct ModelArgs {
  std::string model_file;
  std::string model_type;  // --model-type; empty: guessed from the file's extension
  std::string external_data_dir;
  bool ignore_external_data = false;
  std::vector<std::string> onnx_outputs;  // names, or the two tokens "mark all"
  std::vector<std::string> onnx_exclude_outputs;
  // ONNX shape inference on the loaded model, before outputs are marked (run's
  // --shape-inference; add_model_args does not add the flag).
  bool shape_inference = false;

  bool mark_all() const;
  // "onnx" or "onnx-script": --model-type, else guessed (".py" is a script). UsageError for
  // a type Parity cannot load (Polygraphy's TensorFlow and TensorRT types).
  std::string type() const;
  bool is_script() const { return type() == "onnx-script"; }
  // The script and its function, for an onnx-script model.
  ScriptRef script() const;
  // The model file (a script's file, without ":func") as an absolute path, as Polygraphy's
  // tools name it ("Loading model: ...").
  std::string path() const;
  // Whether outputs are marked or unmarked (--onnx-outputs / --onnx-exclude-outputs).
  bool marks_outputs() const { return !onnx_outputs.empty() || !onnx_exclude_outputs.empty(); }
  onnx_io::LoadOptions load_options() const;
  // The model loader these flags describe: the file, its shapes inferred if asked, with the
  // outputs marked as asked (unmarked with marked_outputs = false).
  Loader<ModelPtr> loader(bool marked_outputs = true) const;
  // `model` with the outputs marked as --onnx-outputs / --onnx-exclude-outputs ask.
  Loader<ModelPtr> marked(Loader<ModelPtr> model) const;
  // The model runners share, loaded once. Polygraphy's loaders are lazy: a runner loads the
  // model when it is activated, and "Loading model: ..." follows that runner's "Activating"
  // line (for each runner that loads it; none for a backend whose Polygraphy runner opens an
  // unmodified file itself). shared_loader loads without that line, and loader_for gives each
  // runner a loader that prints it, as Polygraphy's would, on activation.
  Loader<ModelPtr> shared_loader() const;
  Loader<ModelPtr> loader_for(ModelPtr shared, bool backend_opens_model_file) const;
  // The model's protobuf, for the ONNX tools (no IR): see load_model_proto.
  surgeon::ModelFile load_proto() const;
};
// Whether a model argument names a model script (script.py[:func]) by its extension, the
// guess of --model-type.
bool names_model_script(const std::string& model_file);
// What the ONNX tools (surgeon, check, convert, inspect sparsity) read: the model file, or the
// ONNX file a model script's function's model was written to (script_model_file), its external
// data beside it. Logs Polygraphy's "Loading model: ..." line (`path`: the file as printed).
surgeon::ModelFile load_model_proto(const std::string& model_file, const std::string& path,
                                    bool script, const std::string& external_data_dir);
// Runs a model script (script.py[:func]) and gives the ONNX file its model was written to, in
// a temporary folder kept until the command exits.
std::string script_model_file(const std::string& model_file);

// `required` false: the model may be left out (`run --load-outputs a.json b.json` compares
// saved results only).
void add_model_args(CLI::App& app, ModelArgs& args, bool with_outputs, bool required = true);

}  // namespace parity::cli
