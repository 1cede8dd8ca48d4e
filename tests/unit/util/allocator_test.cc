// glibc malloc settings for training (nmt/util/allocator.h).
#include <cstdlib>

#include <gtest/gtest.h>

#include "nmt/util/allocator.h"

// Training keeps freed blocks for the next step, unless the user tuned glibc's malloc
// themselves: their MALLOC_* or GLIBC_TUNABLES settings are left as they are.
TEST(Allocator, TrainingSettingsApplyUnlessTheUserSetGlibcsOwn) {
#if defined(__GLIBC__)
  for (const char* name : {"MALLOC_MMAP_THRESHOLD_", "MALLOC_TRIM_THRESHOLD_", "MALLOC_TOP_PAD_", "GLIBC_TUNABLES"}) {
    ASSERT_EQ(setenv(name, "1", 1), 0);
    EXPECT_FALSE(nmt::keep_freed_memory_for_reuse()) << name;
    unsetenv(name);
  }
  EXPECT_TRUE(nmt::keep_freed_memory_for_reuse());
#else
  EXPECT_FALSE(nmt::keep_freed_memory_for_reuse());
#endif
}
