"""The console script's fast path: answers the common cached cases without click or a live host.
main.py (the entry point `envmgr`: its argv grammar; --version, cached export, export --activate, falls back to
the full CLI), run.py (`envmgr run` on a cache hit: fork, execve, waitpid) and the re-activation slots per shell
(slot_sh.py for bash/zsh, slot_fish.py, slot_ps1.py) that let a shell re-activate without Python.

Start-up is the point: imports here are deferred on purpose and guarded by tests/unit/fastpath/test_fast_path.py.
May import every layer below cli/; its fall-back to the full CLI (cli.main) is the one import upward."""
