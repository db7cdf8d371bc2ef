#pragma once
// NUMA placement: bind an arena's pages to one node before first touch, pre-fault them, pin writer
// threads to that node's CPUs. Uses libnuma when it can be loaded at run time, plain system calls
// (mbind, get_mempolicy, sched_setaffinity) and sysfs otherwise, so weir runs without libnuma.
// WEIR_NO_LIBNUMA=1 in the environment takes the second path even where libnuma is installed.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "weir/core/error.hpp"

namespace weir::core {

/// Nodes with memory on this machine (1 on a one-node box). Thread: any.
[[nodiscard]] int numa_node_count() noexcept;
/// Whether libnuma was found and loaded at run time.
[[nodiscard]] bool numa_library_loaded() noexcept;
/// CPUs of a node. Fails naming the node when it does not exist.
[[nodiscard]] Result<std::vector<int>> numa_node_cpus(int node);

/// Binds [addr, addr+bytes) to `node` (MPOL_BIND). Call before the pages are first touched.
/// Fails naming the node when it does not exist. Thread: any.
[[nodiscard]] Result<void> numa_bind(void* addr, std::size_t bytes, int node);
/// Touches every page so the hot path never page-faults (MADV_POPULATE_WRITE, or a write per page).
void prefault(void* addr, std::size_t bytes) noexcept;
/// Pins the calling thread to the CPUs of `node`. Thread: the thread to pin.
[[nodiscard]] Result<void> pin_thread_to_node(int node);

struct MemPolicy {
  std::string mode;           // "default", "bind", "preferred", "interleave", "local", ...
  std::vector<int> nodes;     // the policy's node mask
  int page_node = -1;         // node that actually holds the page at addr (-1: not yet faulted in)
  bool via_library = false;   // read through libnuma rather than the raw system call
};
/// Reads back the policy applied to the page at addr (get_mempolicy with MPOL_F_ADDR).
[[nodiscard]] Result<MemPolicy> memory_policy_of(const void* addr);

}  // namespace weir::core
