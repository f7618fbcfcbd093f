// A JSON reader for Polygraphy's files. nlohmann's parser reads a character at a time, which
// makes a 100 MB results file (mostly base64 strings) take seconds; this one copies plain
// strings in one block and is an order of magnitude faster. It also accepts the NaN, Infinity
// and -Infinity that Python's json module writes for non-finite floats.
#pragma once

#include <string_view>

#include <nlohmann/json.hpp>

namespace parity::io {

// Parses one JSON document (objects keep their key order). Error on malformed text, with the
// line and column of the problem.
nlohmann::ordered_json parse_json(std::string_view text);

}  // namespace parity::io
