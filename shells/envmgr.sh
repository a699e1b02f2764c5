# envmgr activation for bash and zsh. Loaded by the profile line `envmgr init bash` prints:
#   . '/path/to/envmgr/shells/envmgr.sh'        (a static file: opening a shell starts no Python)
# envmgr_activate [selectors]   apply an envmgr environment to this shell (replaces an active one)
# envmgr_deactivate             restore exactly what was there before (variables that did not exist are unset)
# Re-activation without Python: envmgr writes a slot per argument list (envmgr/reactivate.py) that
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

# The slot's helpers (no process is started: builtins and parameter expansion only).
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
        eval "[ \"\${${__envmgr_n%%=*}-}\" = \"\${__envmgr_n#*=}\" ]" || return 1
    done
}
__envmgr_save() {   # NAME: add "NAME": <its value as JSON, or null> to ENVMGR_RESTORE's text
    [ "$__envmgr_r" = "{" ] || __envmgr_r="$__envmgr_r, "
    if eval "[ -n \"\${$1+x}\" ]"; then
        eval "__envmgr_v=\$$1"
        case "$__envmgr_v" in *[[:cntrl:]]*) return 1;; esac   # JSON escapes: envmgr writes those
        __envmgr_v=${__envmgr_v//\\/\\\\}
        __envmgr_v=${__envmgr_v//\"/\\\"}
        __envmgr_r="$__envmgr_r\"$1\": \"$__envmgr_v\""
    else
        __envmgr_r="$__envmgr_r\"$1\": null"
    fi
}
__envmgr_key() {   # what two spellings of one folder share (winenv.path_key): trailing '/' dropped
    __envmgr_k=$1
    while [ "${__envmgr_k%/}" != "$__envmgr_k" ]; do __envmgr_k=${__envmgr_k%/}; done
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
    eval "__envmgr_cur=\${$__envmgr_n-}"
    __envmgr_add=:
    for __envmgr_e in "$@"; do __envmgr_key "$__envmgr_e"; __envmgr_add="$__envmgr_add$__envmgr_k:"; done
    __envmgr_out= __envmgr_seen=:
    if [ "$__envmgr_m" = prepend ]; then for __envmgr_e in "$@"; do __envmgr_emit "$__envmgr_e"; done; fi
    __envmgr_cur="$__envmgr_cur:"
    while [ -n "$__envmgr_cur" ]; do
        __envmgr_e=${__envmgr_cur%%:*}
        __envmgr_cur=${__envmgr_cur#*:}
        case "$__envmgr_e" in *[![:space:]]*) ;; *) continue;; esac
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
