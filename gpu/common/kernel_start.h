#pragma once
// When a kernel of a decode call may start: after the stream's previous kernel has ended (stream
// order), or while it still runs (programmatic dependent launch, sm_90 on: the runtime may place
// its blocks as the previous kernel's blocks leave, hiding the launch gap and letting it start on
// work that needs nothing of that kernel, such as streaming the KV cache). Plain C++: the launch
// functions of every family take it.
namespace mlacheck::gpu::common {

enum class KernelStart {
  // The first kernel of a call: nothing of the call precedes it, and a caller's earlier work (or the
  // previous call, timed) must be finished before it starts.
  after_previous,
  // A later kernel of the call. Only a kernel that waits (gpu/common/grid_dependency.h) before it
  // reads what an earlier kernel of the call wrote, and before it ends, is launched so; a family
  // whose kernel does not wait launches it after_previous.
  with_previous,
};

}  // namespace mlacheck::gpu::common
