/**
 * The shell completion scripts `yep-ext completion bash|zsh|fish` prints. Each
 * hands the words typed so far to `yep-ext __complete` (complete.ts decides;
 * the scripts only translate its answer: candidates as `value<TAB>description`
 * lines, `:files` / `:dirs` for path completion) so they never need updating
 * when commands, flags or installed extensions change. Tested by running them
 * in real bash, zsh and fish (test/cli/completion.test.ts).
 */

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

const BASH = `# yep-ext completion for bash. Load it from ~/.bashrc:
#   eval "$(yep-ext completion bash)"
_yep_ext_complete() {
  local line="\${COMP_LINE:0:COMP_POINT}" cur out value
  local -a words reply
  # Split what was typed ourselves: COMP_WORDS also breaks at ':' and '='.
  read -r -a words <<< "$line"
  [[ "$line" == *[[:space:]] || \${#words[@]} -eq 0 ]] && words+=('')
  cur="\${words[-1]}"
  out=$(command yep-ext __complete "\${words[@]:1}" 2>/dev/null) || return 0
  COMPREPLY=()
  while IFS= read -r value; do
    case "$value" in
      :files) mapfile -t reply < <(compgen -f -- "$cur"); COMPREPLY+=("\${reply[@]}"); compopt -o filenames 2>/dev/null ;;
      :dirs) mapfile -t reply < <(compgen -d -- "$cur"); COMPREPLY+=("\${reply[@]}"); compopt -o filenames 2>/dev/null ;;
      *) value="\${value%%$'\\t'*}"; [[ "$value" == "$cur"* ]] && COMPREPLY+=("$value") ;;
    esac
  done <<< "$out"
}
complete -o default -F _yep_ext_complete yep-ext
`;

const ZSH = `#compdef yep-ext
# yep-ext completion for zsh. Load it from ~/.zshrc:
#   eval "$(yep-ext completion zsh)"
_yep_ext() {
  local -a lines described
  local entry value
  lines=("\${(@f)$(command yep-ext __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  for entry in "\${lines[@]}"; do
    case "$entry" in
      :files) _files ;;
      :dirs) _files -/ ;;
      '') ;;
      *) value="\${entry%%$'\\t'*}"
         if [[ "$entry" == *$'\\t'* ]]; then described+=("\${value//:/\\\\:}:\${entry#*$'\\t'}"); else described+=("\${value//:/\\\\:}"); fi ;;
    esac
  done
  (( \${#described} )) && _describe -t values 'yep-ext' described
  return 0
}
if (( ! $+functions[compdef] )); then autoload -Uz compinit && compinit; fi
compdef _yep_ext yep-ext
`;

const FISH = `# yep-ext completion for fish. Install it with:
#   yep-ext completion fish > ~/.config/fish/completions/yep-ext.fish
function __yep_ext_complete
    set -l words (commandline -opc) (commandline -ct)
    set -e words[1]
    for entry in (command yep-ext __complete $words 2>/dev/null)
        switch $entry
            case ':files'
                __fish_complete_path (commandline -ct)
            case ':dirs'
                __fish_complete_directories (commandline -ct)
            case '*'
                printf '%s\\n' $entry
        end
    end
end
complete -c yep-ext -f -a '(__yep_ext_complete)'
`;

export function completionScript(shell: Shell): string {
  return shell === 'bash' ? BASH : shell === 'zsh' ? ZSH : FISH;
}
