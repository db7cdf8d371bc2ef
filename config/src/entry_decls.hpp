#pragma once
// The declarations of a pipeline that describe its recordings rather than run anything: the NeXus
// entry (`entry { ... }`), the facility's source (`source "NAME" { ... }`) and a channel's
// `calibration = { ... }` (docs/design/recording.md, "Calibration").
#include "weir/config/fields.hpp"
#include "weir/config/pipeline.hpp"

namespace weir::config::detail {

[[nodiscard]] core::Result<void> load_entry(Fields f, EntryDecl& e);
[[nodiscard]] core::Result<void> load_source(const std::string& name, Fields f, SourceDecl& s);
/// The `calibration` table of a channel declaration, if it has one (taken from `f`); `units` is the
/// channel's. Refuses a scale that is 0 or not finite and an offset that is not finite.
[[nodiscard]] core::Result<std::optional<Calibration>> load_calibration(Fields& f, const std::string& units);
/// `alert "NAME" { ... }` (alert_decls.cpp): the condition, its settings and where to deliver. Names of
/// channels and parts are checked by resolve(), which knows them.
[[nodiscard]] core::Result<void> load_alert(const std::string& name, Fields f, AlertDecl& a);

}  // namespace weir::config::detail
