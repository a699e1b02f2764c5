# envmgr activation for fish. Loaded by the profile line `envmgr init fish` prints:
#   source '/path/to/envmgr/shells/envmgr.fish'   (a static file: opening a shell starts no Python)
# envmgr_activate [selectors]   apply an envmgr environment to this shell (replaces an active one)
# envmgr_deactivate             restore exactly what was there before
function envmgr_activate --description 'apply an envmgr environment to this fish session'
    set -l script (command envmgr export --activate --format fish $argv | string collect)
    or return $status
    echo $script | source
end
function envmgr_deactivate --description 'restore the environment from before envmgr_activate'
    set -l script (command envmgr deactivate --format fish | string collect)
    or return $status
    echo $script | source
end

# Completion: envmgr answers when Tab is pressed (never while the shell starts).
function __envmgr_complete
    set -l words (commandline -opc)
    command envmgr complete-words --incomplete (commandline -ct) -- $words[2..-1] 2>/dev/null
end
complete -c envmgr -f -a '(__envmgr_complete)'
