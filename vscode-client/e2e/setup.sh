#!/usr/bin/env bash
# Installs what the end-to-end tests need besides vscode-client's own devDependencies (which
# bring playwright-core and @vscode/vsce): a real VS Code (code-server from npm, whose extension
# host runs on this machine's Node 20) and Debian's headless Chromium. code-server lands in a
# git-ignored folder; a second run with the same version does nothing (a stamp file records it).
#
#   e2e/setup.sh [TOOLS_DIR]        (default: vscode-client/e2e/.tools)
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
TOOLS=$(mkdir -p "${1:-$HERE/.tools}" && cd "${1:-$HERE/.tools}" && pwd)

# code-server 4.100.x is VS Code 1.100.3, the last line whose engines.node is 20 (Debian bookworm's
# Node). It pulls @vscode/ripgrep, whose install step downloads rg from GitHub: we hand it Debian's
# rg through its download cache instead (keyed by the package version and ripgrep's release tag).
CODE_SERVER=4.100.3
RIPGREP_PACKAGE=1.15.11
RIPGREP_TAG=v13.0.0-10
STAMP="$TOOLS/.installed-$CODE_SERVER"

apt_missing=()
command -v chromium >/dev/null 2>&1 || apt_missing+=(chromium)
command -v rg >/dev/null 2>&1 || apt_missing+=(ripgrep)
command -v g++ >/dev/null 2>&1 || apt_missing+=(g++)
command -v make >/dev/null 2>&1 || apt_missing+=(make)
# code-server's kerberos module compiles against these headers.
[ -e /usr/include/gssapi/gssapi.h ] || apt_missing+=(libkrb5-dev)
[ -e /usr/include/node/node.h ] || apt_missing+=(nodejs)   # Debian's nodejs ships the headers
if [ ${#apt_missing[@]} -gt 0 ]; then
  if [ "$(id -u)" != 0 ]; then
    echo "e2e setup: missing system packages (${apt_missing[*]}); run: sudo apt-get install -y ${apt_missing[*]}" >&2
    exit 1
  fi
  echo "e2e setup: apt-get install ${apt_missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${apt_missing[@]}" >/dev/null
fi

if [ -e "$STAMP" ]; then
  exit 0
fi

started=$(date +%s)
export TMPDIR="$TOOLS/tmp"   # @vscode/ripgrep looks for its cached download in os.tmpdir()
cache="$TMPDIR/vscode-ripgrep-cache-$RIPGREP_PACKAGE"
mkdir -p "$cache" "$TMPDIR/rg-archive"
cp "$(command -v rg)" "$TMPDIR/rg-archive/rg"
tar -czf "$cache/ripgrep-$RIPGREP_TAG-$(uname -m)-unknown-linux-musl.tar.gz" -C "$TMPDIR/rg-archive" rg

dir="$TOOLS/code-server"   # its own npm project, so nothing mixes with the extension's packages
mkdir -p "$dir"
[ -e "$dir/package.json" ] || echo '{"name":"pi-e2e-code-server","private":true}' > "$dir/package.json"
# Native modules build against the local Node headers (/usr/include/node), nothing downloaded;
# code-server's postinstall refuses to run as root unless told that is meant (CI runs as root),
# and fetches node-gyp with npx, which must not stop to ask.
(cd "$dir" && npm_config_nodedir=/usr npm_config_unsafe_perm=true npm_config_yes=true \
  npm install --no-audit --no-fund --loglevel=error "code-server@$CODE_SERVER")
rm -rf "$TMPDIR"
rm -f "$TOOLS"/.installed-*
touch "$STAMP"
echo "e2e setup: code-server $CODE_SERVER in $TOOLS ($(( $(date +%s) - started )) s)"
