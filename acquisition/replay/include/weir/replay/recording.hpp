#pragma once
// A recording opened for replay: the reader of weir::h5 (weir/h5/recording.hpp), under the replay
// driver's names.
#include "weir/h5/recording.hpp"

namespace weir::acq {

using h5::open_recording;
using h5::RecordedBlock;
using h5::RecordedChannel;
using h5::KeyReader;
using h5::KeyValue;
using h5::read_keys;
using h5::RecordedGap;
using h5::RecordedKey;
using h5::Recording;
using h5::SampleReader;

}  // namespace weir::acq
