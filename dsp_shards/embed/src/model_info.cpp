// The model's JSON sidecar, read with a few lookups: the file is small, flat and written by our own
// script, so no JSON library is linked into the plugin.
#include "model_info.hpp"

#include <dlfcn.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace weir::dsp::embed {

namespace {

constexpr const char* kModelDir = "embed_model";
constexpr const char* kModelFile = "pulse_encoder.pt";
constexpr long kMaxNumber = 1L << 24;  // input lengths and dims beyond this are not models we run

// The text after `"name":`, or npos.
std::size_t value_of(const std::string& text, const std::string& name) {
  const std::size_t at = text.find("\"" + name + "\"");
  if (at == std::string::npos) return at;
  const std::size_t colon = text.find(':', at);
  if (colon == std::string::npos) return colon;
  return text.find_first_not_of(" \t\r\n", colon + 1);
}

bool number(const std::string& text, const std::string& name, std::uint32_t& out, std::string& error) {
  const std::size_t at = value_of(text, name);
  if (at == std::string::npos) return true;
  errno = 0;
  char* end = nullptr;
  const long v = std::strtol(text.c_str() + at, &end, 10);
  if (errno != 0 || end == text.c_str() + at || v < 1 || v > kMaxNumber) {
    error = "\"" + name + "\" is not a whole number from 1 to " + std::to_string(kMaxNumber);
    return false;
  }
  out = static_cast<std::uint32_t>(v);
  return true;
}

}  // namespace

ModelInfo read_model_info(const std::string& model_path, std::string& error) {
  ModelInfo info;
  std::string json = model_path;
  if (json.size() > 3 && json.compare(json.size() - 3, 3, ".pt") == 0) json.resize(json.size() - 3);
  json += ".json";
  std::ifstream file(json);
  if (!file) return info;
  std::stringstream text;
  text << file.rdbuf();
  const std::string s = text.str();
  if (!number(s, "input_length", info.input_length, error) || !number(s, "dims", info.dims, error)) {
    error = json + ": " + error;
    return ModelInfo{};
  }
  if (const std::size_t at = value_of(s, "normalisation"); at != std::string::npos && s[at] == '"') {
    const std::size_t end = s.find('"', at + 1);
    if (end != std::string::npos) info.normalisation = s.substr(at + 1, end - at - 1);
  }
  info.found = true;
  return info;
}

std::string default_model_path() {
  Dl_info self{};
  if (dladdr(reinterpret_cast<const void*>(&default_model_path), &self) == 0 || self.dli_fname == nullptr) return {};
  std::string dir = self.dli_fname;
  const std::size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? std::string(".") : dir.substr(0, slash);
  return dir + "/" + kModelDir + "/" + kModelFile;
}

}  // namespace weir::dsp::embed
