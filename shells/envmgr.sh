# envmgr activation for bash and zsh. Loaded by the profile line `envmgr init bash` prints:
#   . '/path/to/envmgr/shells/envmgr.sh'        (a static file: opening a shell starts no Python)
# envmgr_activate [selectors]   apply an envmgr environment to this shell (replaces an active one)
# envmgr_deactivate             restore exactly what was there before (variables that did not exist are unset)
# Re-activation without Python: envmgr writes a slot per argument list (envmgr/fastpath/slot_sh.py) that
# this shell checks itself (arguments, the cache key's variables, stamps of every watched path) and
# applies; when anything changed, envmgr runs as usual.
envmgr_activate() {
    local IFS=$'\037'     # "$*": the arguments joined by a character they do not hold
    __envmgr_dir="${ENVMGR_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/envmgr}/reactivate"
    __envmgr_slot="$*"
    __envmgr_slot="$__envmgr_dir/sh-${__envmgr_slot//[^A-Za-z0-9._=-]/_}"
    __envmgr_ok=
    if [ -z "${ENVMGR_RESTORE-}" ] && [ -r "$__envmgr_slot" ]; then
        __envmgr_args="$*"
        . "$__envmgr_slot"
    fi
    if [ -z "$__envmgr_ok" ]; then
        __envmgr_script="$(ENVMGR_SLOT="$__envmgr_slot" command envmgr export --activate --format sh "$@")" || {
            __envmgr_ok=$?; unset __envmgr_dir __envmgr_slot __envmgr_args __envmgr_script; return $__envmgr_ok; }
        eval "$__envmgr_script"
    fi
    unset __envmgr_dir __envmgr_slot __envmgr_args __envmgr_script __envmgr_ok __envmgr_r __envmgr_v
}
envmgr_deactivate() {
    __envmgr_script="$(command envmgr deactivate --format sh)" || return $?
    eval "$__envmgr_script"
    unset __envmgr_script
}

# The slot's helpers (no process is started: builtins and parameter expansion only). They read
# a variable as a child process is given it (envmgr is one): set and exported, else absent.
# __envmgr_x NAME: NAME is set and exported. __envmgr_env NAME VALUE: a child is given NAME=VALUE
# (VALUE '': NAME is empty or not given, as cachekey reads it).
if [ -n "${ZSH_VERSION-}" ]; then
    eval '__envmgr_x() { [[ ${(tP)1} == *-export* ]]; }
    __envmgr_env() { if [[ ${(tP)1} == *-export* ]]; then [[ ${(P)1} == "$2" ]]; else [[ -z $2 ]]; fi; }'
else
    eval '__envmgr_x() { [[ -n ${!1+x} && ${!1@a} == *x* ]]; }
    __envmgr_env() { if [[ -n ${!1+x} && ${!1@a} == *x* ]]; then [[ ${!1} == "$2" ]]; else [[ -z $2 ]]; fi; }'
