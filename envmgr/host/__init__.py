"""The seam to the machine: the Host protocol (base.py) and its kinds: live.py (this machine), wine.py (a Wine
prefix), recorded.py (a machine file), recording.py (what discovery read, for `envmgr record`); process.py
(this process's environment and envmgr's settings) and dirs.py (envmgr's own folders).

Imports only the vocabulary (errors, version, winenv, knowledge) and files/; everything above imports it."""
