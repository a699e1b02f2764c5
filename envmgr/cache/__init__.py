"""The snapshot cache: key.py (the key rule and validity stats, import-free for the fast path), store.py
(one TOML file per selection, valid while a few stats hold), fast.py (KEY.fast, the fast path's pre-rendered
answers) and resolve.py (selectors -> Snapshot: cache first, then discover -> choose -> compose).

May import the vocabulary, files/, host/, discover/, snapshot/, recipes/ and shellkit/."""
