// Source of the device-code samples (tests/corpus/devicecode/README.md says how each was built).
__global__ void add(float *a, const float *b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) a[i] += b[i];
}
extern "C" int launch(float *a, const float *b, int n) {
    add<<<(n + 255) / 256, 256>>>(a, b, n);
    return (int)cudaGetLastError();
}
