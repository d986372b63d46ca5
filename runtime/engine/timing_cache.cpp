#include "runtime/engine/timing_cache.h"

#include <filesystem>
#include <nlohmann/json.hpp>

#include "runtime/core/error.h"
#include "runtime/core/file_io.h"
#include "runtime/core/logger.h"

namespace vkg {

namespace {

using Json = nlohmann::ordered_json;

constexpr char kCacheFormat[] = "vkgraphy-timing-cache";
constexpr int kCacheVersion = 1;
constexpr char kCacheWhat[] = "timing cache";

Json entry_to_json(const TimingEntry& e) {
  Json j = Json::object();
  j["device"] = device_identity_to_json(e.device);
  j["signature"] = e.signature;
  j["description"] = e.description;
  j["tactic"] = e.tactic;
  j["precision"] = precision_name(e.precision);
  if (e.rejected) {
    j["rejected"] = true;
  } else {
    j["median_ns"] = e.median_ns;
    j["samples"] = e.samples;
  }
  if (e.validation_error) j["validation_error"] = validation_error_json(*e.validation_error);
  return j;
}

TimingEntry entry_from_json(const Json& j, const JsonPlace& where) {
  TimingEntry e;
  e.device = device_identity_from_json(json_member(j, "device", where), where.file, where.field("device").path);
  e.signature = json_string(j, "signature", where);
  e.description = json_string(j, "description", where);
  e.tactic = json_string(j, "tactic", where);
  e.precision = json_precision(j, "precision", where);
  if (j.contains("validation_error")) e.validation_error = json_validation_error(j, "validation_error", where);
  if (j.contains("rejected")) {
    if (j["rejected"] != true) where.field("rejected").fail("expected true (or no key)");
    if (!e.validation_error) where.field("rejected").fail("a rejected entry needs its \"validation_error\"");
    e.rejected = true;
    return e;
  }
  e.median_ns = json_non_negative(j, "median_ns", where);
  e.samples = json_unsigned(j, "samples", UINT64_MAX, where);
  return e;
}

// Parses the file's header and entries. Throws Error (whole file unusable);
// malformed entries are skipped with a warning instead.
TimingCache cache_from_text(const std::string& text, const std::string& path) {
  const JsonPlace where{path, ""};
  const Json root = parse_json_text(text, where);
  if (!root.is_object()) where.fail(std::string("expected a JSON object, got ") + root.type_name());
  const std::string format = json_string(root, "format", where);
  if (format != kCacheFormat)
    where.field("format").fail("format is \"" + format + "\", expected \"" + kCacheFormat + "\"");
  const Json& version = json_member(root, "version", where);
  if (version != kCacheVersion) {
    where.field("version").fail("version " + version.dump() + ", this vkgraphy reads version " +
                                std::to_string(kCacheVersion));
  }
  const Json& entries = json_member(root, "entries", where);
  if (!entries.is_array()) where.field("entries").fail(std::string("expected an array, got ") + entries.type_name());
  TimingCache cache;
  for (size_t i = 0; i < entries.size(); ++i) {
    try {
      cache.record(entry_from_json(entries[i], where.field("entries").index(i)));
    } catch (const Error& e) {
      VKG_WARNING("ignoring a timing cache entry: " << e.what());
    }
  }
  return cache;
}

}  // namespace

TimingCache read_timing_cache(const std::string& path) {
  return cache_from_text(read_whole_file(path, kCacheWhat), path);
}

namespace {

// Loads `path`, or nullopt with the reason in `why`. Never throws.
std::optional<TimingCache> try_load(const std::string& path, std::string* why) {
  try {
    return cache_from_text(read_whole_file(path, kCacheWhat), path);
  } catch (const std::exception& e) {
    *why = e.what();
  } catch (...) {
    *why = "'" + path + "': unknown error";
  }
  return std::nullopt;
}

}  // namespace

TimingCache::Key TimingCache::key_of(const DeviceIdentity& device, const std::string& signature,
                                     const std::string& tactic) {
  return {device_identity_to_json(device).dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace),
          signature, tactic};
}

std::optional<TimingEntry> TimingCache::lookup(const DeviceIdentity& device, const std::string& key,
                                               const std::string& tactic) const {
  const auto it = entries_.find(key_of(device, key, tactic));
  if (it == entries_.end() || it->second.rejected) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  return it->second;
}

void TimingCache::record(const TimingEntry& entry) {
  entries_[key_of(entry.device, entry.signature, entry.tactic)] = entry;
}

void TimingCache::merge(const TimingCache& newer) {
  for (const auto& [key, entry] : newer.entries_) entries_[key] = entry;
}

std::vector<TimingEntry> TimingCache::entries() const {
  std::vector<TimingEntry> out;
  out.reserve(entries_.size());
  for (const auto& [key, entry] : entries_) out.push_back(entry);
  return out;
}

TimingCache load_timing_cache(const std::string& path) {
  std::string why;
  if (auto cache = try_load(path, &why)) return std::move(*cache);
  VKG_WARNING("not using timing cache: " << why << "; starting with an empty cache");
  return TimingCache();
}

std::string timing_cache_to_json_text(const TimingCache& cache) {
  Json root = Json::object();
  root["format"] = kCacheFormat;
  root["version"] = kCacheVersion;
  Json entries = Json::array();
  for (const TimingEntry& e : cache.entries()) entries.push_back(entry_to_json(e));
  root["entries"] = std::move(entries);
  return root.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

size_t save_timing_cache(const std::string& path, const TimingCache& cache, bool merge_existing) {
  std::error_code ec;
  if (!merge_existing || !std::filesystem::exists(path, ec)) {
    write_file_atomically(path, timing_cache_to_json_text(cache), kCacheWhat);
    return cache.size();
  }
  std::string why;
  std::optional<TimingCache> merged = try_load(path, &why);
  if (!merged) {
    VKG_WARNING("replacing unusable timing cache: " << why);
    merged.emplace();
  }
  merged->merge(cache);
  write_file_atomically(path, timing_cache_to_json_text(*merged), kCacheWhat);
  return merged->size();
}

}  // namespace vkg
