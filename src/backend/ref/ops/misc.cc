// Ops the reference backend refuses on purpose, with the reason, rather than the generic
// "no reference implementation registered" message.
#include "backend/ref/ops/kernel_util.h"

namespace parity::ref {
namespace {

// ImageDecoder (opset 20) decodes JPEG, PNG, BMP, TIFF, WebP... byte streams: that needs image
// codec libraries, which the reference backend does not link.
class ImageDecoder : public Kernel {
 public:
  explicit ImageDecoder(const OpContext& ctx) {
    ctx.fail(
        "ImageDecoder needs image codecs (JPEG, PNG, BMP, TIFF, WebP...), which the "
        "reference backend does not include; decode the images before the model, or run "
        "this model on ONNX Runtime (--onnxrt)");
  }
  Outputs run(const Inputs&, RunContext&) override { return {}; }
};
PARITY_REF_OP("", "ImageDecoder", 20, kOpsetMax, ImageDecoder);

}  // namespace
}  // namespace parity::ref
