// Prints the KOKKOS_VERSION tessera's build compiled against, for test_downstream to compare.
#include <Kokkos_Core.hpp>

#include <cstdio>

int main() {
  std::printf("KOKKOS_VERSION=%d\n", static_cast<int>(KOKKOS_VERSION));
  return 0;
}
