// Feeds read from files and folders (--load-inputs): Polygraphy's JSON input lists (many feeds a
// file), .npz archives (one feed: an array per input) and .npy files (one feed of a
// single-input model). Folders are read in file name order (zero-pad numbers in the names).
// Files are opened one at a time as the feeds are asked for, so memory holds one file's feeds.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "comparator/data_loader.h"

namespace parity::io {

class FileFeedSource : public FeedSource {
 public:
  // Folders are expanded to their .json, .npz and .npy files here; Error for a path that does
  // not exist or a folder without such files.
  explicit FileFeedSource(const std::vector<std::string>& paths);
  void set_input_metadata(const TensorMetadata& metadata) override { metadata_ = metadata; }
  std::optional<size_t> size() const override { return std::nullopt; }
  // Sequential reads are cheap; asking for an earlier feed reads the files again from the start.
  std::optional<TensorMap> get(size_t i) override;
  const std::vector<std::string>& files() const { return files_; }

 private:
  bool open_next();  // false past the last file
  std::vector<TensorMap> read(const std::string& path) const;

  std::vector<std::string> files_;
  TensorMetadata metadata_;
  size_t next_file_ = 0;
  size_t base_ = 0;  // dataset index of feeds_[0]
  std::vector<TensorMap> feeds_;
};

}  // namespace parity::io
