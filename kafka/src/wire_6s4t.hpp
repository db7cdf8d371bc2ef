#pragma once
// The flatc-generated code of schema 6s4t (schemas/6s4t_run_stop.fbs), in a namespace of its own: the
// published schemas put their tables in the global namespace, and two of them both have tables
// called ArrayInt, ArrayLong, ArrayFloat and ArrayDouble. Generated code, so its warnings are not ours.
#pragma GCC system_header
#include <flatbuffers/flatbuffers.h>

namespace weir::kafka::wire::s6s4t {
#include "6s4t_run_stop_generated.h"  // IWYU pragma: export
}  // namespace weir::kafka::wire::s6s4t
