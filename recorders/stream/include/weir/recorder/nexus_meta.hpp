#pragma once
// What a pipeline says about its recordings beyond the arena (docs/design/recording.md, "NeXus
// metadata"): the entry's title, definition and default plot, the facility's source, and per
// channel the part that writes it, that part's settings and the channel's calibration. `weir record
// --pipeline FILE` fills it from the pipeline file; empty, the recorder writes its own defaults.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace weir::rec {

/// A raw sample r is the value offset + scale * r in `units`.
struct ChannelCalibration {
  double scale = 1;
  double offset = 0;
  std::string units;
};

struct ChannelNexus {
  std::string part;    // the part that writes the channel ("sim", "fft:det0"); "" unknown
  std::string driver;  // its kind: "sim", "udp", ..., or a shard's kind ("fft", a .so path)
  std::string role;    // "driver" or "shard"
  std::vector<std::pair<std::string, std::string>> settings;  // the part's settings as text, by name
  std::optional<ChannelCalibration> calibration;
};

struct SourceNexus {
  std::string name, type, probe;  // NXsource's name, type and probe ("" when not given)
};

struct NexusGroup {
  std::string name;    // the group's name (h5::encode_name applies to the texts' names, not to this)
  std::string parent;  // "" for /entry, else an earlier group's name
  std::string nx_class;
  std::vector<std::pair<std::string, std::string>> texts;  // scalar string datasets, by name
  // A table of two text columns, as the 1-D datasets `name` and `value` (every key's value at a run's
  // start: one pair of datasets, however many keys).
  std::vector<std::pair<std::string, std::string>> table;
};

struct NexusMeta {
  std::string title;         // "": "<arena> run <run>"
  std::string definition;    // "": h5::kDefaultDefinition
  std::string default_plot;  // a channel; "" (or one not recorded): the first sample channel
  std::optional<SourceNexus> source;
  std::map<std::string, ChannelNexus> channels;  // by channel name
  // More text fields of /entry, by name (a Kafka run's job_id, nexus_structure, metadata, ...): one
  // scalar string dataset each; a name the entry has already (title, ...) is an error at the file's start.
  std::vector<std::pair<std::string, std::string>> texts;
  // Groups of /entry with text fields, made in order (a parent before its children): a controlled
  // run's user (NXuser), sample (NXsample), notes (NXnote) and run_control (NXcollection).
  std::vector<NexusGroup> groups;
};

}  // namespace weir::rec
