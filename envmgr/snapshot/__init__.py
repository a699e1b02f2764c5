"""The snapshot: an environment as operations (envdelta.py), chosen and composed from discovered facts.
selectors.py (what every command selects with), select.py (the pure choice of VS instance, toolset, arch, CUDA),
capture.py (vcvars run once, its `set` dump parsed), compose.py (a choice -> one Snapshot), activation.py (what
a shell must remember to undo), form.py (Snapshot <-> TOML, the only module that knows the file format) and
form_json.py (its JSON form).

May import the vocabulary, files/, host/ and discover/."""
