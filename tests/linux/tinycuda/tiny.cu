__global__ void add(int *x) { x[threadIdx.x] += 1; }
extern "C" int tiny_launch(int *x) { add<<<1, 4>>>(x); return 0; }
