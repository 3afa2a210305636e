// Natural order, glob patterns, folder listing and OutputFile.
#include <fdk/adapters/error.hpp>
#include <fdk/adapters/files.hpp>

#include <algorithm>

#include "test_support.hpp"

using namespace fdk::adapters;
using fdk_adapter_test::TempDir;

TEST(NaturalOrder, NumbersCompareAsNumbers) {
  EXPECT_TRUE(natural_less("p2.tif", "p10.tif"));
  EXPECT_FALSE(natural_less("p10.tif", "p2.tif"));
  EXPECT_TRUE(natural_less("p9.tif", "p10.tif"));
  EXPECT_TRUE(natural_less("a.tif", "b.tif"));
  EXPECT_TRUE(natural_less("scan1_p2.tif", "scan1_p11.tif"));
  EXPECT_TRUE(natural_less("scan2_p1.tif", "scan10_p0.tif"));
  EXPECT_TRUE(natural_less("p.tif", "p0.tif"));
  // Equal numbers with leading zeros: still a strict, total order.
  EXPECT_NE(natural_less("p01.tif", "p1.tif"), natural_less("p1.tif", "p01.tif"));
  EXPECT_FALSE(natural_less("p1.tif", "p1.tif"));
  // Very long digit runs do not overflow.
  EXPECT_TRUE(natural_less("p99999999999999999999998", "p99999999999999999999999"));
  std::vector<std::string> v = {"p10.tif", "p1.tif", "p2.tif", "p0100.tif", "p20.tif", "p3.tif"};
  std::sort(v.begin(), v.end(), natural_less);
  EXPECT_EQ(v, (std::vector<std::string>{"p1.tif", "p2.tif", "p3.tif", "p10.tif", "p20.tif",
                                         "p0100.tif"}));
}

TEST(Glob, Patterns) {
  EXPECT_TRUE(glob_match("*.tif", "p1.tif"));
  EXPECT_TRUE(glob_match("*.tif", "P1.TIF"));  // case-insensitive by default
  EXPECT_FALSE(glob_match("*.tif", "P1.TIF", false));
  EXPECT_FALSE(glob_match("*.tif", "p1.tiff"));
  EXPECT_TRUE(glob_match("*.tif;*.tiff", "p1.tiff"));
  EXPECT_TRUE(glob_match("proj_???.tif", "proj_001.tif"));
  EXPECT_FALSE(glob_match("proj_???.tif", "proj_0001.tif"));
  EXPECT_TRUE(glob_match("proj_[0-4]*.tif", "proj_3x.tif"));
  EXPECT_FALSE(glob_match("proj_[0-4]*.tif", "proj_5x.tif"));
  EXPECT_TRUE(glob_match("proj_[!0-4]*.tif", "proj_5x.tif"));
  EXPECT_TRUE(glob_match("a*b*c", "aXXbYYc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXXbYY"));
  EXPECT_TRUE(glob_match("[", "["));  // unterminated set is literal
  EXPECT_TRUE(glob_match("", "anything"));
  // Pathological pattern finishes quickly.
  EXPECT_FALSE(glob_match("*a*a*a*a*a*a*a*a*a*b", std::string(200, 'a')));
}

TEST(ListFiles, NaturalOrderPatternAndHiddenFiles) {
  TempDir dir;
  for (const char* n : {"p10.tif", "p2.tif", "p1.tif", ".hidden.tif", "notes.txt", "P3.TIF"}) {
    fdk_adapter_test::write_text(dir / n, "x");
  }
  const auto files = list_files(dir.path(), "*.tif");
  ASSERT_EQ(files.size(), 4u);
  EXPECT_EQ(base_name(files[0]), "p1.tif");
  EXPECT_EQ(base_name(files[1]), "p2.tif");
  EXPECT_EQ(base_name(files[2]), "P3.TIF");
  EXPECT_EQ(base_name(files[3]), "p10.tif");
  EXPECT_EQ(list_files(dir.path(), "").size(), 5u);
  // A folder that matches is listed by list_entries and refused by
  // list_files (it used to be skipped without a word).
  std::filesystem::create_directory(dir / "sub.tif");
  EXPECT_EQ(list_entries(dir.path(), "*.tif").size(), 5u);
  const std::string msg = fdk_adapter_test::what_of([&] { list_files(dir.path(), "*.tif"); });
  EXPECT_NE(msg.find("sub.tif' matches '*.tif' but is a folder, not a file"), std::string::npos)
      << msg;
  EXPECT_EQ(list_files(dir.path(), "p*.tif").size(), 4u);
}

TEST(ListFiles, MissingFolderNamesIt) {
  try {
    list_files("/nonexistent/fdk/folder", "*");
    FAIL() << "no exception";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::kInput);
    EXPECT_NE(std::string(e.what()).find("/nonexistent/fdk/folder"), std::string::npos);
  }
}

TEST(OutputFile, AppearsOnlyOnCommit) {
  TempDir dir;
  const std::string path = dir / "out.bin";
  {
    OutputFile f(path);
    f.write("hello", 5);
    EXPECT_FALSE(is_regular_file(path));
    EXPECT_TRUE(is_regular_file(path + ".part"));
    f.commit();
  }
  EXPECT_TRUE(is_regular_file(path));
  EXPECT_FALSE(is_regular_file(path + ".part"));
  EXPECT_EQ(fdk_adapter_test::read_all(path), "hello");
}

TEST(OutputFile, DestroyedWithoutCommitLeavesNothing) {
  TempDir dir;
  const std::string path = dir / "out.bin";
  {
    OutputFile f(path);
    f.write("hello", 5);
  }
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path()).empty());
}

TEST(OutputFile, InjectedFullDiskNamesTheFile) {
  TempDir dir;
  WriteFaultInjection fault;
  fault.fail_after_bytes = 3;
  const std::string path = dir / "out.bin";
  {
    OutputFile f(path, &fault);
    try {
      f.write("hello", 5);
      FAIL() << "no exception";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::kOutput);
      EXPECT_NE(std::string(e.what()).find(path), std::string::npos);
      EXPECT_NE(std::string(e.what()).find("No space left on device"), std::string::npos);
    }
  }
  EXPECT_TRUE(fdk_adapter_test::names_in(dir.path()).empty());
}

TEST(OutputFile, UnwritableFolder) {
  TempDir dir;
  if (::geteuid() == 0) {
    // root ignores permissions: use a path under a regular file instead.
    fdk_adapter_test::write_text(dir / "file", "x");
    EXPECT_THROW(OutputFile(dir / "file/out.bin"), Error);
    return;
  }
  std::filesystem::create_directory(dir / "ro");
  std::filesystem::permissions(dir / "ro", std::filesystem::perms::owner_read |
                                               std::filesystem::perms::owner_exec);
  EXPECT_THROW(OutputFile(dir / "ro/out.bin"), Error);
}

TEST(MakeDirectories, FailsOnAFile) {
  TempDir dir;
  fdk_adapter_test::write_text(dir / "file", "x");
  EXPECT_NO_THROW(make_directories(dir / "a/b/c"));
  EXPECT_TRUE(is_directory(dir / "a/b/c"));
  EXPECT_THROW(make_directories(dir / "file/sub"), Error);
}
