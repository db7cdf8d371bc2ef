#pragma once
// The flatc-generated code of schema wrdn (schemas/wrdn_finished_writing.fbs), in a namespace of its
// own: the published schemas put their tables in the global namespace, and two of them both have
// tables called ArrayInt, ArrayLong, ArrayFloat and ArrayDouble. Generated code, so its warnings are
// not ours.
#pragma GCC system_header
#include <flatbuffers/flatbuffers.h>

namespace weir::kafka::wire::wrdn {
#include "wrdn_finished_writing_generated.h"  // IWYU pragma: export
}  // namespace weir::kafka::wire::wrdn
