// The ONNX loader: protobuf parsing, the header and signature checks, tensors (raw, typed,
// sparse) and external data resolved against a folder with real data files.
#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "onnx/model_io.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool ready = (parity::fuzz::use_small_limits(), true);
  (void)ready;
  try {
    auto model = parity::onnx_io::load_model_from_bytes(parity::fuzz::bytes_of(data, size), {},
                                                        parity::fuzz::external_data_folder());
    parity::onnx_io::serialize_model(*model);
  } catch (const parity::Error&) {
  }
  return 0;
}
