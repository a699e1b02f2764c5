# envmgr activation for fish. Loaded by the profile line `envmgr init fish` prints:
#   source '/path/to/envmgr/shells/envmgr.fish'   (a static file: opening a shell starts no Python)
# envmgr_activate [selectors]   apply an envmgr environment to this shell (replaces an active one)
# envmgr_deactivate             restore exactly what was there before
# Re-activation without Python: envmgr writes a slot per argument list (envmgr/fastpath/slot_fish.py)
# that fish checks itself (arguments, the cache key's variables, stamps of every watched path) and
# applies; when anything changed, envmgr runs as usual. Locals here are all named __envmgr_*: a
# local of this function hides a global of its name from the envmgr it starts, not from the slot.
function envmgr_activate --description 'apply an envmgr environment to this fish session'
    set -l __envmgr_dir "$ENVMGR_CACHE_DIR"
    if test -z "$__envmgr_dir"
        set __envmgr_dir "$XDG_CACHE_HOME"
        test -n "$__envmgr_dir"; or set __envmgr_dir "$HOME/.cache"
        set __envmgr_dir "$__envmgr_dir/envmgr"
    end
    set -l __envmgr_slot (string join \x1f -- $argv | string replace -ra '[^A-Za-z0-9._=-]' _)
    set __envmgr_slot "$__envmgr_dir/reactivate/fish-$__envmgr_slot"
    set -l __envmgr_ok
    if test -z "$ENVMGR_RESTORE"; and test -r "$__envmgr_slot"
        source "$__envmgr_slot" $argv
        set -e __envmgr_r __envmgr_vals __envmgr_w
    end
    if test -z "$__envmgr_ok"
        set -l __envmgr_script (ENVMGR_SLOT=$__envmgr_slot command envmgr export --activate --format fish $argv)
        or return $status
        string join \n -- $__envmgr_script | source
    end
    return 0    # not the status of the script's last line (`set -q NAME; and set -e NAME`)
end
function envmgr_deactivate --description 'restore the environment from before envmgr_activate'
    set -l __envmgr_script (command envmgr deactivate --format fish)
    or return $status
    string join \n -- $__envmgr_script | source
end

# The slot's helpers (builtins only). They read variables as a child process is given them.
function __envmgr_env --argument-names __envmgr_n __envmgr_v   # NAME VALUE: exported as VALUE ('' = not exported)
    if set -qx $__envmgr_n
        test "x$$__envmgr_n" = "x$__envmgr_v"
    else
        test -z "$__envmgr_v"
    end
end
function __envmgr_versioned   # COUNT NAME VALUE...: exactly these CUDA_PATH_V* (any case) are exported
    set -l __envmgr_names (set -xn | string match -i 'CUDA_PATH_V*')
    contains -- (count $__envmgr_names) $argv[1]; or return 1
    set -e argv[1]
    while set -q argv[2]
        contains -- $argv[1] $__envmgr_names; and __envmgr_env $argv[1] $argv[2]; or return 1
        set -e argv[1..2]
    end
    return 0
end
function __envmgr_fresh --argument-names __envmgr_p __envmgr_s   # PATH STAMP: same mtime, to the ns
    test -e "$__envmgr_p"; and not test "$__envmgr_p" -nt "$__envmgr_s"; and not test "$__envmgr_p" -ot "$__envmgr_s"
end
function __envmgr_absent --argument-names __envmgr_p
    not test -e "$__envmgr_p"; and not test -L "$__envmgr_p"
end
function __envmgr_save --argument-names __envmgr_n   # NAME: its value into __envmgr_w, as JSON into __envmgr_r
    set -g __envmgr_w ''
    test "$__envmgr_r" = '{'; or set -g __envmgr_r "$__envmgr_r, "
    if not set -qx $__envmgr_n
        set -g __envmgr_r "$__envmgr_r\"$__envmgr_n\": null"
        return 0
    end
    set -g __envmgr_w "$$__envmgr_n"
    # JSON escapes control characters; str.strip() takes more for blank; U+F600..: bytes not UTF-8.
    string match -qr '[\x01-\x1f\x85\xa0\x{1680}\x{2000}-\x{200a}\x{2028}\x{2029}\x{202f}\x{205f}\x{3000}\x{f600}-\x{f6ff}]' -- "$__envmgr_w"
    and return 1
    set -l __envmgr_j (string replace -a -- '\\' '\\\\' "$__envmgr_w" | string replace -a -- '"' '\\"')
    set -g __envmgr_r "$__envmgr_r\"$__envmgr_n\": \"$__envmgr_j\""
    return 0    # `set` passes on the status of the last command substitution
end
function __envmgr_keys   # ENTRY...: winenv.path_key of each (trailing '/' and '\' dropped unless nothing is left)
    set -q argv[1]; and string replace -r -- '(?<=[^/\\\\])[/\\\\]+$' '' $argv
    return 0
end
function __envmgr_list --argument-names __envmgr_m   # prepend|append ENTRY...: EnvDelta.apply on __envmgr_w
    set -l __envmgr_add $argv[2..-1]
    set -l __envmgr_addk (__envmgr_keys $__envmgr_add)
    set -l __envmgr_cur (string split -- : "$__envmgr_w" | string match -rv '^ *$')   # split_list
    set -l __envmgr_curk (__envmgr_keys $__envmgr_cur)
    set -l __envmgr_all
    set -l __envmgr_allk
    if test "$__envmgr_m" = prepend
        set __envmgr_all $__envmgr_add
        set __envmgr_allk $__envmgr_addk
    end
    for __envmgr_e in $__envmgr_cur
        set -l __envmgr_k $__envmgr_curk[1]
        set -e __envmgr_curk[1]
        contains -- "$__envmgr_k" $__envmgr_addk; and continue
        set -a __envmgr_all $__envmgr_e
        set -a __envmgr_allk $__envmgr_k
    end
    if test "$__envmgr_m" = append
        set -a __envmgr_all $__envmgr_add
        set -a __envmgr_allk $__envmgr_addk
    end
    set -l __envmgr_seen
    set -l __envmgr_out
    for __envmgr_e in $__envmgr_all    # envdelta.dedupe
        set -l __envmgr_k $__envmgr_allk[1]
        set -e __envmgr_allk[1]
        contains -- "$__envmgr_k" $__envmgr_seen; and continue
        set -a __envmgr_seen $__envmgr_k
        set -a __envmgr_out $__envmgr_e
    end
    set -g __envmgr_w (string join : -- $__envmgr_out)
    return 0
end

# Completion: envmgr answers when Tab is pressed (never while the shell starts).
function __envmgr_complete
    set -l words (commandline -opc)
    command envmgr complete-words --incomplete (commandline -ct) -- $words[2..-1] 2>/dev/null
end
complete -c envmgr -f -a '(__envmgr_complete)'
