#pragma once
// One HTTP/1.1 POST of a JSON body through Boost.Beast, bounded by a deadline end to end.
#include <chrono>
#include <string>

#include "weir/config/pipeline.hpp"
#include "weir/core/error.hpp"

namespace weir::alerts {

/// POSTs `body` (application/json) to `url` and reads the answer; a 2xx status is success, anything
/// else (another status, a refused connection, `timeout` passing) an error naming it. Thread: any
/// (each call has its own io_context).
[[nodiscard]] core::Result<unsigned> http_post(const config::HttpUrl& url, const std::string& body,
                                               std::chrono::milliseconds timeout);

}  // namespace weir::alerts
