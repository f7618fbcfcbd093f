// The progress line of long runs: drawn on a terminal (checked through a pseudo-terminal made
// by python3's pty module), cleared before every log line so that the lines read as without
// it, and absent when the output is piped or with --silent.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "support/test_util.h"

namespace parity::testing {
namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs parity with stdin, stdout and stderr on a pseudo-terminal and prints what the terminal
// got, as Python's repr of the bytes ("RAW ..."), then the screen as a terminal shows it: a
// carriage return goes back to the start of the line, characters overwrite what is there
// ("SCREEN" lines, trailing blanks cut).
CommandResult run_on_terminal(const std::vector<std::string>& args) {
  std::string argv = "['" PARITY_CLI "'";
  for (const auto& a : args) argv += ", '" + a + "'";
  argv += "]";
  return run_python(
      "import os, pty, subprocess, sys\n"
      "master, slave = pty.openpty()\n"
      "p = subprocess.Popen(" +
      argv +
      ", stdin=slave, stdout=slave, stderr=slave)\n"
      "os.close(slave)\n"
      "raw = b''\n"
      "while True:\n"
      "    try:\n"
      "        chunk = os.read(master, 65536)\n"
      "    except OSError:\n"
      "        break\n"
      "    if not chunk:\n"
      "        break\n"
      "    raw += chunk\n"
      "status = p.wait()\n"
      "text = raw.decode().replace('\\r\\n', '\\n')\n"
      "screen, line, col = [], [], 0\n"
      "i = 0\n"
      "while i < len(text):\n"
      "    c = text[i]; i += 1\n"
      "    if c == '\\r': col = 0\n"
      "    elif c == '\\n': screen.append(''.join(line).rstrip()); line, col = [], 0\n"
      "    else:\n"
      "        if col < len(line): line[col] = c\n"
      "        else: line.append(c)\n"
      "        col += 1\n"
      "if ''.join(line).strip(): screen.append(''.join(line).rstrip())\n"
      "print('RAW', repr(raw))\n"
      "for s in screen: print('SCREEN', s)\n"
      "print('STATUS', status)\n");
}

// The SCREEN lines of run_on_terminal's output.
std::vector<std::string> screen_lines(const std::string& output) {
  std::vector<std::string> lines;
  size_t at = 0;
  while (at < output.size()) {
    size_t end = output.find('\n', at);
    if (end == std::string::npos) end = output.size();
    const std::string line = output.substr(at, end - at);
    if (line.rfind("SCREEN ", 0) == 0) lines.push_back(line.substr(7));
    at = end + 1;
  }
  return lines;
}

TEST(RunProgress, IterationsShowOnATerminalAndLeaveTheLogLinesWhole) {
  const std::string model = source_path("examples/identity.onnx");
  const std::vector<std::string> args = {"run",          model, "--pluginref",  "--onnxrt",
                                         "--iterations", "40",  "--log-format", "no-colors"};
  const CommandResult tty = run_on_terminal(args);
  ASSERT_TRUE(has(tty.output, "STATUS 0")) << tty.output;
  // Drawn: each runner's iterations, with the count.
  EXPECT_TRUE(has(tty.output, "| Iteration 0/40 (0%)")) << tty.output;
  EXPECT_TRUE(has(tty.output, "\\r")) << tty.output;
  EXPECT_FALSE(has(tty.output, "\\x1b")) << tty.output;  // plain characters, no escapes
  // Cleared: no screen line holds progress, and every one is a log line from its start.
  const std::vector<std::string> screen = screen_lines(tty.output);
  ASSERT_FALSE(screen.empty()) << tty.output;
  for (const std::string& line : screen) {
    EXPECT_FALSE(has(line, "| Iteration ")) << line;
    EXPECT_TRUE(line.empty() || line[0] == '[' || line[0] == ' ') << line;
  }
  // The screen reads as the piped output does, line for line.
  const CommandResult piped = run_parity(args);
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  size_t piped_lines = 0;
  for (char c : piped.output) piped_lines += c == '\n';
  EXPECT_EQ(screen.size(), piped_lines) << tty.output << "\n----\n" << piped.output;
  for (const char* line : {"Accuracy Summary", "PASSED | Runtime"}) {
    bool seen = false;
    for (const std::string& s : screen) seen = seen || has(s, line);
    EXPECT_TRUE(seen) << line << "\n" << tty.output;
  }
  // Piped: no progress line, no terminal control.
  EXPECT_FALSE(has(piped.output, "| Iteration ")) << piped.output;
  EXPECT_FALSE(has(piped.output, "\r")) << piped.output;

  // --silent: nothing at all, on the terminal too.
  std::vector<std::string> silent = args;
  silent.push_back("--silent");
  const CommandResult quiet = run_on_terminal(silent);
  ASSERT_TRUE(has(quiet.output, "STATUS 0")) << quiet.output;
  EXPECT_FALSE(has(quiet.output, "Iteration")) << quiet.output;
  EXPECT_TRUE(has(quiet.output, "RAW b''")) << quiet.output;
}

TEST(RunProgress, LayerwiseRunsShowTheirNodes) {
  // A chain of 3 nodes, streamed by the reference and computed in batches by ONNX Runtime.
  TempDir dir;
  const std::string model = dir.file("chain.onnx");
  auto made = run_python(
      "import onnx\n"
      "from onnx import helper as h, TensorProto as T\n"
      "g = h.make_graph([h.make_node('Relu', ['x'], ['a'], name='r'),\n"
      "                  h.make_node('Neg', ['a'], ['b'], name='n'),\n"
      "                  h.make_node('Abs', ['b'], ['y'], name='s')], 'g',\n"
      "                 [h.make_tensor_value_info('x', T.FLOAT, [4])],\n"
      "                 [h.make_tensor_value_info('y', T.FLOAT, [4])])\n"
      "onnx.save(h.make_model(g, opset_imports=[h.make_opsetid('', 17)]), '" +
      model + "')\n");
  ASSERT_EQ(made.exit_code, 0) << made.output;
  const std::vector<std::string> args = {
      "run",  model, "--pluginref",  "--onnxrt", "--onnx-outputs",
      "mark", "all", "--log-format", "no-colors"};
  const CommandResult tty = run_on_terminal(args);
  ASSERT_TRUE(has(tty.output, "STATUS 0")) << tty.output;
  EXPECT_TRUE(has(tty.output, "| Node 1/3 (33%)")) << tty.output;
  for (const std::string& line : screen_lines(tty.output))
    EXPECT_FALSE(has(line, "| Node ")) << line;
  // Saving every tensor of one runner in batches of nodes shows them too.
  const CommandResult batches =
      run_on_terminal({"run", model, "--onnxrt", "--onnx-outputs", "mark", "all", "--save-outputs",
                       dir.file("all.json"), "--log-format", "no-colors"});
  ASSERT_TRUE(has(batches.output, "STATUS 0")) << batches.output;
  EXPECT_TRUE(has(batches.output, "| Node 0/3 (0%)")) << batches.output;
  const CommandResult piped = run_parity(args);
  ASSERT_EQ(piped.exit_code, 0) << piped.output;
  EXPECT_FALSE(has(piped.output, "| Node ")) << piped.output;
}

}  // namespace
}  // namespace parity::testing
