// A Kokkos Tools library that says where a run's time goes: every kernel, deep copy, fence and
// profiling region by name (count, seconds, bytes), one JSON line each, per rank.
//
//   KOKKOS_TOOLS_LIBS=libtessera_kernel_times.so TESSERA_KERNEL_TIMES=times.jsonl mpirun ... program
//   (Kokkos 3.x reads KOKKOS_PROFILE_LIBRARY instead of KOKKOS_TOOLS_LIBS)
//
// The tool asks Kokkos to fence around every kernel (requires_global_fencing), so a kernel's time
// is its run time on the device, not its launch time; the price is that nothing overlaps while it
// is loaded, so totals are an upper bound on the unprofiled run's. "host" is the wall time between
// Kokkos' initialisation and finalisation not spent in kernels, copies or fences: host code, MPI
// and allocation. It talks to Kokkos through the C interface only (no Kokkos headers), so one
// build serves Kokkos 3.4 and 4.x, host and device back-ends alike.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using clock_type = std::chrono::steady_clock;

struct totals {
  std::uint64_t count = 0;
  double seconds = 0;
  std::uint64_t bytes = 0;
};

struct open_event {
  std::string key;
  clock_type::time_point start;
  std::uint64_t bytes = 0;
};

struct state {
  std::map<std::string, totals> by_key;  // "kind\tname"
  std::vector<open_event> open;          // kernels and fences, by the id handed to Kokkos
  std::vector<std::uint64_t> free_ids;
  std::vector<open_event> copies;        // deep copies nest (a copy may launch a kernel)
  std::vector<std::pair<std::string, clock_type::time_point>> regions;
  clock_type::time_point started;
  double kernel_seconds = 0, copy_seconds = 0, fence_seconds = 0;
};

state& the_state() {
  static state s;
  return s;
}

double since(clock_type::time_point t) { return std::chrono::duration<double>(clock_type::now() - t).count(); }

std::uint64_t begin_event(std::string key) {
  auto& s = the_state();
  std::uint64_t id;
  if (!s.free_ids.empty()) {
    id = s.free_ids.back();
    s.free_ids.pop_back();
  } else {
    id = s.open.size();
    s.open.emplace_back();
  }
  s.open[id] = {std::move(key), clock_type::now(), 0};
  return id;
}

double end_event(std::uint64_t id) {
  auto& s = the_state();
  if (id >= s.open.size()) return 0;
  const double secs = since(s.open[id].start);
  auto& t = s.by_key[s.open[id].key];
  ++t.count;
  t.seconds += secs;
  s.free_ids.push_back(id);
  return secs;
}

void append_escaped(std::string& out, const std::string& text) {
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
}

template <class... Args>
void append_format(std::string& out, const char* format, Args... args) {
  char line[512];
  const int n = std::snprintf(line, sizeof line, format, args...);
  if (n > 0) out.append(line, static_cast<std::size_t>(std::min<int>(n, sizeof line - 1)));
}

// One write() in append mode: the ranks of a run share the file, and their lines must not interleave.
void append_to_file(const char* path, const std::string& text) {
  const int fd = path != nullptr ? ::open(path, O_WRONLY | O_APPEND | O_CREAT, 0644) : -1;
  if (fd < 0) {
    std::fwrite(text.data(), 1, text.size(), stderr);
    return;
  }
  for (std::size_t done = 0; done < text.size();) {
    const auto n = ::write(fd, text.data() + done, text.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
}

const char* rank_text() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_RANK"})
    if (const char* v = std::getenv(name)) return v;
  return "0";
}

// Kernels and fences inside a deep copy count as the copy's time in the summary.
void add_outside_copies(double& total, double seconds) {
  if (the_state().copies.empty()) total += seconds;
}

}  // namespace

