#pragma once
// RAII ownership of HDF5 identifiers, one type per close function, and the library's error stack
// as one line of text. The HDF5 C library is not thread-safe in Debian's serial build: use it from
// one thread per process.
#include <hdf5.h>

#include <string>
#include <utility>

namespace weir::h5 {

/// Owns one HDF5 identifier and closes it with `Close` when destroyed. The close function is part
/// of the type, so a file id cannot be passed where a dataset id is expected. An invalid id (< 0)
/// owns nothing.
template <herr_t (*Close)(hid_t)>
class H5Id {
 public:
  H5Id() noexcept = default;
  explicit H5Id(hid_t id) noexcept : id_(id) {}
  H5Id(H5Id&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  H5Id& operator=(H5Id&& other) noexcept {
    if (this != &other) reset(std::exchange(other.id_, H5I_INVALID_HID));
    return *this;
  }
  H5Id(const H5Id&) = delete;
  H5Id& operator=(const H5Id&) = delete;
  ~H5Id() { reset(); }

  [[nodiscard]] hid_t get() const noexcept { return id_; }
  [[nodiscard]] bool valid() const noexcept { return id_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  /// Closes the identifier held (if any) and takes `id`. Returns false when HDF5 reported an error
  /// closing the old one (for a file: its last flush failed); never throws.
  bool reset(hid_t id = H5I_INVALID_HID) noexcept {
    const hid_t old = std::exchange(id_, id);
    return old < 0 || Close(old) >= 0;
  }
  [[nodiscard]] hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

using File = H5Id<&H5Fclose>;
using Group = H5Id<&H5Gclose>;
using Dataset = H5Id<&H5Dclose>;
using Space = H5Id<&H5Sclose>;     // a dataspace
using Type = H5Id<&H5Tclose>;      // a datatype (never a predefined one: copy those with H5Tcopy)
using Attribute = H5Id<&H5Aclose>;
using PropList = H5Id<&H5Pclose>;  // a property list

/// Stops HDF5 printing its error stack to stderr (weir reports errors itself, through
/// last_error()). Call once per process before other HDF5 calls.
void quiet_errors() noexcept;

/// The innermost messages of the current thread's HDF5 error stack as one line ("" when empty),
/// then clears the stack.
[[nodiscard]] std::string last_error();

}  // namespace weir::h5
