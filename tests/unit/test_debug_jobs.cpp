// The jobs of side-by-side debug loops (debug/job_spec.h, debug/slurm_runner.h): a job's spec and
// outcome files round-trip and bad ones are clear errors; `debug run-job` makes, checks and writes
// the outcome (a failed make is the outcome's error, a command ended from outside leaves none);
// squeue's lines and sbatch's array ranges.
#include <gtest/gtest.h>

#include <fstream>

#include "debug/job_spec.h"
#include "debug/slurm_runner.h"
#include "runtime/core/error.h"
#include "tests/unit/test_data_util.h"

namespace vkg::debug {
namespace {

using test::error_of;
using test::TempDir;

void write_text(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

JobSpec sample_spec(const TempDir& dir) {
  JobSpec spec;
  spec.index = 7;
  spec.make = {"sh", "-c", "echo made > \"$0\"", dir.file("artifact.txt")};
  spec.artifact = dir.file("artifact.txt");
  spec.outcome = dir.file("iter7.outcome.json");
  spec.check.command = {"grep", "-q", "made", dir.file("artifact.txt")};
  spec.check.fail_codes = {1};
  spec.check.fail_regexes = {"bad.*"};
  spec.check.timeout_s = 30;
  spec.check.env = {"LP_NUM_THREADS=1"};
  return spec;
}

TEST(JobSpec, RoundTripsAndRejectsBadFiles) {
  const TempDir dir;
  const JobSpec spec = sample_spec(dir);
  save_job_spec(dir.file("spec.json"), spec);
  const JobSpec back = load_job_spec(dir.file("spec.json"));
  EXPECT_EQ(back.index, 7);
  EXPECT_EQ(back.make, spec.make);
  EXPECT_EQ(back.check.command, spec.check.command);
  EXPECT_EQ(back.check.fail_codes, spec.check.fail_codes);
  EXPECT_EQ(back.check.fail_regexes, spec.check.fail_regexes);
  EXPECT_EQ(back.check.env, spec.check.env);
  EXPECT_EQ(back.outcome, spec.outcome);

  write_text(dir.file("bad.json"), "{\"version\": 1, \"index\": 1}");
  EXPECT_NE(error_of([&] { load_job_spec(dir.file("bad.json")); }).find("job spec"), std::string::npos);
  write_text(dir.file("v2.json"), "{\"version\": 2}");
  EXPECT_NE(error_of([&] { load_job_spec(dir.file("v2.json")); }).find("not version 1"), std::string::npos);
  EXPECT_THROW(load_job_spec(dir.file("missing.json")), Error);
}

TEST(JobOutcome, MissingIsNotYetAndAnotherIterationsIsAnError) {
  const TempDir dir;
  EXPECT_FALSE(load_job_outcome(dir.file("none.json"), 3).has_value());
  save_job_outcome(dir.file("o.json"), 3, {true, 1.5, std::nullopt});
  const std::optional<JobOutcome> o = load_job_outcome(dir.file("o.json"), 3);
  ASSERT_TRUE(o.has_value());
  EXPECT_TRUE(o->passed);
  EXPECT_DOUBLE_EQ(o->seconds, 1.5);
  EXPECT_FALSE(o->error.has_value());
  EXPECT_NE(error_of([&] { load_job_outcome(dir.file("o.json"), 4); }).find("of iteration 3, not 4"),
            std::string::npos);
}

TEST(RunJob, MakesChecksAndWritesTheOutcome) {
  const TempDir dir;
  JobSpec spec = sample_spec(dir);
  save_job_spec(dir.file("spec.json"), spec);
  EXPECT_EQ(run_job_file(dir.file("spec.json")), 0);
  std::optional<JobOutcome> o = load_job_outcome(spec.outcome, 7);
  ASSERT_TRUE(o.has_value());
  EXPECT_TRUE(o->passed);
  EXPECT_FALSE(o->error.has_value());

  // A make command that fails: the outcome says why, with its output.
  spec.make = {"sh", "-c", "echo no model here; exit 3"};
  save_job_spec(dir.file("spec.json"), spec);
  EXPECT_EQ(run_job_file(dir.file("spec.json")), 0);
  o = load_job_outcome(spec.outcome, 7);
  ASSERT_TRUE(o.has_value() && o->error.has_value());
  EXPECT_NE(o->error->find("iteration 7 could not be made (exit code 3"), std::string::npos) << *o->error;
  EXPECT_NE(o->error->find("no model here"), std::string::npos);
}

// Slurm ends a cancelled, timed-out or preempted task by signalling all of its processes, the
// check sometimes before the task itself: a check (or make) ended by SIGTERM, SIGKILL or SIGHUP
// leaves no outcome, so that the iteration runs again, while a check that crashes fails.
TEST(RunJob, ACommandEndedFromOutsideLeavesNoOutcome) {
  const TempDir dir;
  JobSpec spec = sample_spec(dir);
  for (const char* signal : {"TERM", "KILL", "HUP"}) {
    SCOPED_TRACE(signal);
    spec.check.command = {"sh", "-c", std::string("kill -") + signal + " $$"};
    save_job_spec(dir.file("spec.json"), spec);
    EXPECT_GT(run_job_file(dir.file("spec.json")), 128);
    EXPECT_FALSE(load_job_outcome(spec.outcome, 7).has_value());
  }
  // A shell whose command was terminated exits with 128 + the signal ("Terminated", 143).
  spec.check.command = {"sh", "-c", "sh -c 'kill -TERM $$'; exit $?"};
  save_job_spec(dir.file("spec.json"), spec);
  EXPECT_EQ(run_job_file(dir.file("spec.json")), 128 + 15);
  EXPECT_FALSE(load_job_outcome(spec.outcome, 7).has_value());
  spec.make = {"sh", "-c", "kill -TERM $$"};
  save_job_spec(dir.file("spec.json"), spec);
  EXPECT_EQ(run_job_file(dir.file("spec.json")), 128 + 15);
  EXPECT_FALSE(load_job_outcome(spec.outcome, 7).has_value());

  spec = sample_spec(dir);
  spec.check.command = {"sh", "-c", "kill -SEGV $$"};
  spec.check.fail_codes = {};  // any exit but 0 fails
  spec.check.fail_regexes = {};
  save_job_spec(dir.file("spec.json"), spec);
  EXPECT_EQ(run_job_file(dir.file("spec.json")), 0);
  const std::optional<JobOutcome> o = load_job_outcome(spec.outcome, 7);
  ASSERT_TRUE(o.has_value());
  EXPECT_FALSE(o->passed);
  EXPECT_FALSE(o->error.has_value());
}

TEST(Slurm, SqueueLinesAndArrayRanges) {
  const auto queued = parse_squeue("812_0 RUNNING\n812_3 PENDING\n\n813_5 COMPLETING\n");
  EXPECT_EQ(queued.size(), 3u);
  EXPECT_EQ(queued.at("812_3"), "PENDING");
  EXPECT_EQ(queued.at("813_5"), "COMPLETING");
  EXPECT_TRUE(parse_squeue("").empty());
  EXPECT_EQ(array_ranges({3, 4, 5, 8}), "3-5,8");
  EXPECT_EQ(array_ranges({9, 0, 1, 2, 7}), "0-2,7,9");
  EXPECT_EQ(array_ranges({4}), "4");
}

TEST(Slurm, WithoutSlurmsCommandsTheExecutorSaysWhatIsMissing) {
  const char* path = std::getenv("PATH");
  const std::string saved = path ? path : "";
  setenv("PATH", "/nonexistent", 1);
  const std::string error = error_of([] { SlurmRunner runner(SlurmOptions{}); });
  setenv("PATH", saved.c_str(), 1);
  EXPECT_NE(error.find("'sbatch' is not on PATH"), std::string::npos) << error;
}

}  // namespace
}  // namespace vkg::debug
