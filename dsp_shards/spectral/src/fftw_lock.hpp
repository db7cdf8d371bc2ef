#pragma once
// FFTW's planner, wisdom and plan destruction share global state and are not thread-safe; every
// call to them in this library holds this one lock. fftwf_execute on distinct plans needs none.
#include <mutex>

namespace weir::dsp::detail {

std::mutex& fftw_planner_mutex() noexcept;

}  // namespace weir::dsp::detail
