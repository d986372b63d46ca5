// Standard base64 (RFC 4648, "+/" alphabet, "=" padding), as Python's
// base64.b64encode writes and base64.b64decode(validate=True) reads it.
#pragma once

#include <string>
#include <string_view>

namespace vkg {

// Encodes arbitrary bytes; the result is padded to a multiple of 4 characters.
std::string base64_encode(std::string_view bytes);

// Decodes strictly: only the standard alphabet, correct "=" padding at the end
// and no whitespace. Anything else throws Error naming the offending position.
std::string base64_decode(std::string_view text);

}  // namespace vkg
