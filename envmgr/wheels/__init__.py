"""The wheel store: store.py (the local cache of CUDA wheels built through a recipe, keyed by everything
that decides the build), index.py (a team's PEP 503 index written from the cache) and remote.py (reading such an
index, folder or URL, before building).

May import every layer up to and including doctor/ (the binary readers)."""
