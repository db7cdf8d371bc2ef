#pragma once
// What the JSON beside a model says about it (written by model/train_encoder.py): its input length,
// its dims and the normalisation it was trained with. Cold path only.
#include <cstdint>
#include <string>

namespace weir::dsp::embed {

struct ModelInfo {
  bool found = false;              // the JSON exists beside the model (<model without .pt>.json)
  std::uint32_t input_length = 0;  // 0: not given
  std::uint32_t dims = 0;          // 0: not given
  std::string normalisation;       // empty: not given
};

/// Reads <model path without ".pt">.json when it exists; not found is not an error. Fills `error`
/// (and returns found = false) only for a file that exists and holds a malformed number.
/// Thread: control only.
ModelInfo read_model_info(const std::string& model_path, std::string& error);

/// The model shipped with the build: embed_model/pulse_encoder.pt beside this shared object.
/// Empty when the object's own path cannot be found. Thread: control only.
std::string default_model_path();

}  // namespace weir::dsp::embed
