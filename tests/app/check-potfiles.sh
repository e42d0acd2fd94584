#!/bin/sh
# check-potfiles.sh: every app/viewers/data file with translatable strings is in po/POTFILES.in, which is sorted.
set -eu
root=${1:-.}
cd "$root"
listed=$(grep -v '^#' po/POTFILES.in | grep -v '^$')
status=0
if [ "$(printf '%s\n' "$listed" | LC_ALL=C sort)" != "$listed" ]; then
  echo "po/POTFILES.in is not sorted"; status=1
fi
for f in $(grep -rlE '_\(|ngettext \(|N_\(' --include='*.c' app/workbench viewers | LC_ALL=C sort) \
         $(grep -rl 'translatable="yes"' --include='*.ui' app/workbench viewers | LC_ALL=C sort); do
  if ! printf '%s\n' "$listed" | grep -qx "$f"; then
    echo "$f has translatable strings but is not in po/POTFILES.in"; status=1
  fi
done
for f in $listed; do
  [ -f "$f" ] || { echo "po/POTFILES.in lists $f, which does not exist"; status=1; }
done
exit $status
