#pragma once
/// @file
/// tessera::profiling_region: a named Kokkos profiling region for a scope, so that Kokkos Tools
/// (tools/kernel-times, nsys through its Kokkos connector, ...) attribute the kernels, copies and
/// host time inside it to a phase of an operation. Costs a branch when no tool is loaded.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_PROFILING_REGION_HPP
#endif

#include <Kokkos_Core.hpp>

#include <string>

namespace tessera {

/// Pushes the region `name` for the lifetime of the object (regions nest: a tool sees
/// "tessera::transpose/tessera::transpose::rows").
class profiling_region {
 public:
  explicit profiling_region(const std::string& name) { Kokkos::Profiling::pushRegion(name); }
  ~profiling_region() { Kokkos::Profiling::popRegion(); }
  profiling_region(const profiling_region&) = delete;
  profiling_region& operator=(const profiling_region&) = delete;
};

/// Consecutive phases of one operation as regions: next(name) ends the current phase (if any) and
/// starts `name`; the last one ends with the object.
class profiling_phases {
 public:
  profiling_phases() = default;
  ~profiling_phases() { end(); }
  profiling_phases(const profiling_phases&) = delete;
  profiling_phases& operator=(const profiling_phases&) = delete;

  void next(const std::string& name) {
    end();
    Kokkos::Profiling::pushRegion(name);
    open_ = true;
  }
  void end() {
    if (open_) Kokkos::Profiling::popRegion();
    open_ = false;
  }

 private:
  bool open_ = false;
};

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_PROFILING_REGION_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_CORE_PROFILING_REGION_HPP
#endif
