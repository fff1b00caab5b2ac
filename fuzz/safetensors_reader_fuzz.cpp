// Fuzz target: the safetensors reader and writer (io/safetensors.h).
// Oracle: opening any bytes either succeeds or throws io::Error. A file that opened is consistent
// (names in offset order, each tensor's byte count what its dtype and shape say) and reads without
// an error: every tensor whole, all rows at once and row by row, all giving the same bytes, while
// row ranges outside the tensor throw io::Error. Written back by SafetensorsWriter it reads back
// with the same dtypes, shapes, bytes and metadata. Any other outcome is a finding (abort or an
// escaping exception: libFuzzer saves the input).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "fuzz/finding.h"
#include "fuzz/scratch.h"
#include "io/safetensors.h"

namespace {

namespace io = mlacheck::io;
using mlacheck::fuzz::expect_throws;
using mlacheck::fuzz::finding;

// Bytes of one row (one index of the outermost dimension); nothing when that product overflows,
// which a file can only get away with when the outermost dimension is 0.
bool row_bytes_of(const io::TensorInfo& info, uint64_t& out) {
  out = io::dtype_size(info.dtype);
  for (std::size_t i = 1; i < info.shape.size(); ++i)
    if (__builtin_mul_overflow(out, static_cast<uint64_t>(info.shape[i]), &out)) return false;
  return true;
}

void check_rows(const io::SafetensorsReader& r, const std::string& name, const io::Tensor& whole) {
  const io::TensorInfo& info = r.info(name);
  if (info.shape.empty()) {
    std::vector<std::byte> one(whole.bytes.size());
    expect_throws<io::Error>([&] { r.read_rows(name, 0, 1, one); },
                             "read_rows of a 0-d tensor did not throw");
    return;
  }
  const int64_t rows = info.shape[0];
  uint64_t row = 0;
  if (!row_bytes_of(info, row)) {
    r.read_rows(name, 0, 0, {});
    return;
  }
  std::vector<std::byte> all(whole.bytes.size());
  r.read_rows(name, 0, rows, all);
  if (all != whole.bytes) finding("read_rows of every row differs from read()");
  // Row by row (the first rows and the last: inputs are small, but keep each run short).
  for (int64_t i = 0; i < rows; i = i < 64 ? i + 1 : std::max(i + 1, rows - 1)) {
    std::vector<std::byte> one(row);
    r.read_rows(name, i, 1, one);
    const auto at = whole.bytes.begin() + static_cast<std::ptrdiff_t>(static_cast<uint64_t>(i) * row);
    if (!std::equal(one.begin(), one.end(), at))
      finding("read_rows of one row differs from the same bytes of read()");
  }
  std::vector<std::byte> one(row), extra(all.size() + 1);
  const auto refused = [&](int64_t first, int64_t count, std::span<std::byte> out, const char* what) {
    expect_throws<io::Error>([&] { r.read_rows(name, first, count, out); }, what);
  };
  refused(rows, 1, one, "read_rows past the last row did not throw");
  refused(-1, 1, one, "read_rows from row -1 did not throw");
  refused(0, -1, {}, "read_rows of -1 rows did not throw");
  refused(0, rows, extra, "read_rows into a wrong-sized buffer did not throw");
}

void check_round_trip(const io::SafetensorsReader& r, const std::vector<io::Tensor>& tensors) {
  static const mlacheck::fuzz::ScratchDir dir;
  const std::vector<std::string> names = r.names();
  io::SafetensorsWriter w;
  for (const auto& [k, v] : r.metadata()) w.set_metadata(k, v);
  for (std::size_t i = 0; i < names.size(); ++i) w.add(names[i], tensors[i]);
  const auto path = dir.file("round_trip.safetensors");
  w.write(path);
  const io::SafetensorsReader again(path);
  if (again.metadata() != r.metadata()) finding("round trip changed the metadata");
  std::vector<std::string> before = names, after = again.names();
  std::sort(before.begin(), before.end());
  std::sort(after.begin(), after.end());
  if (before != after) finding("round trip changed the tensor names");
  for (std::size_t i = 0; i < names.size(); ++i) {
    const io::Tensor t = again.read(names[i]);
    if (t.dtype != tensors[i].dtype || t.shape != tensors[i].shape || t.bytes != tensors[i].bytes)
      finding("round trip changed a tensor's dtype, shape or bytes");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static mlacheck::fuzz::InputFile input;
  const std::string& path = input.write({data, size});
  std::optional<io::SafetensorsReader> reader;
  try {
    reader.emplace(path);
  } catch (const io::Error&) {
    return 0;  // the one documented way to refuse a file
  }
  // The file opened: from here on nothing may throw (memfds do not shrink under the reader).
  const io::SafetensorsReader& r = *reader;
  std::vector<io::Tensor> tensors;
  uint64_t last_begin = 0;
  for (const std::string& name : r.names()) {
    if (!r.contains(name)) finding("names() lists a tensor contains() denies");
    const io::TensorInfo& info = r.info(name);
    if (info.begin < last_begin) finding("names() is not in data-offset order");
    last_begin = info.begin;
    io::Tensor t = r.read(name);
    if (t.dtype != info.dtype || t.shape != info.shape || t.bytes.size() != info.end - info.begin ||
        t.bytes.size() != static_cast<uint64_t>(t.numel()) * io::dtype_size(t.dtype))
      finding("read() disagrees with info() or with dtype x shape");
    check_rows(r, name, t);
    tensors.push_back(std::move(t));
  }
  expect_throws<io::Error>([&] { (void)r.read("\x01no such tensor"); },
                           "read() of a missing tensor did not throw");
  check_round_trip(r, tensors);
  return 0;
}
