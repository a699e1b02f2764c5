"""Reading and writing the files users hand us: read.py (regular files only, with a size cap), tomlread.py
(TOML with one error line naming file, line and column), tomlfast.py (tomllib with C-decoded strings for large
records), schema.py (the shape of every file envmgr reads, checked in one place) and atomic.py (temporary file,
fsync, atomic rename: writes are transactions).

May import only the vocabulary (errors, version, winenv, knowledge)."""
