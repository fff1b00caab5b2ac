// The quant/ codecs compiled into device code agree with the host build bit for bit, for every
// case of gpu/codec_cases.h (one test per case, Gpu/GpuCodecs.*). Skips where no GPU can run.
#include <gtest/gtest.h>

#include <cctype>
#include <cstddef>
#include <string>

#include "gpu/availability.h"
#include "gpu/codec_cases.h"

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
#include "gpu/codec_check.h"
#endif

namespace mlacheck::gpu {
namespace {

class GpuCodecs : public ::testing::TestWithParam<std::size_t> {};

#if defined(MLACHECK_HAVE_GPU_RUNTIME)
// "N of M outputs differ" and the first few, in hex split into fields.
std::string mismatch_report(const CodecCase& c, const std::vector<uint32_t>& inputs,
                            const std::vector<uint32_t>& host,
                            const std::vector<uint32_t>& device) {
  constexpr std::size_t kShown = 8;
  std::size_t count = 0;
  std::string shown;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (host[i] == device[i]) continue;
    if (++count <= kShown)
      shown += "\n  input " + describe_bits(c.input_kind, inputs[i]) + ": host " +
               describe_bits(c.output_kind, host[i]) + ", device " +
               describe_bits(c.output_kind, device[i]);
  }
  if (count == 0) return {};
  return c.name + ": " + std::to_string(count) + " of " + std::to_string(inputs.size()) +
         " outputs differ; the first " + std::to_string(count < kShown ? count : kShown) + ":" +
         shown;
}
#endif

TEST_P(GpuCodecs, DeviceMatchesHostBitForBit) {
  if (const auto reason = unavailable_reason()) GTEST_SKIP() << *reason;
#if defined(MLACHECK_HAVE_GPU_RUNTIME)
  const CodecCase c = codec_cases().at(GetParam());
  const std::vector<uint32_t> inputs = codec_inputs(c.inputs);
  const std::vector<uint32_t> host = host_outputs(c.op, inputs);
  const std::vector<uint32_t> device = device_outputs(c.op, inputs);
  ASSERT_EQ(device.size(), host.size()) << c.name;
  const std::string report = mismatch_report(c, inputs, host, device);
  EXPECT_TRUE(report.empty()) << report;
#endif
}

std::string case_name(const ::testing::TestParamInfo<std::size_t>& info) {
  std::string name = codec_cases().at(info.param).name;
  for (char& ch : name)  // "e2m1_encode/rne/x2^-2" -> "e2m1_encode_rne_x2_m2"
    if (ch == '-')
      ch = 'm';
    else if (std::isalnum(static_cast<unsigned char>(ch)) == 0)
      ch = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Gpu, GpuCodecs,
                         ::testing::Range<std::size_t>(0, codec_cases().size()), case_name);

}  // namespace
}  // namespace mlacheck::gpu
