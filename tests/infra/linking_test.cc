// What nmt's standard-library calls bind to at run time. LibTorch 2.x's libtorch_cpu.so exports
// its own unversioned copies of standard functions (std::filesystem among them); when nmt's
// calls bound to those, remove_all jumped to address 0. Every executable therefore names
// libstdc++ first (CMakeLists.txt, nmt_executable_link); these tests hold it to that, for
// every standard symbol LibTorch exports, and through the path that crashed.
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/version.h>

#include "test_support.h"

namespace fs = std::filesystem;

namespace {

std::string library_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) == 0 || info.dli_fname == nullptr) return "";
  return info.dli_fname;
}

bool contains(const std::string& s, const char* part) { return s.find(part) != std::string::npos; }

// The loaded objects whose file name contains `part`.
std::vector<std::string> loaded_libraries(const char* part) {
  struct Query {
    const char* part;
    std::vector<std::string> found;
  } query{part, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        if (info->dlpi_name && contains(info->dlpi_name, q->part)) q->found.emplace_back(info->dlpi_name);
        return 0;
      },
      &query);
  return query.found;
}

// The names of the functions an ELF shared library defines and exports (its .dynsym).
std::vector<std::string> exported_functions(const std::string& path) {
  std::vector<std::string> names;
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return names;
  struct stat st {};
  ::fstat(fd, &st);
  void* map = ::mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  if (map == MAP_FAILED) return names;
  const auto* base = static_cast<const char*>(map);
  const auto* header = reinterpret_cast<const Elf64_Ehdr*>(base);
  const auto* sections = reinterpret_cast<const Elf64_Shdr*>(base + header->e_shoff);
  for (int i = 0; i < header->e_shnum; ++i) {
    if (sections[i].sh_type != SHT_DYNSYM) continue;
    const auto* symbols = reinterpret_cast<const Elf64_Sym*>(base + sections[i].sh_offset);
    const char* strings = base + sections[sections[i].sh_link].sh_offset;
    for (size_t k = 0; k < sections[i].sh_size / sizeof(Elf64_Sym); ++k) {
      const Elf64_Sym& s = symbols[k];
      const int binding = ELF64_ST_BIND(s.st_info);
      if (s.st_shndx != SHN_UNDEF && ELF64_ST_TYPE(s.st_info) == STT_FUNC &&
          (binding == STB_GLOBAL || binding == STB_WEAK))
        names.emplace_back(strings + s.st_name);
    }
  }
  ::munmap(map, static_cast<size_t>(st.st_size));
  return names;
}

bool is_standard_library_name(const std::string& name) {
  return name.rfind("_ZNSt", 0) == 0 || name.rfind("_ZNKSt", 0) == 0 || name.rfind("_ZSt", 0) == 0;
}

}  // namespace

TEST(Linking, StandardFunctionsLibTorchAlsoExportsResolveToLibstdcxx) {
  void* libstdcxx = dlopen("libstdc++.so.6", RTLD_LAZY | RTLD_NOLOAD);
  ASSERT_NE(libstdcxx, nullptr) << "libstdc++ is not loaded";
  std::vector<std::string> torch_libraries = loaded_libraries("libtorch");
  for (const std::string& c10 : loaded_libraries("libc10")) torch_libraries.push_back(c10);
  ASSERT_FALSE(torch_libraries.empty()) << "LibTorch is not loaded";

  int checked = 0;
  std::vector<std::string> wrong;
  for (const std::string& library : torch_libraries) {
    for (const std::string& name : exported_functions(library)) {
      if (!is_standard_library_name(name)) continue;
      void* in_libstdcxx = dlsym(libstdcxx, name.c_str());
      if (in_libstdcxx == nullptr) continue;  // LibTorch's own instantiation: nothing to shadow
      ++checked;
      // Bound to libstdc++, or to a template instance the executable holds itself: both fine.
      const std::string bound = library_of(dlsym(RTLD_DEFAULT, name.c_str()));
      if ((contains(bound, "libtorch") || contains(bound, "libc10")) && wrong.size() < 5)
        wrong.push_back(name + " -> " + bound);
    }
  }
  dlclose(libstdcxx);
  EXPECT_TRUE(wrong.empty()) << "standard functions bound to LibTorch's copies, e.g. " << wrong.front();
  std::printf("checked %d standard functions that LibTorch %s exports as well\n", checked, TORCH_VERSION);
}

TEST(Linking, FilesystemCallsGoToLibstdcxx) {
  using RemoveAll = std::uintmax_t (*)(const fs::path&);
  using CreateDirectories = bool (*)(const fs::path&);
  const auto remove_all = static_cast<RemoveAll>(&fs::remove_all);
  const auto create_directories = static_cast<CreateDirectories>(&fs::create_directories);
  EXPECT_TRUE(contains(library_of(reinterpret_cast<void*>(remove_all)), "libstdc++"))
      << library_of(reinterpret_cast<void*>(remove_all));
  EXPECT_TRUE(contains(library_of(reinterpret_cast<void*>(create_directories)), "libstdc++"))
      << library_of(reinterpret_cast<void*>(create_directories));

  nmt::test::TempDir dir;
  fs::create_directories(dir.file("a/b/c"));
  nmt::test::write_bytes(dir.file("a/b/c/f"), "x");
  EXPECT_EQ(fs::remove_all(dir.file("a")), 4u);
}

// The crash users saw: with --keep-last 1 every checkpoint after the first deletes the one
// before it (std::filesystem::remove_all in the nmt binary).
TEST(Linking, TrainingThatRotatesCheckpointsFinishes) {
  nmt::test::TempDir dir;
  const std::string out = dir.file("run");
  auto r = nmt::test::run_command(nmt::test::nmt_binary() + " train --preset transformer-tiny --train " +
                                  nmt::test::fixture("tiny") + " --valid " + nmt::test::fixture("tiny") + " --out " +
                                  out + " --max-steps 12 --save-every 2 --keep-last 1 --valid-every 100" +
                                  " --valid-bleu false --seed 3 --threads 1 -q");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> kept;
  for (const auto& entry : fs::directory_iterator(out + "/checkpoints")) kept.push_back(entry.path().filename());
  ASSERT_EQ(kept.size(), 1u) << "--keep-last 1 keeps one of the 6 checkpoints";
  EXPECT_EQ(kept.front(), "step-00000012");
}
