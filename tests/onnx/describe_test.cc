// describe_model: the layout of Polygraphy's `inspect model` for ONNX models.
#include <gtest/gtest.h>

#include "onnx/describe.h"
#include "support/onnx_text.h"

namespace parity::testing {
namespace {

constexpr const char* kModel = R"(
  <ir_version: 8, opset_import: ["" : 17, "com.example" : 1]>
  net (float[1, 3, N, M] x, bool c) => (float[1, 3, N, M] y)
  <float[2] w = {0.5, 2.0}>
  {
    a = Mul (x, w)
    y = If (c) <then_branch = t () => (float[1, 3, N, M] o1) { o1 = Neg (a) },
                else_branch = e () => (float[1, 3, N, M] o2) { o2 = Abs (a) }>
    z = com.example.Custom <alpha = 0.5, k = 3, mode = "fast", ints = [1, 2], names = ["p", "q"]> (a)
  }
)";

TEST(Describe, InputsAndOutputsOnly) {
  auto model = model_from_text(kModel);
  EXPECT_EQ(onnx_io::describe_model(*model),
            "Name: net | ONNX Opset: 17 | Other Opsets: {'com.example': 1}\n"
            "\n"
            "---- 2 Graph Input(s) ----\n"
            "{x [dtype=float32, shape=(1, 3, 'N', 'M')],\n"
            " c [dtype=bool, shape=()]}\n"
            "\n"
            "---- 1 Graph Output(s) ----\n"
            "{y [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "\n"
            "---- 1 Initializer(s) ----\n"
            "\n"
            "---- 3 Node(s) ----");
}

TEST(Describe, LayersAttributesAndWeights) {
  auto model = model_from_text(kModel);
  onnx_io::DescribeOptions options;
  options.layers = options.attrs = options.weights = true;
  EXPECT_EQ(onnx_io::describe_model(*model, options),
            "Name: net | ONNX Opset: 17 | Other Opsets: {'com.example': 1}\n"
            "\n"
            "---- 2 Graph Input(s) ----\n"
            "{x [dtype=float32, shape=(1, 3, 'N', 'M')],\n"
            " c [dtype=bool, shape=()]}\n"
            "\n"
            "---- 1 Graph Output(s) ----\n"
            "{y [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "\n"
            "---- 1 Initializer(s) ----\n"
            "Initializer | w [dtype=float32, shape=[2]] | Values:\n"
            "\t[0.5, 2.0]\n"
            "\n"
            "---- 3 Node(s) ----\n"
            "Node 0    | Mul_0 [Op: Mul]\n"
            "\t{x [dtype=float32, shape=(1, 3, 'N', 'M')],\n"
            "\t Initializer | w [dtype=float32, shape=(2,)]}\n"
            "\t -> {a}\n"
            "\n"
            "Node 1    | If_1 [Op: If]\n"
            "\t{c [dtype=bool, shape=()]}\n"
            "\t -> {y [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "\t---- Attributes ----\n"
            "\tIf_1.then_branch = \n"
            "\t\t\t---- 0 Subgraph Input(s) ----\n"
            "\t\t\t{}\n"
            "\t\t\t\n"
            "\t\t\t---- 1 Subgraph Output(s) ----\n"
            "\t\t\t{o1 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "\t\t\t\n"
            "\t\t\t---- 0 Initializer(s) ----\n"
            "\t\t\t{}\n"
            "\t\t\t\n"
            "\t\t\t---- 1 Node(s) ----\n"
            "\t\t\tNode 0    | Neg_0 [Op: Neg]\n"
            "\t\t\t\t{a}\n"
            "\t\t\t\t -> {o1 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "\t\t\t\n"
            "\tIf_1.else_branch = \n"
            "\t\t\t---- 0 Subgraph Input(s) ----\n"
            "\t\t\t{}\n"
            "\t\t\t\n"
            "\t\t\t---- 1 Subgraph Output(s) ----\n"
            "\t\t\t{o2 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "\t\t\t\n"
            "\t\t\t---- 0 Initializer(s) ----\n"
            "\t\t\t{}\n"
            "\t\t\t\n"
            "\t\t\t---- 1 Node(s) ----\n"
            "\t\t\tNode 0    | Abs_0 [Op: Abs]\n"
            "\t\t\t\t{a}\n"
            "\t\t\t\t -> {o2 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "\t\t\t\n"
            "\n"
            "Node 2    | Custom_2 [Op: Custom]\n"
            "\t{a}\n"
            "\t -> {z}\n"
            "\t---- Attributes ----\n"
            "\tCustom_2.alpha = 0.5\n"
            "\tCustom_2.k = 3\n"
            "\tCustom_2.mode = fast\n"
            "\tCustom_2.ints = [1, 2]\n"
            "\tCustom_2.names = ['p', 'q']\n");
}

TEST(Describe, CustomValueFormatterAndLayersWithoutWeights) {
  auto model = model_from_text(kModel);
  onnx_io::DescribeOptions options;
  options.layers = true;
  options.format_values = [](const Tensor& t) { return "values of " + shape_str(t.shape()); };
  std::string text = onnx_io::describe_model(*model, options);
  EXPECT_NE(text.find("---- 1 Initializer(s) ----\n{w [dtype=float32, shape=(2,)]}\n\n"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("---- Attributes ----"), std::string::npos);
  options.weights = true;
  text = onnx_io::describe_model(*model, options);
  EXPECT_NE(text.find("| Values:\n\tvalues of (2,)\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace parity::testing
