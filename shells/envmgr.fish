# envmgr activation for fish. Loaded by: envmgr init fish --script | source
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
