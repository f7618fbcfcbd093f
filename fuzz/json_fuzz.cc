// Polygraphy's JSON files: input lists and run results (base64 .npy payloads inside).
#include "core/error.h"
#include "fuzz/fuzz_util.h"
#include "io/json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static bool ready = (parity::fuzz::use_small_limits(), true);
  (void)ready;
  const std::string text = parity::fuzz::bytes_of(data, size);
  try {
    parity::io::inputs_from_json(text);
  } catch (const parity::Error&) {
  }
  try {
    parity::io::run_results_from_json(text);
  } catch (const parity::Error&) {
  }
  return 0;
}
