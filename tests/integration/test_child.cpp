// A small program the integration tests exec, so a child starts from a fresh image and sees only
// what it inherited (an fd:N memfd) or what it opens by name. The exit code is the result.
//   weir_test_child get LOCATION KEY EXPECTED   0: the key holds EXPECTED as text
//   weir_test_child set LOCATION KEY VALUE      0: the key was written as text
#include <cstdio>
#include <string>
#include <string_view>

#include "weir/core/arena.hpp"
#include "weir/core/kv_store.hpp"

namespace {

enum ExitCode : int {
  kOk = 0,
  kUsage = 2,
  kOpenFailed = 10,
  kGetFailed = 11,
  kMismatch = 12,
  kSetFailed = 13,
};

int get(std::string_view where, std::string_view key, std::string_view expected) {
  auto arena = weir::core::Arena::open(where);
  if (!arena) {
    std::fprintf(stderr, "weir_test_child: %s\n", arena.error().what.c_str());
    return kOpenFailed;
  }
  weir::core::KvStore kv(*arena);
  std::string out(kv.value_bytes(), '\0');
  weir::core::ValueInfo info;
  const auto st = kv.get(key, {reinterpret_cast<std::byte*>(out.data()), out.size()}, info);
  if (st != weir::core::KvStatus::ok) {
    std::fprintf(stderr, "weir_test_child: get: %s\n", weir::core::kv_status_name(st));
    return kGetFailed;
  }
  out.resize(info.length);
  return out == expected ? kOk : kMismatch;
}

int set(std::string_view where, std::string_view key, std::string_view value) {
  auto arena = weir::core::Arena::open(where);
  if (!arena) {
    std::fprintf(stderr, "weir_test_child: %s\n", arena.error().what.c_str());
    return kOpenFailed;
  }
  weir::core::KvStore kv(*arena);
  return kv.set_text(key, value) == weir::core::KvStatus::ok ? kOk : kSetFailed;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) return kUsage;
  const std::string_view mode = argv[1];
  if (mode == "get") return get(argv[2], argv[3], argv[4]);
  if (mode == "set") return set(argv[2], argv[3], argv[4]);
  return kUsage;
}
