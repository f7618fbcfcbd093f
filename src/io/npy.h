// NumPy .npy and .npz files (version 1.0/2.0/3.0 headers, little-endian, C order).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/tensor.h"

namespace parity::io {

std::string npy_encode(const Tensor& t);      // the bytes np.save would write
Tensor npy_decode(const std::string& bytes);  // Error for malformed or unsupported data
// The same, taking the buffer: a numeric little-endian C-order array is a view into it (no
// copy), any other the copy npy_decode makes.
Tensor npy_decode_in_place(std::shared_ptr<std::string> bytes);
bool is_npz(const std::string& bytes);  // a zip archive
// Arrays of an .npz archive (stored or deflated members), in archive order.
std::vector<std::pair<std::string, Tensor>> npz_decode(const std::string& bytes);
std::string npz_encode(const std::vector<std::pair<std::string, Tensor>>& arrays);

void save_npy(const std::string& path, const Tensor& t);
Tensor load_npy(const std::string& path);

}  // namespace parity::io
