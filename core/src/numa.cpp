// NUMA through libnuma (dlopen'd, so it is optional at run time) or the system calls beneath it.
#include "weir/core/numa.hpp"

#include <dlfcn.h>
#include <numaif.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "backing.hpp"

namespace weir::core {

namespace {

constexpr unsigned long kMaxNodes = 1024;  // node-mask bits we pass to the kernel
constexpr unsigned long kMaskWords = kMaxNodes / (8 * sizeof(unsigned long));
constexpr std::size_t kPageBytes = 4096;
constexpr int kModeFlags = (1 << 15) | (1 << 14);  // MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES (linux/mempolicy.h)

// The few libnuma entry points weir uses, resolved once.
struct Libnuma {
  int (*available)() = nullptr;
  long (*mbind)(void*, unsigned long, int, const unsigned long*, unsigned long, unsigned) = nullptr;
  long (*get_mempolicy)(int*, unsigned long*, unsigned long, void*, unsigned long) = nullptr;
  bool loaded = false;

  Libnuma() {
    if (std::getenv("WEIR_NO_LIBNUMA") != nullptr) return;  // run as on a box without libnuma
    void* h = dlopen("libnuma.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) return;
    available = reinterpret_cast<int (*)()>(dlsym(h, "numa_available"));
    mbind = reinterpret_cast<decltype(mbind)>(dlsym(h, "mbind"));
    get_mempolicy = reinterpret_cast<decltype(get_mempolicy)>(dlsym(h, "get_mempolicy"));
    loaded = available != nullptr && mbind != nullptr && get_mempolicy != nullptr && available() >= 0;
  }
};

const Libnuma& lib() {
  static const Libnuma instance;
  return instance;
}

long sys_mbind(void* addr, unsigned long len, int mode, const unsigned long* mask, unsigned long maxnode,
               unsigned flags) {
  if (lib().loaded) return lib().mbind(addr, len, mode, mask, maxnode, flags);
  return syscall(SYS_mbind, addr, len, mode, mask, maxnode, flags);
}

long sys_get_mempolicy(int* mode, unsigned long* mask, unsigned long maxnode, const void* addr, unsigned long flags) {
  void* a = const_cast<void*>(addr);  // the kernel only reads the address
  if (lib().loaded) return lib().get_mempolicy(mode, mask, maxnode, a, flags);
  return syscall(SYS_get_mempolicy, mode, mask, maxnode, a, flags);
}

// Parses a sysfs list like "0-3,8,10-11".
std::vector<int> parse_list(const std::string& text) {
  std::vector<int> out;
  std::stringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part.empty() || part == "\n") continue;
    const auto dash = part.find('-');
    const int lo = std::stoi(part.substr(0, dash));
    const int hi = dash == std::string::npos ? lo : std::stoi(part.substr(dash + 1));
    for (int i = lo; i <= hi; ++i) out.push_back(i);
  }
  return out;
}

std::string read_sysfs(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  std::getline(in, text);
  return text;
}

bool node_exists(int node) {
  if (node < 0 || static_cast<unsigned long>(node) >= kMaxNodes) return false;
  for (const int n : parse_list(read_sysfs("/sys/devices/system/node/has_memory")))
    if (n == node) return true;
  return false;
}

Error no_such_node(int node) {
  return Error{Errc::invalid_argument, "NUMA node " + std::to_string(node) + " does not exist (this machine has " +
                                           std::to_string(numa_node_count()) + " node(s) with memory)"};
}

const char* mode_name(int mode) {
  switch (mode & ~kModeFlags) {
    case MPOL_DEFAULT: return "default";
    case MPOL_PREFERRED: return "preferred";
    case MPOL_BIND: return "bind";
    case MPOL_INTERLEAVE: return "interleave";
    case MPOL_LOCAL: return "local";
    default: return "other";
  }
}

}  // namespace

int numa_node_count() noexcept {
  try {
    const auto nodes = parse_list(read_sysfs("/sys/devices/system/node/has_memory"));
    return nodes.empty() ? 1 : static_cast<int>(nodes.size());
  } catch (...) {
    return 1;  // no sysfs: treat the machine as one node
  }
}

bool numa_library_loaded() noexcept { return lib().loaded; }

Result<std::vector<int>> numa_node_cpus(int node) {
  if (!node_exists(node)) return tl::make_unexpected(no_such_node(node));
  return parse_list(read_sysfs("/sys/devices/system/node/node" + std::to_string(node) + "/cpulist"));
}

Result<void> numa_bind(void* addr, std::size_t bytes, int node) {
  if (!node_exists(node)) return tl::make_unexpected(no_such_node(node));
  unsigned long mask[kMaskWords] = {};
  mask[static_cast<unsigned long>(node) / (8 * sizeof(unsigned long))] |=
      1UL << (static_cast<unsigned long>(node) % (8 * sizeof(unsigned long)));
  if (sys_mbind(addr, bytes, MPOL_BIND, mask, kMaxNodes, 0) != 0)
    return fail(Errc::shm_unavailable, "bind to NUMA node " + std::to_string(node) + ": " +
                                           detail::errno_text("mbind", errno));
  return {};
}

void prefault(void* addr, std::size_t bytes) noexcept {
#ifdef MADV_POPULATE_WRITE
  if (madvise(addr, bytes, MADV_POPULATE_WRITE) == 0) return;
#endif
  auto* p = static_cast<volatile unsigned char*>(addr);
  for (std::size_t off = 0; off < bytes; off += kPageBytes) p[off] = p[off];  // a write faults the page in
}

Result<void> pin_thread_to_node(int node) {
  auto cpus = numa_node_cpus(node);
  if (!cpus) return tl::make_unexpected(cpus.error());
  cpu_set_t set;
  CPU_ZERO(&set);
  for (const int cpu : *cpus) CPU_SET(cpu, &set);
  if (sched_setaffinity(0, sizeof(set), &set) != 0)
    return fail(Errc::invalid_argument, "pin to NUMA node " + std::to_string(node) + ": " +
                                            detail::errno_text("sched_setaffinity", errno));
  return {};
}

Result<MemPolicy> memory_policy_of(const void* addr) {
  MemPolicy p;
  p.via_library = lib().loaded;
  int mode = 0;
  unsigned long mask[kMaskWords] = {};
  if (sys_get_mempolicy(&mode, mask, kMaxNodes, addr, MPOL_F_ADDR) != 0)
    return fail(Errc::shm_unavailable, detail::errno_text("get_mempolicy", errno));
  p.mode = mode_name(mode);
  for (unsigned long n = 0; n < kMaxNodes; ++n)
    if ((mask[n / (8 * sizeof(unsigned long))] >> (n % (8 * sizeof(unsigned long))) & 1UL) != 0)
      p.nodes.push_back(static_cast<int>(n));
  int node = -1;
  if (sys_get_mempolicy(&node, nullptr, 0, addr, MPOL_F_NODE | MPOL_F_ADDR) == 0) p.page_node = node;
  return p;
}

}  // namespace weir::core
