#!/bin/bash
# The package table of issue 22's closing notes: for the module in DIR (default .),
# each package's non-test lines and files, and the import arrows between the
# module's packages. Usage: scripts/pkgtable.sh [DIR]
# usage: pkgtable.sh DIR  -> per package: non-test lines, files; total; import arrows among the module's packages
cd "${1:-.}" || exit 1
mod=$(go list -m)
total=0
go list -f '{{.ImportPath}} {{.Dir}} {{join .GoFiles " "}}' ./... 2>/dev/null | while read -r ip dir files; do
  n=0; f=0
  for x in $files; do n=$((n + $(wc -l < "$dir/$x"))); f=$((f+1)); done
  echo "${ip#$mod/} $n $f"
done | sort -k2 -n -r > /tmp/pkgtable.$$
cat /tmp/pkgtable.$$
echo "packages: $(wc -l < /tmp/pkgtable.$$), non-test lines: $(awk '{s+=$2} END{print s}' /tmp/pkgtable.$$)"
echo "import arrows among the module's packages: $(go list -f '{{range .Imports}}{{.}} {{end}}' ./... | tr ' ' '\n' | grep -c "^$mod/")"
rm -f /tmp/pkgtable.$$
