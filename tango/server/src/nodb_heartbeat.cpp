// tango "serve" without a database server: the heartbeat's event name made to match what clients
// subscribe to. libtango 9.3 (Debian 12's 9.3.4; unchanged on its 9.3 branches) names a -nodb or
// -file server's heartbeat `tango://HOST:PORT/dserver/SERVER#dbase=no.heartbeat`
// (zmqeventsupplier.cpp), but answers a subscription (ZmqEventSubscriptionChange, eventcmds.cpp) with
// the channel name `tango://HOST:PORT/dserver/SERVER`, to which clients append `.heartbeat` and
// subscribe by prefix (zmqeventconsumer.cpp). No heartbeat ever matches: each subscription gets
// API_EventTimeout about 12 s after it starts, its events stop, and the client's reconnection then
// uses a freed DeviceProxy (eventkeepalive.cpp) and can crash the client. Servers registered in a
// Tango database (TANGO_HOST) name both without `#dbase=no` and are not touched.
//
// The name is a private member of Tango::ZmqEventSupplier, reached through an explicit template
// instantiation (which may name private members) and edited once, before any subscription arrives.
#include <string>

#include <tango.h>
#include <eventsupplier.h>

#include "server_impl.hpp"

namespace weir::tango::detail {

namespace {

template <typename Tag, typename Tag::type Member>
struct HeartbeatAccess {
  friend typename Tag::type member_of(Tag) { return Member; }
};
struct HeartbeatName {
  using type = std::string Tango::ZmqEventSupplier::*;
  friend type member_of(HeartbeatName);
};
template struct HeartbeatAccess<HeartbeatName, &Tango::ZmqEventSupplier::heartbeat_event_name>;

}  // namespace

bool match_nodb_heartbeat() {
  Tango::Util* tg = Tango::Util::instance(false);
  Tango::ZmqEventSupplier* events = tg != nullptr ? tg->get_zmq_event_supplier() : nullptr;
  if (events == nullptr) return false;
  std::string& name = events->*member_of(HeartbeatName());
  constexpr std::string_view kNoDb = "#dbase=no";
  const std::string::size_type at = name.find(std::string(kNoDb) + ".heartbeat");
  if (at == std::string::npos) return false;
  name.erase(at, kNoDb.size());
  return true;
}

}  // namespace weir::tango::detail
