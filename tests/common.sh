# sourced by the shell tests: a scratch folder removed on exit, and the
# ok/bad lines with a failure count (the test ends with [ $fail = 0 ])
set -u
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
ok()  { echo "  ok    $1"; }
bad() { echo "  FAIL  $1"; fail=$((fail + 1)); }
