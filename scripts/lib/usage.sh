# --help for the scripts, before they do anything: `help_if_asked "$0" "$@"`
# prints the script's opening comment (what it does, its usage line) and
# exits 0 when any argument before a `--` is -h or --help. Without it a script
# that installs, builds or deletes a tree first (quickstart.sh, test.sh) did
# all that before the flag reached the program that would have refused it;
# `quickstart.sh -b 8 --help` did, while only the first argument was looked at.
help_if_asked() {
  local script=$1 arg
  shift
  for arg in "$@"; do
    case $arg in
      --) return 0 ;;
      -h | --help)
        awk 'NR == 1 { next } /^#/ { sub(/^# ?/, ""); print; next } { exit }' "$script"
        exit 0
        ;;
    esac
  done
}
