// tango "serve", the Tango side: the class WeirDevice (its attributes made from the Server's values, its
// commands StartRun, StopRun and AbortRun) and the device, whose reads, writes and commands the Server
// answers. Tango calls these with the device's monitor held.
#include <string>
#include <vector>

#include <fmt/format.h>

#include "server_impl.hpp"

namespace weir::tango::detail {

Server*& current_server() {
  static Server* server = nullptr;
  return server;
}

namespace {

// A device with no behaviour of its own: the update thread sets its State and Status.
class WeirDevice final : public TANGO_BASE_CLASS {
 public:
  WeirDevice(Tango::DeviceClass* cl, std::string& name) : TANGO_BASE_CLASS(cl, name) { init_device(); }
  void init_device() override {
    set_state(Tango::UNKNOWN);
    set_status("weir: starting");
    set_change_event("State", true, false);
    current_server()->attach(this);
  }
};

void set_properties(Tango::Attr& attr, const Value& v) {
  Tango::UserDefaultAttrProp prop;
  if (!v.description.empty()) prop.set_description(v.description.c_str());
  if (!v.units.empty()) prop.set_unit(v.units.c_str());
  if (!v.label.empty()) prop.set_label(v.label.c_str());
  if (!v.format.empty()) prop.set_format(v.format.c_str());
  if (!v.min.empty()) prop.set_min_value(v.min.c_str());
  if (!v.max.empty()) prop.set_max_value(v.max.c_str());
  const std::string abs = fmt::format("{}", v.criteria.abs_change), rel = fmt::format("{}", v.criteria.rel_change);
  const std::string aabs = fmt::format("{}", v.criteria.archive_abs_change);
  const std::string arel = fmt::format("{}", v.criteria.archive_rel_change);
  if (v.criteria.abs_change > 0) prop.set_event_abs_change(abs.c_str());
  if (v.criteria.rel_change > 0) prop.set_event_rel_change(rel.c_str());
  if (v.criteria.archive_abs_change > 0) prop.set_archive_event_abs_change(aabs.c_str());
  if (v.criteria.archive_rel_change > 0) prop.set_archive_event_rel_change(arel.c_str());
  attr.set_default_properties(prop);
  attr.set_change_event(true, false);   // pushed by weir, which applies the criteria itself
  attr.set_archive_event(true, false);
}

long tango_type(Kind kind) {
  switch (kind) {
    case Kind::f64:
    case Kind::spectrum: return Tango::DEV_DOUBLE;
    case Kind::i64: return Tango::DEV_LONG64;
    case Kind::text: return Tango::DEV_STRING;
  }
  return Tango::DEV_DOUBLE;
}

class ScalarAttr final : public Tango::Attr {
 public:
  ScalarAttr(const Value& v, std::size_t index)
      : Tango::Attr(v.name.c_str(), tango_type(v.kind), v.writable ? Tango::READ_WRITE : Tango::READ), index_(index) {}
  void read(Tango::DeviceImpl*, Tango::Attribute& att) override { current_server()->read(index_, att); }
  void write(Tango::DeviceImpl*, Tango::WAttribute& att) override { current_server()->write_key(index_, att); }

 private:
  std::size_t index_;
};

class WaveAttr final : public Tango::SpectrumAttr {
 public:
  WaveAttr(const Value& v, std::size_t index)
      : Tango::SpectrumAttr(v.name.c_str(), Tango::DEV_DOUBLE, static_cast<long>(v.max_x)), index_(index) {}
  void read(Tango::DeviceImpl*, Tango::Attribute& att) override { current_server()->read(index_, att); }

 private:
  std::size_t index_;
};

class StartRunCmd final : public Tango::Command {
 public:
  StartRunCmd()
      : Tango::Command("StartRun", Tango::DEVVAR_STRINGARRAY, Tango::DEV_LONG64,
                       "up to 4 strings: title, operator, sample, comment", "the new run's number") {}
  CORBA::Any* execute(Tango::DeviceImpl*, const CORBA::Any& in) override {
    const Tango::DevVarStringArray* args = nullptr;
    extract(in, args);
    return insert(current_server()->start_run(*args));
  }
};

class StopRunCmd final : public Tango::Command {
 public:
  explicit StopRunCmd(bool abort)
      : Tango::Command(abort ? "AbortRun" : "StopRun", Tango::DEV_VOID, Tango::DEV_STRING, "",
                       "the run's ledger line, once every recorder closed its files"),
        abort_(abort) {}
  CORBA::Any* execute(Tango::DeviceImpl*, const CORBA::Any&) override {
    const std::string line = current_server()->stop_run(abort_);
    return insert(line.c_str());
  }

 private:
  bool abort_;
};

}  // namespace

class WeirClass final : public Tango::DeviceClass {
 public:
  static WeirClass* init(const char* class_name) {
    static WeirClass* made = nullptr;
    if (made == nullptr) {
      std::string s(class_name);
      made = new WeirClass(s);  // NOLINT: Tango owns its classes until the process exits
    }
    return made;
  }

 protected:
  explicit WeirClass(std::string& class_name) : Tango::DeviceClass(class_name) {}
  void command_factory() override {
    if (!current_server()->options().run_control) return;
    command_list.push_back(new StartRunCmd());     // NOLINT: Tango deletes its commands
    command_list.push_back(new StopRunCmd(false));  // NOLINT
    command_list.push_back(new StopRunCmd(true));   // NOLINT
  }
  void attribute_factory(std::vector<Tango::Attr*>& list) override {
    const std::vector<Value>& values = current_server()->values();
    for (std::size_t i = 0; i < values.size(); ++i) {
      Tango::Attr* a = values[i].kind == Kind::spectrum ? static_cast<Tango::Attr*>(new WaveAttr(values[i], i))  // NOLINT
                                                        : new ScalarAttr(values[i], i);  // NOLINT: Tango deletes them
      set_properties(*a, values[i]);
      list.push_back(a);
    }
  }
  void device_factory(const Tango::DevVarStringArray* names) override {
    for (CORBA::ULong i = 0; i < names->length() && i < 1; ++i) {
      std::string device_name((*names)[i].in());
      device_list.push_back(new WeirDevice(this, device_name));  // NOLINT: Tango deletes its devices
    }
    for (Tango::DeviceImpl* dev : device_list) {
      if (Tango::Util::_UseDb && !Tango::Util::_FileDb) export_device(dev);
      else export_device(dev, dev->get_name().c_str());
    }
  }
};

Tango::DeviceClass* make_class() { return WeirClass::init(kClassName); }

}  // namespace weir::tango::detail
