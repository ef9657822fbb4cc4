#!/usr/bin/env bash
# Proves that learn installs as a person installs it from a release:
#   go install github.com/learn-idempotency/learn/cmd/learn@VERSION
# The checkout's commit (HEAD: changes not committed are not in it) is
# served as that version by a file-based module proxy (.ci/modproxy) put
# ahead of this machine's module proxy; the go command refuses a module
# whose go.mod has a replace directive, or that does not build from its
# module zip alone. The installed learn must then say that version.
# Nothing is left behind: the proxy and the binary live in a temporary
# directory, and learn's own version is taken out of the module cache
# again (the modules it needs stay: that is the cache's job, and it makes
# the build cheap, the dependencies already compiled).
set -euo pipefail
cd "$(dirname "$0")/.."

work=$(mktemp -d)
modcache=$(go env GOMODCACHE)
module=$(go list -m)
# What the install adds to the module cache for learn itself, removed at
# the end: the topmost folder of learn's path that it makes there, or only
# the files of the version it adds where learn's folders were there before.
made=()
for d in "$modcache/$module" "$modcache/cache/download/$module/@v/list"; do
  top=
  while [ ! -e "$d" ]; do top=$d; d=$(dirname "$d"); done
  [ -z "$top" ] || made+=("$top")
done
version=
cleanup() {
  if [ -n "$version" ]; then
    # The go command makes what it puts in the module cache read-only.
    chmod -R u+w "$modcache/$module@$version" 2>/dev/null || true
    rm -rf "$modcache/$module@$version" "$modcache/cache/download/$module/@v/$version".* "${made[@]}"
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# A clone of the commit, since the zip is made as the go command makes one
# from git, which needs a plain repository (not a linked work tree).
rev=$(git rev-parse HEAD)
git clone -q --shared --no-checkout . "$work/src"
read -r _ version < <(cd .ci/modproxy && go run . -repo "$work/src" -rev "$rev" -out "$work/proxy")

echo "go install $module/cmd/learn@$version"
GOPROXY="file://$work/proxy,$(go env GOPROXY)" GONOSUMDB="$module" \
  GOFLAGS="$(go env GOFLAGS) -mod=mod" GOBIN="$work/bin" \
  go install "$module/cmd/learn@$version"

said=$("$work/bin/learn" version)
echo "$said"
if [[ $said != "learn version $version"* ]]; then
  echo "go install: the installed learn says \"$said\", not version $version" >&2
  exit 1
fi
