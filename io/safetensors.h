#pragma once
// Reading and writing safetensors files (huggingface/safetensors format):
//   8-byte little-endian u64 N | N bytes of JSON header | data buffer
// The header maps each tensor name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
// into the data buffer) plus an optional "__metadata__" map of string -> string. The tensors
// cover the data buffer exactly: sorted by offset, no holes, no overlaps, nothing after the last.
//
// The reader validates all of that when it opens the file and reads tensor data on demand with
// pread, so multi-GB golden files are never loaded whole. Every problem is one io::Error whose
// message starts with the file path and names the tensor where there is one.
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "io/dtype.h"
#include "io/error.h"
#include "io/tensor.h"

namespace mlacheck::io {

// Where one tensor lives: [begin, end) are byte offsets in the data buffer (the byte after the
// header is offset 0).
struct TensorInfo {
  DType dtype = DType::U8;
  std::vector<int64_t> shape;
  uint64_t begin = 0;
  uint64_t end = 0;
};

namespace detail {
class ReadOnlyFile;
}

class SafetensorsReader {
 public:
  // Opens the file, reads and validates the header against the file size. Throws Error.
  explicit SafetensorsReader(std::filesystem::path path);

  const std::filesystem::path& path() const { return path_; }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }

  // Tensor names in data-offset order (ties between empty tensors broken by name).
  std::vector<std::string> names() const;
  bool contains(std::string_view name) const;
  // Throws Error naming the file and the tensor if there is no such tensor.
  const TensorInfo& info(std::string_view name) const;

  // The whole tensor. Throws Error if absent or if the file cannot be read (e.g. it shrank).
  Tensor read(std::string_view name) const;

  // Rows [first, first + count) of the outermost dimension into `out`, whose size must be exactly
  // count * (bytes of one row). For streaming large caches without loading them whole. Throws
  // Error for a 0-d tensor, a range outside [0, shape[0]] or a wrong `out` size.
  void read_rows(std::string_view name, int64_t first, int64_t count,
                 std::span<std::byte> out) const;

  // The whole tensor's bytes mapped read-only from the file (detail::ReadOnlyFile::map): for
  // multi-GB tensors read once, where allocating, zero-filling and copying into a buffer costs
  // more than using them. `owner` keeps the mapping (and so `bytes`) alive. Throws Error if absent
  // or if the file is now too short (it shrank); the file must not shrink while mapped.
  struct Mapped {
    std::span<const std::byte> bytes;
    std::shared_ptr<const void> owner;
  };
  Mapped map(std::string_view name) const;

 private:
  std::filesystem::path path_;
  std::shared_ptr<const detail::ReadOnlyFile> file_;  // shared: copies of a reader share one fd
  std::map<std::string, std::string> metadata_;
  std::map<std::string, TensorInfo, std::less<>> tensors_;
  std::vector<std::string> order_;  // names by data offset
  uint64_t data_start_ = 0;          // file offset of the data buffer: 8 + header length

  const TensorInfo& find(std::string_view name) const;
  void read_bytes(std::string_view name, uint64_t begin, std::span<std::byte> out) const;
};

// Fills rows [first, first + count) of a tensor's outermost dimension into `out` (their bytes
// exactly): a tensor made when it is written, never held whole.
using RowProducer = std::function<void(int64_t first, int64_t count, std::span<std::byte> out)>;
// The bytes of one chunk: big enough that a call and a write per chunk cost nothing next to the
// bytes, small next to any cache (a 15 GB cache's FP8 codes are 2000 chunks).
inline constexpr std::size_t kChunkBytes = std::size_t{4} << 20;
// Produces rows [0, rows) into one buffer, as many whole rows (at least one) as kChunkBytes holds
// at a time, and hands each chunk to `sink` in order: how the writer writes a generated tensor,
// and how a hash is taken over one.
void for_each_chunk(int64_t rows, std::size_t row_bytes, const RowProducer& produce,
                    const std::function<void(std::span<const std::byte>)>& sink);

class SafetensorsWriter {
 public:
  // Later calls with the same key replace the value. Throws Error if key or value is not UTF-8.
  void set_metadata(std::string key, std::string value);

  // Throws Error on an empty, duplicate, reserved ("__metadata__") or non-UTF-8 name, a negative
  // or overflowing shape, or bytes.size() != numel * dtype_size.
  void add(std::string name, Tensor tensor);

  // The same without a copy: the writer keeps a view of `bytes`, which must stay valid and
  // unchanged until write() returns. For multi-GB caches that already live in memory.
  void add_view(std::string name, DType dtype, std::vector<int64_t> shape,
                std::span<const std::byte> bytes);

  // A tensor of rank >= 1 whose bytes `produce` makes while write() runs, a chunk of rows at a
  // time (for_each_chunk), in row order: for a tensor derived from others that must not be held
  // whole (the golden file's quantized caches, issue 11 item 6). Throws as add() does, or for a
  // 0-d shape.
  void add_generated(std::string name, DType dtype, std::vector<int64_t> shape, RowProducer produce);

  // Writes path + ".tmp" and renames it onto path, so a failed write never leaves a half file
  // (the .tmp is removed on failure). Tensors are laid out by element size, largest first, then in
  // the order they were added, so that every tensor is aligned to its element size (the data
  // buffer starts on a multiple of 8: the header is padded with spaces). Throws Error.
  void write(const std::filesystem::path& path) const;

 private:
  std::map<std::string, std::string> metadata_;
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<std::byte> owned;      // empty for add_view() and add_generated()
    std::span<const std::byte> bytes;  // owned's bytes, or the caller's
    RowProducer produce;               // add_generated(): makes the bytes when written
    std::size_t byte_count;            // bytes.size(), or what produce makes
  };
  std::vector<Entry> tensors_;  // in add() order
  void check_new(const std::string& name, DType dtype, const std::vector<int64_t>& shape,
                 std::size_t byte_count) const;
};

// One tensor that must have the given dtype (and rank, if given), e.g. for inputs of a known
// format. Throws Error naming file and tensor on a mismatch:
//   "file.safetensors: tensor 'q' has dtype F32, expected BF16"
Tensor read_checked(const SafetensorsReader& reader, std::string_view name, DType expected,
                    std::optional<std::size_t> rank = {});

}  // namespace mlacheck::io
