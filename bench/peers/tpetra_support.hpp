#pragma once
// Tpetra side of the peer benchmarks. tessera::environment starts MPI and Kokkos (Debian's Tpetra
// and tessera use the same Kokkos); Tpetra::ScopeGuard then finds both running, starts neither and
// finalises neither.
#include "peer_common.hpp"

#include <Teuchos_DefaultMpiComm.hpp>
#include <Tpetra_Core.hpp>
#include <Tpetra_CrsMatrix.hpp>
#include <Tpetra_Map.hpp>

#include <vector>

namespace tessera::bench::peer {

using tpetra_map = Tpetra::Map<>;
using tpetra_matrix = Tpetra::CrsMatrix<double>;
using tpetra_go = tpetra_map::global_ordinal_type;

inline Teuchos::RCP<const Teuchos::Comm<int>> teuchos_comm(const communicator& comm) {
  return Teuchos::rcp(new Teuchos::MpiComm<int>(comm.get()));
}

/// A CrsMatrix whose row Map gives each rank exactly the rows of `a` (domain Map: the same when
/// square, else contiguous and even), fill-completed.
inline Teuchos::RCP<tpetra_matrix> tpetra_matrix_from(const communicator& comm, const local_csr& a) {
  const auto tcomm = teuchos_comm(comm);
  auto row_map = Teuchos::rcp(new tpetra_map(static_cast<Tpetra::global_size_t>(a.rows),
                                             static_cast<std::size_t>(a.local_rows()), tpetra_go{0}, tcomm));
  auto domain_map = a.rows == a.cols ? row_map
                                     : Teuchos::rcp(new tpetra_map(static_cast<Tpetra::global_size_t>(a.cols),
                                                                   tpetra_go{0}, tcomm));
  std::vector<std::size_t> counts(static_cast<std::size_t>(a.local_rows()));
  for (std::size_t i = 0; i < counts.size(); ++i) counts[i] = static_cast<std::size_t>(a.row_ptr[i + 1] - a.row_ptr[i]);
  auto m = Teuchos::rcp(new tpetra_matrix(
      row_map, Teuchos::ArrayView<const std::size_t>(counts.data(), static_cast<Teuchos::Ordinal>(counts.size()))));
  std::vector<tpetra_go> cols;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    const auto first = static_cast<std::size_t>(a.row_ptr[i]);
    cols.assign(a.col_idx.begin() + static_cast<std::ptrdiff_t>(first),
                a.col_idx.begin() + static_cast<std::ptrdiff_t>(first + counts[i]));
    m->insertGlobalValues(static_cast<tpetra_go>(a.row_begin + static_cast<global_index>(i)),
                          Teuchos::ArrayView<const tpetra_go>(cols.data(), static_cast<Teuchos::Ordinal>(counts[i])),
                          Teuchos::ArrayView<const double>(a.values.data() + first, static_cast<Teuchos::Ordinal>(counts[i])));
  }
  m->fillComplete(domain_map, row_map);
  return m;
}

/// Sum of the stored values (collective).
inline double tpetra_checksum(const communicator& comm, const tpetra_matrix& m) {
  const auto local = m.getLocalMatrixHost();
  double sum = 0;
  for (std::size_t k = 0; k < local.values.extent(0); ++k) sum += local.values(k);
  return comm.sum(sum);
}

}  // namespace tessera::bench::peer
