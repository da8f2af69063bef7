# symfonic completion for bash: source this file, or install it with `symfonic completion install bash`.
_symfonic_completion() {
    local IFS=$'\n'
    COMPREPLY=( $( env COMP_WORDS="${COMP_WORDS[*]}" \
                   COMP_CWORD=$COMP_CWORD \
                   COMP_LINE="$COMP_LINE" COMP_POINT=$COMP_POINT \
                   COMP_WORDBREAKS="$COMP_WORDBREAKS" \
                   _SYMFONIC_COMPLETE=complete_bash $1 2>/dev/null ) )
    return 0
}

complete -o default -F _symfonic_completion symfonic
