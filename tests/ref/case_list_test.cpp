// ref/case_list.h: the default list and the parser's errors.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "ref/case_list.h"
#include "tests/support/test_data.h"

namespace mlacheck::ref {
namespace {

TEST(RefCaseList, DefaultListHoldsTheHarnessShapesAndSeeds) {
  const std::vector<CaseSpec> cases =
      read_case_list((mlacheck::testing::data_dir() / "cases" / "default.txt").string());
  const int want[8][3] = {{4, 1024, 4217},  {4, 8192, 4220},  {32, 1024, 5412},  {32, 8192, 5415},
                          {64, 1024, 1357}, {64, 8192, 1360}, {256, 1024, 9823}, {256, 8192, 9826}};
  ASSERT_EQ(cases.size(), 8u);
  for (int i = 0; i < 8; ++i) {
    EXPECT_EQ(cases[i].batch, want[i][0]);
    EXPECT_EQ(cases[i].kv_len, want[i][1]);
    EXPECT_EQ(cases[i].seed, static_cast<uint64_t>(want[i][2]));
    EXPECT_EQ(cases[i].q_len, 1);
    EXPECT_EQ(cases[i].profile, Profile::harness);
    EXPECT_FALSE(cases[i].ragged || cases[i].shuffle_pages);
    EXPECT_EQ(cases[i].page_size, 1);
  }
  EXPECT_EQ(cases[0].name, "bs4_kv1024");
}

TEST(RefCaseList, ParsesEveryKey) {
  const auto cases = parse_case_list(
      "# comment\n\n  batch=3 kv_len=77 seed=18446744073709551615 q_len=4 profile=boundary "
      "layout=ragged page_size=16 shuffle_pages=1 poison_unused=1   # trailing\n"
      "\tkv_len=5 batch=1 seed=0\r\n",
      "t");
  ASSERT_EQ(cases.size(), 2u);
  EXPECT_EQ(cases[0].batch, 3);
  EXPECT_EQ(cases[0].seed, 18446744073709551615ull);
  EXPECT_EQ(cases[0].q_len, 4);
  EXPECT_EQ(cases[0].profile, Profile::boundary);
  EXPECT_TRUE(cases[0].ragged && cases[0].shuffle_pages && cases[0].poison_unused);
  EXPECT_EQ(cases[0].page_size, 16);
  EXPECT_EQ(cases[0].name, default_name(cases[0]));
  EXPECT_EQ(cases[1].name, "bs1_kv5_s0");
}

TEST(RefCaseList, ErrorsNameTheLine) {
  const struct {
    const char* text;
    const char* message;
  } bad[] = {
      {"batch=1 kv_len=2", "t:1: missing seed="},
      {"\nbatch=1 kv_len=2 seed=x", "t:2: seed=x: expected an unsigned 64-bit integer"},
      {"batch=1 kv_len=2 seed=1 q_len=5", "t:1: q_len=5: expected 1, 2, 3 or 4"},
      {"batch=1 kv_len=2 seed=1 colour=red", "t:1: unknown key 'colour'"},
      {"batch=1 batch=2 kv_len=2 seed=1", "t:1: key 'batch' given twice"},
      {"batch=1 kv_len=-2 seed=1", "t:1: kv_len=-2: expected an integer >= 0"},
      {"batch=1 kv_len=2 seed=1 junk", "t:1: 'junk' is not key=value"},
      {"batch=1 kv_len=2 seed=1 profile=spiky", "t:1: profile=spiky: expected harness"},
      // Names become file names under gen's -o (issue 11 item 7): one safe path component.
      {"name=../../x batch=1 kv_len=2 seed=1", "t:1: name=../../x: expected a file-name component"},
      {"name=/abs/x batch=1 kv_len=2 seed=1", "t:1: name=/abs/x: expected a file-name component"},
      {"name=a/b batch=1 kv_len=2 seed=1", "t:1: name=a/b: expected a file-name component"},
      {"name=.. batch=1 kv_len=2 seed=1", "t:1: name=..: expected a file-name component"},
      {"name=.hidden batch=1 kv_len=2 seed=1", "t:1: name=.hidden: expected"},
      {"name=-rf batch=1 kv_len=2 seed=1", "t:1: name=-rf: expected"},
      {"name=a batch=1 kv_len=2 seed=1\nname=a batch=2 kv_len=2 seed=1", "t:2: case name 'a' is already used on line 1"},
      {"batch=1 kv_len=2 seed=1\nbatch=1 kv_len=2 seed=1", "t:2: case name 'bs1_kv2_s1' is already used on line 1"},
      // Control bytes are escaped, and a NUL no longer ends the message (what() is a C string).
      {"batch=1 kv_len=2 seed=1 \x1b[31m=x", "t:1: unknown key '\\x1b[31m'"},
  };
  for (const auto& b : bad) {
    try {
      parse_case_list(b.text, "t");
      ADD_FAILURE() << "no error for: " << b.text;
    } catch (const CaseListError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(b.message, 0), 0u) << e.what();
    }
  }
  EXPECT_THROW(read_case_list("/nonexistent/cases.txt"), CaseListError);
  try {
    parse_case_list(std::string("batch=1 kv_len=2 seed=1 k\0ey=1 tail", 35), "t");
    ADD_FAILURE() << "a NUL in a key was accepted";
  } catch (const CaseListError& e) {
    EXPECT_EQ(std::string(e.what()), "t:1: unknown key 'k\\x00ey'");
  }
}

// Issue 11 items 5 and 9: a file that names no case, or is no regular file, is an error (exit 2
// in the CLI), never an empty run that passes.
TEST(RefCaseList, FilesWithoutCasesAndNonRegularFilesAreRefused) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("mlacheck_case_list_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto write = [&](const char* name, const std::string& text) {
    std::ofstream(dir / name, std::ios::binary) << text;
    return (dir / name).string();
  };
  const auto message = [](const std::string& path) {
    try {
      read_case_list(path);
    } catch (const CaseListError& e) {
      return std::string(e.what());
    }
    return std::string("accepted");
  };
  EXPECT_NE(message(write("empty.txt", "")).find("has no case"), std::string::npos);
  EXPECT_NE(message(write("comments.txt", "# only\n\n   # comments\n")).find("has no case"), std::string::npos);
  EXPECT_NE(message(dir.string()).find("not a regular file"), std::string::npos);
  EXPECT_NE(message("/dev/zero").find("not a regular file"), std::string::npos);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace mlacheck::ref
