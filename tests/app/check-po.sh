#!/bin/sh
# check-po.sh: every .po file compiles (msgfmt --check) and translates every string the sources mark now.
set -eu
root=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$root"
xgettext --package-name=fx-workbench --from-code=UTF-8 --add-comments=translators \
  --keyword=_ --keyword=N_ --keyword=C_:1c,2 --keyword=NC_:1c,2 --keyword=ngettext:1,2 \
  --flag=N_:1:pass-c-format --flag=C_:2:pass-c-format --flag=NC_:2:pass-c-format --flag=g_strdup_printf:1:c-format \
  --files-from=po/POTFILES.in -o "$tmp/all.pot"
status=0
for lang in $(cat po/LINGUAS); do
  msgfmt --check --statistics -o "$tmp/$lang.mo" "po/$lang.po"
  msgmerge --quiet --no-fuzzy-matching -o "$tmp/$lang.po" "po/$lang.po" "$tmp/all.pot"
  missing=$(msgattrib --untranslated --no-obsolete "$tmp/$lang.po" | grep -c '^msgid ' || true)
  fuzzy=$(msgattrib --only-fuzzy --no-obsolete "po/$lang.po" | grep -c '^msgid ' || true)
  # Both counts include the header entry when there is any other entry.
  if [ "$missing" -gt 0 ] || [ "$fuzzy" -gt 0 ]; then
    echo "po/$lang.po: untranslated or fuzzy strings:"
    msgattrib --untranslated --no-obsolete "$tmp/$lang.po" | grep -A1 '^msgid ' | head -40
    msgattrib --only-fuzzy --no-obsolete "po/$lang.po" | grep -A1 '^msgid ' | head -40
    status=1
  fi
done
exit $status
