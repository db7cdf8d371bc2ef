// Tango's errors in words, and which of them mean "the device cannot be reached".
#include <fmt/format.h>

#include "driver_impl.hpp"

namespace weir::tango::detail {

std::string reason_of(const ::Tango::DevFailed& e) {
  if (e.errors.length() == 0) return "DevFailed";
  return fmt::format("{}: {}", e.errors[0].reason.in(), e.errors[0].desc.in());
}

std::string reason_of(const ::Tango::DevErrorList& errors) {
  return errors.length() == 0 ? std::string("error") : std::string(errors[0].reason.in());
}

bool unreachable(const ::Tango::DevFailed& e) {
  for (unsigned i = 0; i < e.errors.length(); ++i) {
    const std::string reason = e.errors[i].reason.in();
    for (const char* r : {"API_CantConnectToDevice", "API_DeviceNotExported", "API_ServerNotRunning", "API_CorbaException",
                          "API_DeviceTimedOut", "API_CommunicationFailed", "API_ConnectionFailed"})
      if (reason == r) return true;
  }
  return false;
}

}  // namespace weir::tango::detail
