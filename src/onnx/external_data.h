// External data: initializers whose bytes live in files beside the model. Each file is mapped
// once per model and tensors borrow their slice of the mapping, so a multi-gigabyte model is
// not copied into memory. Locations are checked so that a model cannot read outside its folder.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "core/tensor.h"

namespace onnx {
class GraphProto;
class TensorProto;
}  // namespace onnx

namespace parity::onnx_io {

// Calls `fn` on every tensor of the graph: initializers, sparse initializers and attribute
// tensors, in subgraphs too (what a writer of external data must visit).
void visit_tensors(::onnx::GraphProto& g, const std::function<void(::onnx::TensorProto&)>& fn);
// Whether the tensor's bytes live in an external file.
bool is_external(const ::onnx::TensorProto& t);

// A read-only view of a whole file, unmapped when the last tensor using it goes away.
struct MappedFile {
  std::string path;
  void* data = nullptr;
  size_t size = 0;

  MappedFile() = default;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();
};

// A zero-filled tensor for --ignore-external-data. Large ones borrow an anonymous mapping, so
// the zeros of a multi-gigabyte model cost no memory until something reads them.
Tensor zero_tensor(DataType dtype, const Shape& shape);

class ExternalDataStore {
 public:
  // `dir` is the folder locations are relative to (the model's folder or --external-data-dir).
  explicit ExternalDataStore(std::string dir) : dir_(std::move(dir)) {}

  // The tensor `proto` (data_location EXTERNAL) describes, borrowing the mapped file when its
  // offset is aligned for the element type, copying otherwise.
  Tensor load(const ::onnx::TensorProto& proto, DataType dtype, const Shape& shape);

 private:
  std::shared_ptr<MappedFile> map(const std::string& location, const std::string& tensor_name);

  std::string dir_;
  std::map<std::string, std::shared_ptr<MappedFile>> files_;  // by resolved path
};

}  // namespace parity::onnx_io
