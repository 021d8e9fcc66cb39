#pragma once
/// @file
/// shared_context: the one backend context of a communicator. Every plan and workspace that moves
/// data one-sidedly (SpMM's and SpGEMM's workspaces, bsgemm's transport, SUMMA, transpose by slots)
/// asks for it here instead of making its own: contexts are collective to make and hold MPI
/// resources (a conveyor, progress hooks, the progress ranks' registrations), so they are made once
/// per communicator and backend and live while anything uses them.
#ifndef TESSERA_IMPL_PUBLIC_INCLUDE  // lets this header include tessera's detail/ headers
#define TESSERA_IMPL_PUBLIC_INCLUDE
#define TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SHARED_CONTEXT_HPP
#endif

#include "communicator.hpp"

#include <algorithm>
#include <memory>
#include <vector>

namespace tessera {

/// The context of Backend on `comm`, shared by everything that uses one there (collective: one
/// allreduce agrees that every rank still has it, else every rank makes a new one). The
/// communicator keeps it by weak_ptr, so it ends with the last plan or workspace that holds it.
template <class Backend>
[[nodiscard]] std::shared_ptr<typename Backend::context> shared_context(const communicator& comm) {
  using context = typename Backend::context;
  auto& kept = comm.shared_resources().template entries<std::weak_ptr<context>>();
  std::erase_if(kept, [](const std::weak_ptr<context>& w) { return w.expired(); });
  std::shared_ptr<context> live = kept.empty() ? nullptr : kept.front().lock();
  if (comm.min(live ? 1 : 0) == 1) return live;
  auto made = std::make_shared<context>(comm, typename Backend::options{});
  kept.assign(1, made);
  return made;
}

}  // namespace tessera

#ifdef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SHARED_CONTEXT_HPP
#undef TESSERA_IMPL_PUBLIC_INCLUDE
#undef TESSERA_IMPL_PUBLIC_INCLUDE_BY_COMM_SHARED_CONTEXT_HPP
#endif
