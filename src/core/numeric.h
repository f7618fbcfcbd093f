// Element access for every numeric element type through double, the comparator's working type.
// Every value of every supported type except int64/uint64 beyond 2^53 is exact in a double.
#pragma once

#include <vector>

#include "core/tensor.h"

namespace parity {

// Any type the comparator can do arithmetic on: floating (incl. float16, bfloat16, float8),
// integer (incl. int4/uint4) and bool. Not string or complex.
bool dtype_is_numeric(DataType t);

// All elements of `t`, converted to double. Throws for non-numeric types.
std::vector<double> tensor_to_doubles(const Tensor& t);

// A new tensor of `dtype` holding `t`'s values (NumPy's astype: floats to integers truncate
// toward zero, anything non-zero is true).
Tensor cast_tensor(const Tensor& t, DataType dtype);

}  // namespace parity