extern "C" {

struct Kokkos_Profiling_KokkosPDeviceInfo;
struct Kokkos_Profiling_SpaceHandle {
  char name[64];
};
struct Kokkos_Tools_ToolSettings {
  bool requires_global_fencing;
  bool padding[255];
};

void kokkosp_request_tool_settings(const std::uint32_t, Kokkos_Tools_ToolSettings* settings) {
  settings->requires_global_fencing = true;
}

void kokkosp_init_library(const int, const std::uint64_t, const std::uint32_t, Kokkos_Profiling_KokkosPDeviceInfo*) {
  the_state().started = clock_type::now();
}

void kokkosp_begin_parallel_for(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = begin_event(std::string("for\t") + name);
}
void kokkosp_begin_parallel_reduce(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = begin_event(std::string("reduce\t") + name);
}
void kokkosp_begin_parallel_scan(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = begin_event(std::string("scan\t") + name);
}
void kokkosp_end_parallel_for(const std::uint64_t id) { add_outside_copies(the_state().kernel_seconds, end_event(id)); }
void kokkosp_end_parallel_reduce(const std::uint64_t id) { add_outside_copies(the_state().kernel_seconds, end_event(id)); }
void kokkosp_end_parallel_scan(const std::uint64_t id) { add_outside_copies(the_state().kernel_seconds, end_event(id)); }

void kokkosp_begin_fence(const char* name, const std::uint32_t, std::uint64_t* id) {
  *id = begin_event(std::string("fence\t") + name);
}
void kokkosp_end_fence(const std::uint64_t id) { add_outside_copies(the_state().fence_seconds, end_event(id)); }

void kokkosp_begin_deep_copy(Kokkos_Profiling_SpaceHandle dst_space, const char* dst_name, const void*,
                             Kokkos_Profiling_SpaceHandle src_space, const char*, const void*, std::uint64_t bytes) {
  std::string key = std::string("copy\t") + src_space.name + "->" + dst_space.name + " " + dst_name;
  the_state().copies.push_back({std::move(key), clock_type::now(), bytes});
}
void kokkosp_end_deep_copy() {
  auto& s = the_state();
  if (s.copies.empty()) return;
  const auto copy = s.copies.back();
  s.copies.pop_back();
  const double secs = since(copy.start);
  auto& t = s.by_key[copy.key];
  ++t.count;
  t.seconds += secs;
  t.bytes += copy.bytes;
  if (s.copies.empty()) s.copy_seconds += secs;
}

void kokkosp_push_profile_region(const char* name) {
  auto& s = the_state();
  std::string path = s.regions.empty() ? std::string(name) : s.regions.back().first + "/" + name;
  s.regions.emplace_back(std::move(path), clock_type::now());
}
void kokkosp_pop_profile_region() {
  auto& s = the_state();
  if (s.regions.empty()) return;
  auto& t = s.by_key["region\t" + s.regions.back().first];
  ++t.count;
  t.seconds += since(s.regions.back().second);
  s.regions.pop_back();
}

void kokkosp_finalize_library() {
  auto& s = the_state();
  const double wall = since(s.started);
  std::vector<std::pair<std::string, totals>> rows(s.by_key.begin(), s.by_key.end());
  std::sort(rows.begin(), rows.end(), [](const auto& x, const auto& y) { return x.second.seconds > y.second.seconds; });
  const char* rank = rank_text();
  const char* label = std::getenv("TESSERA_KERNEL_TIMES_LABEL");
  std::string out;
  const auto head = [&] {
    out += "{\"tool\": \"kernel_times\", \"rank\": ";
    out += rank;
    out += ", \"label\": \"";
    append_escaped(out, label != nullptr ? label : "");
    out += "\", ";
  };
  head();
  append_format(out,
                "\"kind\": \"summary\", \"wall_seconds\": %.6f, \"kernel_seconds\": %.6f, \"copy_seconds\": %.6f, "
                "\"fence_seconds\": %.6f, \"host_seconds\": %.6f}\n",
                wall, s.kernel_seconds, s.copy_seconds, s.fence_seconds,
                wall - s.kernel_seconds - s.copy_seconds - s.fence_seconds);
  for (const auto& [key, t] : rows) {
    const auto tab = key.find('\t');
    head();
    out += "\"kind\": \"" + key.substr(0, tab) + "\", \"name\": \"";
    append_escaped(out, key.substr(tab + 1));
    append_format(out, "\", \"count\": %llu, \"seconds\": %.6f", static_cast<unsigned long long>(t.count), t.seconds);
    if (t.bytes > 0) append_format(out, ", \"bytes\": %llu", static_cast<unsigned long long>(t.bytes));
    out += "}\n";
  }
  append_to_file(std::getenv("TESSERA_KERNEL_TIMES"), out);
}

}  // extern "C"
