// The engine file (DESIGN.md, "The engine file"): an Engine as one
// self-contained, versioned binary file. A fixed header, the engine's
// structure as JSON metadata, then a blob holding every packed weight and
// every SPIR-V module, and a checksum. Format: docs/engine-file.md.
//
// Engines are user input: loading checks every length, offset, alignment,
// count and enum value and the checksum, then validate_engine(), and fails
// with one Error "'<file>': <what is wrong>". A corrupt file never crashes
// the loader and never makes it allocate more than the bytes present.
#pragma once

#include <string>
#include <string_view>

#include "runtime/engine/engine.h"

namespace vkg {

// The first 8 bytes of every engine file.
inline constexpr char kEngineMagic[8] = {'V', 'K', 'G', 'E', 'N', 'G', 'N', '\0'};

// The bytes of an engine file. Throws Error when the engine cannot be stored
// (a weight of a dtype other than float32/float16/int32, a name that is not
// valid UTF-8).
std::string serialize_engine(const Engine& engine);

// Reads the bytes of an engine file; `what` names it in errors (usually the
// path). Throws Error "'<what>': <problem>" for a truncated or corrupt file, a
// file of another format version, or an engine that fails validate_engine().
Engine deserialize_engine(std::string_view bytes, const std::string& what);

// Writes `engine` to `path` whole-or-nothing. Throws Error when it cannot.
void save_engine(const std::string& path, const Engine& engine);

// Reads an engine file. Throws Error naming the path when it is missing,
// unreadable, truncated, corrupt or of another format version.
Engine load_engine(const std::string& path);

// True when `path` is a readable file starting with the engine magic (any
// version, any contents after it). Never throws: a cheap check for tools
// that accept several kinds of file; load_engine still validates the rest.
bool looks_like_engine(const std::string& path);

}  // namespace vkg
