// Whole-file reads and all-or-nothing writes for the data files vkgraphy
// produces (outputs, inputs, reports).
#pragma once

#include <string>
#include <string_view>

namespace vkg {

// Reads a whole file. Throws Error naming `what` and the path when it cannot be read.
std::string read_whole_file(const std::string& path, const std::string& what);

// Writes `contents` to a temporary file in the destination folder, then renames
// it over `path`, so readers see the old file or the complete new one, never a
// partial one. Creates missing parent folders. Throws Error on any failure
// (the temporary file is removed).
void write_file_atomically(const std::string& path, std::string_view contents, const std::string& what);

}  // namespace vkg
