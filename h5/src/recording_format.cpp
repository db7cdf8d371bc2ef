// The recording format's pieces that are code: the gaps row type and the escaping of names.
#include "weir/h5/recording_format.hpp"

#include <cstddef>

namespace weir::h5 {

Type gap_row_type(bool packed) {
  Type type{H5Tcreate(H5T_COMPOUND, sizeof(GapRow))};
  H5Tinsert(type.get(), kGapSequence, offsetof(GapRow, sequence), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), kGapBlocks, offsetof(GapRow, blocks), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), kGapReason, offsetof(GapRow, reason), H5T_NATIVE_UINT8);
  H5Tinsert(type.get(), kGapRealtimeNs, offsetof(GapRow, realtime_ns), H5T_NATIVE_UINT64);
  if (packed) H5Tpack(type.get());  // 25 bytes a row in the file, no padding
  return type;
}

Type clock_offset_row_type(bool packed) {
  Type type{H5Tcreate(H5T_COMPOUND, sizeof(ClockOffsetRow))};
  H5Tinsert(type.get(), "realtime_ns", offsetof(ClockOffsetRow, realtime_ns), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), "monotonic_ns", offsetof(ClockOffsetRow, monotonic_ns), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), "offset_ns", offsetof(ClockOffsetRow, offset_ns), H5T_NATIVE_INT64);
  H5Tinsert(type.get(), "event", offsetof(ClockOffsetRow, event), H5T_NATIVE_UINT8);
  if (packed) H5Tpack(type.get());
  return type;
}

Type clock_step_row_type(bool packed) {
  Type type{H5Tcreate(H5T_COMPOUND, sizeof(ClockStepRow))};
  H5Tinsert(type.get(), "sequence", offsetof(ClockStepRow, sequence), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), "jump_ns", offsetof(ClockStepRow, jump_ns), H5T_NATIVE_INT64);
  H5Tinsert(type.get(), "realtime_ns", offsetof(ClockStepRow, realtime_ns), H5T_NATIVE_UINT64);
  H5Tinsert(type.get(), "monotonic_ns", offsetof(ClockStepRow, monotonic_ns), H5T_NATIVE_UINT64);
  if (packed) H5Tpack(type.get());
  return type;
}

std::string encode_name(std::string_view name) {
  if (name == ".") return "%2E";
  std::string out;
  out.reserve(name.size());
  for (const char c : name) {
    if (c == '%')
      out += "%25";
    else if (c == '/')
      out += "%2F";
    else
      out += c;
  }
  return out;
}

std::string frame_axis_link(std::string_view axis_name) {
  if (axis_name.empty()) return kDefaultFrameAxis;
  std::string link = encode_name(axis_name);
  for (const char* taken : {kTime, kTimeInBlock, kData, kBlockSequence, kBlockOffset, kBlockSamples, kBlockRealtimeNs,
                            kBlockMonotonicNs, kBlockFlags, kGaps, kClockSteps})
    if (link == taken) return link + kFrameAxisSuffix;
  return link;
}

}  // namespace weir::h5
