// The output folder of one run, holding one result: the files are written
// into a hidden staging folder inside it and moved to their final names
// only when the whole run has succeeded (publish); an earlier result's
// files that this run does not write are removed then, with --force, and
// named; a manifest (.fdk-convert-result) lists the result's files so the
// next run knows them.
#pragma once

#include <string>
#include <vector>

#include "inputs.hpp"
#include "options.hpp"

namespace fdk_convert {

// The manifest's name inside the output folder.
extern const char* const kResultManifest;

class ResultFolder {
 public:
  // Creates the output folder and a staging folder inside it. `names` are
  // the plain file names this run will write. Throws Failure (kExitUsage)
  // when a name would replace or join an input (whatever --force says),
  // when the folder holds an earlier result and there is no --force, or
  // when an earlier result's file is also an input; Failure (kExitOutput)
  // when the folder cannot be written.
  ResultFolder(const Options& o, std::vector<std::string> names, const InputSet& inputs);
  // Removes the staging folder and everything in it unless published.
  ~ResultFolder();
  ResultFolder(const ResultFolder&) = delete;
  ResultFolder& operator=(const ResultFolder&) = delete;

  // Where the writers write (a hidden folder inside the output folder).
  const std::string& staging() const { return staging_; }
  // The files of an earlier result that publish() will remove.
  const std::vector<std::string>& earlier() const { return earlier_; }

  // Moves every staged file to its final name (taking back those already
  // moved if one cannot be), removes the earlier result's other files and
  // writes the manifest. Throws Failure (kExitOutput). Returns the paths
  // removed.
  std::vector<std::string> publish();

 private:
  std::string folder_, staging_;
  std::vector<std::string> names_;
  std::vector<std::string> earlier_;  // full paths of files and leftover staging folders
  bool published_ = false;
};

// `text` (a message) with the staging folder of the live ResultFolder, if
// any, replaced by its output folder: a failure names the file the user
// asked for, not its temporary place.
std::string with_final_names(const std::string& text);
// Tells with_final_names of a staging folder another process made (the
// ranks of a distributed run write into rank 0's).
void note_staging(const std::string& staging, const std::string& folder);

// What the run says when publish() removed an earlier result's files.
std::string removed_message(const std::string& folder, const std::vector<std::string>& removed);

// The earlier-result files of `folder` (full paths) that `names` does not
// cover: those the manifest lists, those named as fdk-convert names its
// outputs (slice files of `prefix`, volume.*, preview.*), their ".part"
// leftovers and the staging folders of interrupted runs.
std::vector<std::string> earlier_result_files(const std::string& folder, const std::string& prefix,
                                              const std::vector<std::string>& names);

}  // namespace fdk_convert
