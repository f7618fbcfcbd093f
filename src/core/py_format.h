// Number formatting exactly as Python and NumPy print it, so that Parity's report lines are
// byte-for-byte Polygraphy's.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace parity {

// Python's format(v, '.{precision}g'): "1e-05", "0.33333", "inf", "-inf", "nan".
std::string format_g(double v, int precision);

// Python's repr(float) / str(float): the shortest digits that round-trip, positional for
// exponents in [-4, 16) ("0.0001", "100.0"), scientific otherwise ("1e-05", "1.5e+16").
std::string format_repr(double v);

// Python's str(list_of_str): "['a', 'b']".
std::string format_name_list(const std::vector<std::string>& names);

// NumPy's str() of one element of type `dtype` held in a double: "3", "2.5", "1e-07", "True".
std::string numpy_scalar_str(double v, DataType dtype);

// NumPy's str(array) with default print options (precision 8, 75 columns, no summarisation
// below 1000 elements): "[0.   0.1  0.5 ]", "[[1 2]\n [3 4]]", "[ True False]".
// Element types NumPy lacks (bfloat16, float8, int4) print like NumPy's nearest kin.
std::string numpy_array_str(const Tensor& t);

// NumPy's print options that `inspect data` sets (np.set_printoptions): items shown at each end
// of a summarised axis (edgeitems; -1 shows every element) and the line width (-1: no wrapping).
struct ArrayPrintOptions {
  int64_t edge_items = 3;
  int64_t line_width = 75;
};
std::string numpy_array_str(const Tensor& t, const ArrayPrintOptions& options);

// Python's repr(str): single quotes unless the text holds one and no double quote, escapes
// for backslashes, the quote, \t \n \r and other control characters ("it's", 'a\tb').
// Bytes from 0x80 up are kept as they are (UTF-8 text Python would print as it is).
std::string py_repr(std::string_view s);

// Python literals, for the scripts Parity writes (--gen-script): each reads back as the value.
std::string py_str(std::string_view s);                      // 'it\'s'
std::string py_float(double v);                              // 1e-05, float('inf')
std::string py_bool(bool b);                                 // True
std::string py_list(const std::vector<std::string>& items);  // ['a', 'b']

}  // namespace parity
