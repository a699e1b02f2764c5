// The smallest whole CUDA program: the windows workflow's `cuda` job builds it with
// `envmgr run --cuda X -- nvcc` (MSVC as the host compiler, cudart linked statically) and runs it.
// The runners have no GPU and no driver, so "no CUDA device" (exit 3) is an expected outcome there;
// on a machine with a GPU it adds one to four ints on the device and checks the result (exit 0).
#include <cstdio>
#include <cuda_runtime.h>

__global__ void add_one(int *x) { x[threadIdx.x] += 1; }

static int failed(const char *what, cudaError_t err) {
    std::printf("tiny: %s failed: %s\n", what, cudaGetErrorString(err));
    return 1;
}

int main() {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        std::printf("tiny: no CUDA device (%s)\n", err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
        return 3;
    }
    int host[4] = {1, 2, 3, 4};
    int *dev = nullptr;
    if ((err = cudaMalloc(&dev, sizeof host)) != cudaSuccess) return failed("cudaMalloc", err);
    if ((err = cudaMemcpy(dev, host, sizeof host, cudaMemcpyHostToDevice)) != cudaSuccess)
        return failed("copy to device", err);
    add_one<<<1, 4>>>(dev);
    if ((err = cudaGetLastError()) != cudaSuccess) return failed("kernel launch", err);
    if ((err = cudaMemcpy(host, dev, sizeof host, cudaMemcpyDeviceToHost)) != cudaSuccess)
        return failed("copy to host", err);
    cudaFree(dev);
    bool ok = host[0] == 2 && host[1] == 3 && host[2] == 4 && host[3] == 5;
    std::printf("tiny: %s on %d device(s): %d %d %d %d\n", ok ? "ok" : "WRONG", count, host[0], host[1],
                host[2], host[3]);
    return ok ? 0 : 1;
}
