#include <torch/extension.h>

torch::Tensor add_one_cuda(torch::Tensor x);

torch::Tensor add_one(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda(), "x must be a CUDA tensor");
    return add_one_cuda(x);
}

PYBIND11_MODULE(TORCH_EXTENSION_NAME, m) { m.def("add_one", &add_one, "x + 1 on the GPU"); }