fi
__envmgr_fresh() {   # PATH STAMP: PATH exists with the stamp's modification time
    [ -e "$1" ] && ! [ "$1" -nt "$2" ] && ! [ "$1" -ot "$2" ]
}
__envmgr_absent() {
    ! [ -e "$1" ] && ! [ -L "$1" ]
}
__envmgr_versioned() {   # COUNT NAME=VALUE...: exactly these CUDA_PATH_V* variables (any case) are exported
    __envmgr_v=0
    if [ -n "${ZSH_VERSION-}" ]; then
        zmodload zsh/parameter 2>/dev/null   # $parameters (loaded already in interactive shells)
        eval 'for __envmgr_n in ${(k)parameters}; do
            [[ ${(U)__envmgr_n} == CUDA_PATH_V* && ${parameters[$__envmgr_n]} == *export* ]] && __envmgr_v=$((__envmgr_v + 1))
        done'
    else
        eval 'for __envmgr_n in ${!C*} ${!c*}; do
            [[ ${__envmgr_n^^} == CUDA_PATH_V* && ${!__envmgr_n@a} == *x* ]] && __envmgr_v=$((__envmgr_v + 1))
        done'
    fi
    [ "$__envmgr_v" = "$1" ] || return 1
    shift
    for __envmgr_n in "$@"; do
        __envmgr_x "${__envmgr_n%%=*}" || return 1
        eval "[ \"\$${__envmgr_n%%=*}\" = \"\${__envmgr_n#*=}\" ]" || return 1
    done
}
__envmgr_save() {   # NAME: add "NAME": <its value as JSON, or null> to ENVMGR_RESTORE's text
    [ "$__envmgr_r" = "{" ] || __envmgr_r="$__envmgr_r, "
    if __envmgr_x "$1"; then
        eval "__envmgr_v=\$$1"
        # Left to envmgr: control characters (JSON escapes them), bytes that are not UTF-8 (Python
        # reads lone surrogates and refuses them; in a UTF-8 locale such a value is matched byte by
        # byte, and no byte above 127 is printable alone; in the C locale all of them go to envmgr),
        # and the characters beyond ASCII that str.strip() takes for blank (envdelta.split_list).
        case "$__envmgr_v" in
            *[![:print:]]*) return 1;;
            *[![:ascii:]]*) case "$__envmgr_v" in *[$'\xc2\x85\xc2\xa0\xe1\x9a\x80\xe2\x80\x80\xe2\x80\x81\xe2\x80\x82\xe2\x80\x83\xe2\x80\x84\xe2\x80\x85\xe2\x80\x86\xe2\x80\x87\xe2\x80\x88\xe2\x80\x89\xe2\x80\x8a\xe2\x80\xa8\xe2\x80\xa9\xe2\x80\xaf\xe2\x81\x9f\xe3\x80\x80']*) return 1;; esac;;
        esac
        __envmgr_v=${__envmgr_v//\\/\\\\}
        __envmgr_v=${__envmgr_v//\"/\\\"}
        __envmgr_r="$__envmgr_r\"$1\": \"$__envmgr_v\""
    else
        __envmgr_r="$__envmgr_r\"$1\": null"
    fi
}
__envmgr_key() {   # what two spellings of one folder share (winenv.path_key): a trailing run of
    __envmgr_k=$1    # '/' and '\' dropped, unless nothing is left
    while :; do
        case "$__envmgr_k" in */|*\\) __envmgr_k=${__envmgr_k%?};; *) break;; esac
    done
    [ -n "$__envmgr_k" ] || __envmgr_k=$1
}
__envmgr_emit() {   # ENTRY: append it unless a spelling of it is there already (envdelta.dedupe)
    __envmgr_key "$1"
    case "$__envmgr_seen" in *":$__envmgr_k:"*) return 0;; esac
    __envmgr_seen="$__envmgr_seen$__envmgr_k:"
    __envmgr_out="${__envmgr_out:+$__envmgr_out:}$1"
}
__envmgr_list() {   # NAME prepend|append ENTRY...: EnvDelta.apply of one list operation
    __envmgr_n=$1 __envmgr_m=$2
    shift 2
    __envmgr_cur=
    if __envmgr_x "$__envmgr_n"; then eval "__envmgr_cur=\$$__envmgr_n"; fi
    __envmgr_add=:
    for __envmgr_e in "$@"; do __envmgr_key "$__envmgr_e"; __envmgr_add="$__envmgr_add$__envmgr_k:"; done
    __envmgr_out= __envmgr_seen=:
    if [ "$__envmgr_m" = prepend ]; then for __envmgr_e in "$@"; do __envmgr_emit "$__envmgr_e"; done; fi
    __envmgr_cur="$__envmgr_cur:"
    while [ -n "$__envmgr_cur" ]; do
        __envmgr_e=${__envmgr_cur%%:*}
        __envmgr_cur=${__envmgr_cur#*:}
        case "$__envmgr_e" in *[!\ ]*) ;; *) continue;; esac   # blank: only ' ' left (see __envmgr_save)
        __envmgr_key "$__envmgr_e"
        case "$__envmgr_add" in *":$__envmgr_k:"*) continue;; esac
        __envmgr_emit "$__envmgr_e"
    done
    if [ "$__envmgr_m" = append ]; then for __envmgr_e in "$@"; do __envmgr_emit "$__envmgr_e"; done; fi
    export "$__envmgr_n=$__envmgr_out"
    unset __envmgr_n __envmgr_m __envmgr_cur __envmgr_add __envmgr_out __envmgr_seen __envmgr_e __envmgr_k
}
__envmgr_done() {   # MARKER
    export ENVMGR_ACTIVE="$1" ENVMGR_RESTORE="$__envmgr_r}"
    __envmgr_ok=1
}

# Completion: envmgr answers when Tab is pressed (never while the shell starts).
if [ -n "${BASH_VERSION-}" ]; then
    _envmgr_complete() {
        local IFS=$'\n'
        COMPREPLY=($(command envmgr complete-words --incomplete "${COMP_WORDS[COMP_CWORD]}" -- \
            "${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null))
    }
    complete -o default -F _envmgr_complete envmgr
elif [ -n "${ZSH_VERSION-}" ]; then
    _envmgr_complete() {
        local -a words_
        words_=("${(@f)$(command envmgr complete-words --incomplete "${words[CURRENT]}" -- \
            "${(@)words[2,CURRENT-1]}" 2>/dev/null)}")
        compadd -a words_
    }
    (( $+functions[compdef] )) && compdef _envmgr_complete envmgr
fi
