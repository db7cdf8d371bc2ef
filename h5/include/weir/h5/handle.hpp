#pragma once
// RAII ownership of HDF5 identifiers, and the library's error stack as one line of text.
// The HDF5 C library is not thread-safe in Debian's serial build: use it from one thread per process.
#include <hdf5.h>

#include <string>
#include <utility>

namespace weir::h5 {

/// Owns one HDF5 identifier (file, group, dataset, dataspace, datatype, property list, attribute)
/// and closes it with the matching H5?close when destroyed. An invalid id (< 0) owns nothing.
class Handle {
 public:
  Handle() noexcept = default;
  explicit Handle(hid_t id) noexcept : id_(id) {}
  Handle(Handle&& other) noexcept : id_(std::exchange(other.id_, H5I_INVALID_HID)) {}
  Handle& operator=(Handle&& other) noexcept {
    if (this != &other) {
      reset();
      id_ = std::exchange(other.id_, H5I_INVALID_HID);
    }
    return *this;
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
  ~Handle() { reset(); }

  [[nodiscard]] hid_t get() const noexcept { return id_; }
  [[nodiscard]] bool valid() const noexcept { return id_ >= 0; }
  explicit operator bool() const noexcept { return valid(); }
  /// Closes the identifier now; returns false when HDF5 reported an error closing it (for a file:
  /// its last flush failed).
  bool reset() noexcept;
  [[nodiscard]] hid_t release() noexcept { return std::exchange(id_, H5I_INVALID_HID); }

 private:
  hid_t id_ = H5I_INVALID_HID;
};

/// Stops HDF5 printing its error stack to stderr (weir reports errors itself, through
/// last_error()). Call once per process before other HDF5 calls.
void quiet_errors() noexcept;

/// The innermost messages of the current thread's HDF5 error stack as one line ("" when empty),
/// then clears the stack.
[[nodiscard]] std::string last_error();

}  // namespace weir::h5
