// describe_model: the layout of Polygraphy's `inspect model` for ONNX models (the CLI's output
// is checked against Polygraphy's own in tests/cli/inspect_model_print_test.cc).
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
            "    [0.5 2. ]\n"
            "\n"
            "---- 3 Node(s) ----\n"
            "Node 0    |  [Op: Mul]\n"
            "    {x [dtype=float32, shape=(1, 3, 'N', 'M')],\n"
            "     Initializer | w [dtype=float32, shape=(2,)]}\n"
            "     -> {a}\n"
            "\n"
            "Node 1    |  [Op: If]\n"
            "    {c [dtype=bool, shape=()]}\n"
            "     -> {y [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "    ---- Attributes ----\n"
            "    then_branch = \n"
            "            ---- 0 Subgraph Input(s) ----\n"
            "            {}\n"
            "            \n"
            "            ---- 1 Subgraph Output(s) ----\n"
            "            {o1 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "            \n"
            "            ---- 0 Initializer(s) ----\n"
            "            {}\n"
            "            \n"
            "            ---- 1 Node(s) ----\n"
            "            Node 0    |  [Op: Neg]\n"
            "                {a}\n"
            "                 -> {o1 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "            \n"
            "    else_branch = \n"
            "            ---- 0 Subgraph Input(s) ----\n"
            "            {}\n"
            "            \n"
            "            ---- 1 Subgraph Output(s) ----\n"
            "            {o2 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "            \n"
            "            ---- 0 Initializer(s) ----\n"
            "            {}\n"
            "            \n"
            "            ---- 1 Node(s) ----\n"
            "            Node 0    |  [Op: Abs]\n"
            "                {a}\n"
            "                 -> {o2 [dtype=float32, shape=(1, 3, 'N', 'M')]}\n"
            "            \n"
            "\n"
            "Node 2    |  [Op: Custom]\n"
            "    {a}\n"
            "     -> {z}\n"
            "    ---- Attributes ----\n"
            "    alpha = 0.5\n"
            "    k = 3\n"
            "    mode = fast\n"
            "    ints = [1, 2]\n"
            "    names = ['p', 'q']\n");
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
  EXPECT_NE(text.find("| Values:\n    values of (2,)\n"), std::string::npos) << text;
}

}  // namespace
}  // namespace parity::testing
