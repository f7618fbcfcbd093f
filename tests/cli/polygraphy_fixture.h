// Polygraphy's printed output kept as a fixture (tests/cli/fixtures/<folder>/*.txt): two comment
// lines, the second "# polygraphy <args>", then what Polygraphy printed, with the repository's
// path written {ROOT}. The tests run parity with the same arguments in the fixture's folder.
#pragma once

#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include "support/test_util.h"

namespace parity::testing {

inline std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = s.find(from, pos)) != std::string::npos; pos += to.size())
    s.replace(pos, from.size(), to);
  return s;
}

struct PolygraphyFixture {
  std::vector<std::string> args;  // after "polygraphy"
  std::string printed;            // what Polygraphy printed, {ROOT} replaced
};

// `folder` is relative to the repository and ends with '/'.
inline PolygraphyFixture read_polygraphy_fixture(const std::string& folder,
                                                 const std::string& name) {
  // The path as the working directory names it (symbolic links resolved), as Python's does.
  const std::string root = std::filesystem::canonical(PARITY_SOURCE_DIR).string();
  std::string text = replace_all(read_text(source_path(folder + name)), "{ROOT}", root);
  std::istringstream lines(text);
  std::string comment, command;
  std::getline(lines, comment);
  std::getline(lines, command);
  PolygraphyFixture f;
  std::istringstream words(command.substr(std::string("# polygraphy ").size()));
  for (std::string w; words >> w;) f.args.push_back(w);
  f.printed = text.substr(comment.size() + command.size() + 2);
  return f;
}

// Runs parity with `args` in `folder`, as Polygraphy was run there.
inline CommandResult run_parity_in(const std::string& folder,
                                   const std::vector<std::string>& args) {
  std::string command = "cd '" + source_path(folder) + "' && '" + PARITY_CLI + "'";
  for (const auto& a : args) command += " '" + a + "'";
  return run_command(command);
}

}  // namespace parity::testing
