// Parsing of Polygraphy's argument syntax: per-output values split on the last colon
// ("out0:1e-3", a bare value is the default under key ""), bracketed lists, shapes, byte sizes.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "comparator/comparator.h"
#include "comparator/compare.h"
#include "comparator/data_loader.h"
#include "core/metadata.h"

namespace parity::cli {

// "a:b:c" -> ("a:b", "c"); "c" -> ("", "c"). Brackets are not special: Polygraphy splits on the
// last colon, so a value may not itself contain one.
std::pair<std::string, std::string> split_last_colon(const std::string& token);

// --atol / --rtol / --error-quantile: "[output:]number" tokens.
PerOutput<double> parse_per_output_number(const std::string& flag,
                                          const std::vector<std::string>& tokens);
PerOutput<int64_t> parse_per_output_int(const std::string& flag,
                                        const std::vector<std::string>& tokens);
// --check-error-stat: "[output:]{elemwise,max,mean,median,quantile}".
PerOutput<ErrorStat> parse_per_output_error_stat(const std::vector<std::string>& tokens);

// A number as Python's float() reads it (inf, -inf, nan included); nullopt if it is not one.
std::optional<double> parse_number(const std::string& text);

// "[1,3,224,224]" or "[1,'batch',-1]" (Polygraphy's shapes; a string or -1 is a dynamic dim).
DimList parse_dims(const std::string& flag, const std::string& token, const std::string& text);
// --input-shapes "name:[1,3,224,224]" tokens.
TensorMetadata parse_input_shapes(const std::string& flag, const std::vector<std::string>& tokens);
// --val-range "[min,max]" and "name:[min,max]" tokens.
std::map<std::string, ValueRange> parse_val_ranges(const std::vector<std::string>& tokens);
// --postprocess "[output:]top-K[,axis=A]" tokens.
TopKOptions parse_top_k(const std::vector<std::string>& tokens);

// "1073741824", "512M", "64KiB", "1g", "2GB": bytes (K/M/G/T are powers of 1024). Zero only with
// `allow_zero` (a threshold that every tensor passes).
size_t parse_byte_size(const std::string& flag, const std::string& text, bool allow_zero = false);

}  // namespace parity::cli
