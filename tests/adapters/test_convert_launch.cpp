// fdk-convert's launcher detection (tools/fdk-convert/launch.cpp): which
// environment makes it a rank of several, so that a plain run never
// initialises MPI and srun, mpirun and mpiexec are each recognised.
#include <gtest/gtest.h>

#include <cstdlib>

#include "distributed.hpp"

namespace {

const char* const kVariables[] = {"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "SLURM_STEP_NUM_TASKS",
                                  "SLURM_PROCID", "SLURM_NTASKS", "PMI_SIZE", "PMI_RANK", "PMIX_RANK"};

struct CleanEnvironment : ::testing::Test {
  void SetUp() override {
    for (const char* v : kVariables) ::unsetenv(v);
  }
  void TearDown() override { SetUp(); }
};

TEST_F(CleanEnvironment, PlainRunIsOneRankWithoutLauncher) {
  const fdk_convert::Launch l = fdk_convert::detect_launch();
  EXPECT_TRUE(l.launcher.empty());
  EXPECT_EQ(l.size, 1);
  EXPECT_EQ(l.rank, 0);
}

TEST_F(CleanEnvironment, EachLauncherGivesRankAndSize) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "3", 1);
  fdk_convert::Launch l = fdk_convert::detect_launch();
  EXPECT_NE(l.launcher.find("OpenMPI"), std::string::npos);
  EXPECT_EQ(l.size, 4);
  EXPECT_EQ(l.rank, 3);
  SetUp();
  ::setenv("SLURM_STEP_NUM_TASKS", "8", 1);
  ::setenv("SLURM_PROCID", "5", 1);
  l = fdk_convert::detect_launch();
  EXPECT_NE(l.launcher.find("srun"), std::string::npos);
  EXPECT_EQ(l.size, 8);
  EXPECT_EQ(l.rank, 5);
  SetUp();
  ::setenv("PMI_SIZE", "2", 1);
  ::setenv("PMI_RANK", "1", 1);
  l = fdk_convert::detect_launch();
  EXPECT_EQ(l.size, 2);
  EXPECT_EQ(l.rank, 1);
  SetUp();
  ::setenv("PMIX_RANK", "6", 1);
  l = fdk_convert::detect_launch();
  EXPECT_EQ(l.size, 0);  // MPI tells
  EXPECT_EQ(l.rank, 6);
}

// sbatch's batch script has SLURM_NTASKS but is no srun step: a plain run
// there stays one process.
TEST_F(CleanEnvironment, SlurmBatchScriptWithoutSrunIsPlain) {
  ::setenv("SLURM_NTASKS", "16", 1);
  ::setenv("SLURM_PROCID", "0", 1);
  EXPECT_TRUE(fdk_convert::detect_launch().launcher.empty());
}

TEST_F(CleanEnvironment, GarbageIsNoLauncher) {
  ::setenv("OMPI_COMM_WORLD_SIZE", "four", 1);
  ::setenv("OMPI_COMM_WORLD_RANK", "0", 1);
  EXPECT_TRUE(fdk_convert::detect_launch().launcher.empty());
}

}  // namespace
