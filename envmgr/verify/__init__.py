"""`envmgr verify`: prove, in a child process of the target Python, that a CUDA package runs on the GPU.

gguf.py writes the tiny model (no download); child.py runs in the target Python (standard library
only); report.py parses what it said; analyze.py judges it (pure); run.py is the one place with side
effects; render.py prints. llama-cpp-python first; another package gets its own child and checks.

Imports every layer up to wheels/ and msbuild/ (doctor's binary readers, discover's GPUs).
"""
