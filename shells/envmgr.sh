# envmgr activation for bash, zsh and other POSIX shells. Loaded by: eval "$(envmgr init bash --script)"
# envmgr_activate [selectors]   apply an envmgr environment to this shell (replaces an active one)
# envmgr_deactivate             restore exactly what was there before (variables that did not exist are unset)
envmgr_activate() {
    __envmgr_script="$(command envmgr export --activate --format sh "$@")" || return $?
    eval "$__envmgr_script"
    unset __envmgr_script
}
envmgr_deactivate() {
    __envmgr_script="$(command envmgr deactivate --format sh)" || return $?
    eval "$__envmgr_script"
    unset __envmgr_script
}
