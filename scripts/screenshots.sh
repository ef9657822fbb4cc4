#!/usr/bin/env bash
# Makes the README's pictures from real runs: the play screen at the end of
# the lost answer (correct) and of a new key per retry (broken), and the
# race of 32 copies without the lock. Each screen is captured from learn in
# tmux with its colours and drawn as SVG by charmbracelet/freeze. Run it
# again whenever the screens change:
#
#   scripts/screenshots.sh          (writes docs/*.svg)
#
# Needs tmux, Go, and a PostgreSQL learn can use (learn doctor says which).
set -euo pipefail
cd "$(dirname "$0")/.."

out=docs
bin=$(mktemp -d)/learn
state=$(mktemp -d)
trap 'rm -rf "$(dirname "$bin")" "$state"; tmux kill-session -t =learn-shot: 2>/dev/null || true; tmux kill-session -t =learn-shot-keep: 2>/dev/null || true' EXIT
# One tmux server for the whole script: a server exiting with its last
# session races the next one.
tmux new-session -d -s learn-shot-keep "sleep 3600"
go build -o "$bin" ./cmd/learn
freeze() { go run github.com/charmbracelet/freeze@v0.2.2 "$@"; }

# waitfor TEXT: until the pane shows TEXT (at most 60 s).
waitfor() {
  for _ in $(seq 1 600); do
    if tmux capture-pane -p -t =learn-shot: | grep -qF -- "$1"; then return 0; fi
    sleep 0.1
  done
  echo "screenshots: \"$1\" never appeared:" >&2
  tmux capture-pane -p -t =learn-shot: >&2
  exit 1
}

# shot NAME W H ARGS...: run learn with ARGS in a W x H pane; the caller
# drives it with keys and waits, then snap NAME captures it.
shot() {
  local w=$2 h=$3
  shift 3
  tmux kill-session -t =learn-shot: 2>/dev/null || true
  # A state directory of its own: nothing resumes from the shot before.
  local home
  home=$(mktemp -d "$state/home-XXXX")
  tmux new-session -d -s learn-shot -x "$w" -y "$h" "XDG_STATE_HOME=$home $bin $*; sleep 60"
}
snap() {
  # tmux writes a colour only where it changes, across lines too; freeze
  # starts every line afresh: carry the last colours into each line.
  tmux capture-pane -e -N -p -t =learn-shot: |
    perl -ne 'print $sgr unless /^\e\[/; print; $sgr = $1 if /((?:\e\[[0-9;]*m)+)(?!.*\e\[[0-9;]*m)/' >"$state/$1.ansi"
  freeze "$state/$1.ansi" --language ansi --window --output "$out/$1.svg" >/dev/null
  echo "screenshots: wrote $out/$1.svg"
}

shot play-correct 100 30 play lost-answer
waitfor "step 1"
tmux send-keys -t =learn-shot: -N 60 n
waitfor "summary of"
snap play-correct

shot play-broken 100 30 play new-key-per-retry --variant broken
waitfor "step 1"
tmux send-keys -t =learn-shot: -N 60 n
waitfor "summary of"
waitfor "fix"
snap play-broken

shot race 100 34 race
waitfor "Copies: 10"
tmux send-keys -t =learn-shot: Up Up + + v Enter
waitfor "charged 32 times"
snap race
