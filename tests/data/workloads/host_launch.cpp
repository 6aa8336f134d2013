// Builds one workload's kernel.cu into a shared library with the host shim:
//   g++ -std=c++20 -shared -fPIC -pthread -ffp-contract=off -DKERNEL_SOURCE='"…/kernel.cu"' -DKERNEL=name
#include "cuda_host.h"
#include KERNEL_SOURCE

extern "C" void simt_host_launch(unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by, unsigned bz,
                                 void** argv)
{
    simt_launch(KERNEL, dim3{gx, gy, gz}, dim3{bx, by, bz}, argv);
}
