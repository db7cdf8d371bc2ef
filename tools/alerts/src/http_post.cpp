#include "http_post.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/version.hpp>

namespace weir::alerts {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

core::Result<unsigned> http_post(const config::HttpUrl& url, const std::string& body, std::chrono::milliseconds timeout) {
  const std::string where = "POST http://" + url.host + ":" + url.port + url.target;
  try {
    asio::io_context io;
    tcp::resolver resolver(io);
    beast::tcp_stream stream(io);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    beast::error_code failed;
    const char* step = "resolve";
    http::request<http::string_body> req{http::verb::post, url.target, 11};
    req.set(http::field::host, url.host + (url.port == "80" ? "" : ":" + url.port));
    req.set(http::field::user_agent, "weir-alerts");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::connection, "close");
    req.body() = body;
    req.prepare_payload();
    beast::flat_buffer buffer;
    http::response<http::string_body> res;
    bool done = false;

    // resolve -> connect -> write -> read, each step under the stream's deadline (resolving under run_until's).
    resolver.async_resolve(url.host, url.port, [&](beast::error_code ec, const tcp::resolver::results_type& results) {
      if (ec) return void(failed = ec);
      step = "connect";
      stream.expires_at(deadline);
      stream.async_connect(results, [&](beast::error_code ec2, const tcp::endpoint&) {
        if (ec2) return void(failed = ec2);
        step = "send";
        http::async_write(stream, req, [&](beast::error_code ec3, std::size_t) {
          if (ec3) return void(failed = ec3);
          step = "read the answer";
          http::async_read(stream, buffer, res, [&](beast::error_code ec4, std::size_t) {
            if (ec4) return void(failed = ec4);
            done = true;
          });
        });
      });
    });
    io.run_until(deadline);
    if (!io.stopped()) {  // the deadline passed inside resolving (tcp_stream times out the rest itself)
      resolver.cancel();
      beast::get_lowest_layer(stream).cancel();
      io.restart();
      io.run_for(std::chrono::milliseconds(100));
      return core::fail(core::Errc::busy, where + ": " + step + ": no answer within the timeout");
    }
    if (failed)
      return core::fail(core::Errc::io_error, where + ": " + step + ": " +
                                                  (failed == beast::error::timeout ? std::string("timed out") : failed.message()));
    if (!done) return core::fail(core::Errc::io_error, where + ": " + step + ": did not finish");
    beast::error_code ignored;
    stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
    const unsigned status = res.result_int();
    if (status < 200 || status > 299)
      return core::fail(core::Errc::io_error, where + ": the server answered " + std::to_string(status));
    return status;
  } catch (const std::exception& e) {  // allocation, or an exception of Asio's: never leaves the wrapper
    return core::fail(core::Errc::io_error, where + ": " + e.what());
  }
}

}  // namespace weir::alerts
