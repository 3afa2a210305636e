// One row of the C-ABI tables: a handle brought to a stage, one hostile
// action whose status is checked exactly, then the good views not yet
// pushed, fdk_finish, every slab, and the volume compared bit for bit with
// the reference.
#pragma once

#include "hostile_support.hpp"

namespace hostile {

enum class Stage {
  kFresh,      // created, nothing pushed
  kHalfPushed,       // views [0, kHalf) pushed
  kAllPushed,  // every view pushed, not finished
  kFinished,   // every view pushed, fdk_finish returned OK
};

enum class MessageFrom {
  kHandle,  // fdk_last_error(ctx)
  kCreate,  // fdk_last_create_error() (calls with a NULL handle)
  kNone,    // the call returns OK or has no message to check
};

enum class After {
  kVolume,     // complete the reconstruction and compare the volume
  kCancelled,  // the action cancelled: every later call says CANCELLED
};

struct ApiRow {
  std::string name;
  Stage stage;
  std::function<fdk_status(fdk_context*)> action;
  fdk_status status;
  std::string needle;
  MessageFrom from = MessageFrom::kHandle;
  After after = After::kVolume;
  std::string pending;  // "" = runs
  // Views [before, before + accepted) the action pushed with their good
  // pixels (a call that must succeed, e.g. a padded pitch).
  int accepted = 0;

  ApiRow(std::string name_, Stage stage_, std::function<fdk_status(fdk_context*)> action_, fdk_status status_,
         std::string needle_, MessageFrom from_ = MessageFrom::kHandle, After after_ = After::kVolume,
         std::string pending_ = "", int accepted_ = 0)
      : name(std::move(name_)), stage(stage_), action(std::move(action_)), status(status_), needle(std::move(needle_)),
        from(from_), after(after_), pending(std::move(pending_)), accepted(accepted_) {}
};

inline void PrintTo(const ApiRow& r, std::ostream* os) { *os << r.name; }

inline int views_accepted(const fdk_context* ctx) {
  fdk_progress p{};
  p.struct_size = sizeof(p);
  EXPECT_EQ(fdk_get_progress(ctx, &p), FDK_OK);
  return p.views_pushed;
}

inline void run_api_row(const ApiRow& row) {
  Handle h;
  ASSERT_EQ(fdk_create(&scan().config, &h.ctx), FDK_OK) << fdk_last_create_error();
  const int before = row.stage == Stage::kFresh ? 0 : row.stage == Stage::kHalfPushed ? kHalf : kViews;
  for (int v = 0; v < before; ++v) ASSERT_EQ(push_good(h.ctx, v), FDK_OK) << fdk_last_error(h.ctx);
  if (row.stage == Stage::kFinished) {
    ASSERT_EQ(fdk_finish(h.ctx), FDK_OK) << fdk_last_error(h.ctx);
  }

  const fdk_status s = row.action(h.ctx);
  ASSERT_EQ(s, row.status) << "message: " << (row.from == MessageFrom::kCreate ? fdk_last_create_error()
                                                                              : fdk_last_error(h.ctx));
  if (row.from == MessageFrom::kHandle) {
    EXPECT_TRUE(message_has(fdk_last_error(h.ctx), row.status, row.needle));
  } else if (row.from == MessageFrom::kCreate) {
    EXPECT_TRUE(message_has(fdk_last_create_error(), row.status, row.needle));
  }

  if (row.after == After::kCancelled) {
    // Only queries and fdk_destroy remain useful.
    EXPECT_EQ(push_good(h.ctx, kViews - 1), FDK_ERROR_CANCELLED);
    EXPECT_EQ(fdk_finish(h.ctx), FDK_ERROR_CANCELLED);
    std::vector<float> slab(16 * 16 * 16);
    EXPECT_EQ(fdk_read_slab(h.ctx, 0, slab.data(), slab.size() * 4), FDK_ERROR_CANCELLED);
    fdk_progress p{};
    p.struct_size = sizeof(p);
    EXPECT_EQ(fdk_get_progress(h.ctx, &p), FDK_OK);
    EXPECT_EQ(p.phase, FDK_PHASE_CANCELLED);
    return;
  }
  // No view was half taken by the hostile call.
  if (row.stage != Stage::kFinished) {
    EXPECT_EQ(views_accepted(h.ctx), before + row.accepted);
    for (int v = before + row.accepted; v < kViews; ++v) ASSERT_EQ(push_good(h.ctx, v), FDK_OK) << "view " << v << ": " << fdk_last_error(h.ctx);
    ASSERT_EQ(fdk_finish(h.ctx), FDK_OK) << fdk_last_error(h.ctx);
  }
  std::vector<float> volume;
  ASSERT_EQ(fdk_test::read_volume(h.ctx, volume), FDK_OK) << fdk_last_error(h.ctx);
  EXPECT_TRUE(same_volume(volume));
}

}  // namespace hostile
