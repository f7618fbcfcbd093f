// A JSON reader for Polygraphy's files. nlohmann's parser reads a character at a time, which
// makes a 100 MB results file (mostly base64 strings) take seconds; this one copies plain
// strings in one block and is an order of magnitude faster. It also accepts the NaN, Infinity
// and -Infinity that Python's json module writes for non-finite floats.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace parity::io {

// Base64 payloads decoded while parsing. Polygraphy's arrays are base64 strings under the key
// "array"; copying such a string into the document and decoding it later made loading run at
// memory-allocation speed (page faults of three copies of every array). With a DecodedPayloads
// given, an "array" string that is valid base64 is decoded straight from the text into a buffer
// here, and the document holds a binary value of subtype kDecodedPayload with the buffer's
// index (8 bytes, little-endian) instead; readers then view their arrays in that buffer.
struct DecodedPayloads {
  static constexpr std::uint64_t kSubtype = 0x50;
  std::vector<std::shared_ptr<std::string>> buffers;
  // The caller owns the text (a file it read) and reads it no more: the pages of each decoded
  // string are given back as soon as it is decoded, so a load peaks at about the larger of the
  // file and its arrays rather than at both (their bytes read as zeros afterwards).
  bool release_decoded_text = false;
};

// Parses one JSON document (objects keep their key order). Error on malformed text, with the
// line and column of the problem.
nlohmann::ordered_json parse_json(std::string_view text, DecodedPayloads* payloads = nullptr);

}  // namespace parity::io
