// --artifacts / --art-dir: after each checked iteration, the files the user
// names are moved into <art-dir>/good or <art-dir>/bad (Polygraphy's
// ArtifactSortArgs). Names carry the iteration number and a UTC timestamp
// that does not depend on the locale; nothing is ever overwritten.
#pragma once

#include <string>
#include <vector>

namespace vkg::debug {

// "20261121T101500Z": the current UTC time, the same whatever the locale.
std::string utc_timestamp();

class ArtifactSorter {
 public:
  ArtifactSorter(std::vector<std::string> artifacts, std::string dir);

  const std::vector<std::string>& artifacts() const { return artifacts_; }
  const std::string& dir() const { return dir_; }

  // Moves every artifact (a file or a folder) to
  // <dir>/{good,bad}/<stem>_iter<N>_<timestamp><ext>, adding "_2", "_3", ...
  // when that name exists. A missing artifact is an error message, not a
  // failure of the tool. Returns the new paths. Throws Error when a move fails.
  std::vector<std::string> sort(bool passed, int iteration) const;
  // The same for copies of the artifacts written elsewhere (a side-by-side job's, `sources[i]`
  // standing for artifacts()[i]), named as the artifacts themselves would be.
  std::vector<std::string> sort(bool passed, int iteration, const std::vector<std::string>& sources) const;

 private:
  std::vector<std::string> artifacts_;
  std::string dir_;
};

}  // namespace vkg::debug
