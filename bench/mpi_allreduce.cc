// The MPI peer of bench_allreduce: seconds per MPI_Allreduce (float32 sum) for each size, after
// two warm-up rounds; rank 0 prints "allreduce BYTES SECONDS" lines.
//   mpirun -np 2 bench_mpi_allreduce --sizes 4096 65536 --iters 2000 1000
#define OMPI_SKIP_MPICXX 1  // the C API only (the C++ bindings warn)
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::vector<long long> sizes, iters;
  std::vector<long long>* into = nullptr;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--sizes") == 0) into = &sizes;
    else if (std::strcmp(argv[i], "--iters") == 0) into = &iters;
    else if (into != nullptr) into->push_back(std::atoll(argv[i]));
  }
  for (size_t s = 0; s < sizes.size() && s < iters.size(); ++s) {
    const long long n = sizes[s] / 4;
    std::vector<float> in(static_cast<size_t>(n), 1.0f + rank), out(static_cast<size_t>(n));
    double start = 0;
    for (long long it = -2; it < iters[s]; ++it) {
      if (it == 0) {
        MPI_Barrier(MPI_COMM_WORLD);
        start = MPI_Wtime();
      }
      MPI_Allreduce(in.data(), out.data(), static_cast<int>(n), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    const double seconds = (MPI_Wtime() - start) / static_cast<double>(iters[s]);
    if (rank == 0) std::printf("allreduce %lld %.9f\n", sizes[s], seconds);
  }
  MPI_Finalize();
  return 0;
}
