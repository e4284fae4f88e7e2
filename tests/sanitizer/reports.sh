#!/usr/bin/env bash
# The sanitizer build's fixture around every test (see hooks.cc):
#   reports.sh clear DIR  empties DIR; everyone may write to it (tests run bk as other accounts)
#   reports.sh check DIR  fails, naming each process, when a sanitizer stopped any process
set -euo pipefail
dir=$2
case $1 in
  clear)
    rm -rf "$dir"
    mkdir -p "$dir"
    chmod 1777 "$dir"
    ;;
  check)
    shopt -s nullglob
    marks=("$dir"/report.*)
    ((${#marks[@]} == 0)) && { echo "no sanitizer reports"; exit 0; }
    echo "${#marks[@]} process(es) stopped by a sanitizer (the report is in that test's output or log):"
    for m in "${marks[@]}"; do echo "  pid ${m##*.}: $(cat "$m")"; done
    exit 1
    ;;
  *) echo "usage: $0 clear|check DIR" >&2; exit 2 ;;
esac
