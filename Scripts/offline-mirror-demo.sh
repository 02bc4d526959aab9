#!/usr/bin/env bash
# The main job on real input: cache a real web site for offline use with dlcache, then prove it.
#
#   Scripts/offline-mirror-demo.sh [--install] [--limit N] [--concurrency N] [--touch N] [--release] [--keep]
#
# 1. Checks what it needs (nginx, curl, python3, sqlite3-doc: SQLite's HTML documentation, ~960 files nobody
#    here wrote). When something is missing it says what, and installs it with apt-get only with --install
#    or after you answer y on a terminal; otherwise it exits 2 without changing anything.
# 2. Copies that tree (mtimes kept) to a temp dir and serves it with nginx on 127.0.0.1:<free port> using its
#    own generated config (not the system service): nginx's own ETag and Last-Modified, no Cache-Control, so
#    RFC 9111 heuristic freshness applies.
# 3. Downloads every URL once with curl (the baseline), then `dlcache prefetch --pin` all of them.
# 4. Fetches every URL again with `dlcache get`: expected 0 origin requests while fresh (nginx access log).
# 5. Touches --touch files (one also gets new bytes) and fetches every URL with --policy reload-revalidating:
#    expected exactly the touched files answered 200, every other file 304.
# 6. Stops nginx and fetches every URL again with --fallback-to-cache: all from cache (fresh hits, plus the
#    touched files, stale by heuristic freshness, served stale), byte-identical to the files (cmp).
# 7. Prints a summary table; exits 1 if any expectation failed.
#
# --install      install what is missing with apt-get (root or sudo) without asking
# --limit N      use only the first N files (sorted by path); the CI-sized run uses --limit 200
# --concurrency  prefetch and curl parallelism (default 6, the client's default)
# --touch N      how many files step 5 touches (default 5; one of them also gets new bytes)
# --release      build and use the release binary (default: debug); DLCACHE_BIN=/path/to/dlcache overrides both;
#                DLCACHE_SCRATCH=DIR builds with --scratch-path DIR
# --keep         keep the temp dir (cache, logs, config) for inspection
set -euo pipefail

LIMIT=0
CONCURRENCY=6
TOUCH=5
CONFIG=debug
KEEP=0
INSTALL=0
while [ $# -gt 0 ]; do
    case "$1" in
        --install) INSTALL=1; shift ;;
        --limit) LIMIT="${2:?--limit needs a number}"; shift 2 ;;
        --limit=*) LIMIT="${1#*=}"; shift ;;
        --concurrency) CONCURRENCY="${2:?--concurrency needs a number}"; shift 2 ;;
        --touch) TOUCH="${2:?--touch needs a number}"; shift 2 ;;
        --release) CONFIG=release; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
        *) echo "offline-mirror-demo: unknown argument '$1' (see --help)" >&2; exit 64 ;;
    esac
done
case "$LIMIT$CONCURRENCY$TOUCH" in *[!0-9]*) echo "offline-mirror-demo: --limit/--concurrency/--touch take integers" >&2; exit 64 ;; esac

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
say() { printf '== %s\n' "$*" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

# --- 1. what we need -------------------------------------------------------------------------------------
need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v curl >/dev/null 2>&1 || need+=(curl)
dpkg -s sqlite3-doc >/dev/null 2>&1 || need+=(sqlite3-doc)
command -v python3 >/dev/null 2>&1 || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    say "missing: ${need[*]} (Debian packages, installed with ${SUDO:+sudo }apt-get install)"
    if [ "$INSTALL" = 0 ]; then
        answer=n
        if [ -t 0 ] && [ -t 2 ]; then
            printf 'install them now? [y/N] ' >&2
            read -r answer || answer=n
        fi
        case "$answer" in
            y|Y|yes|YES) ;;
            *) echo "offline-mirror-demo: nothing installed; rerun with --install, or install: ${need[*]}" >&2; exit 2 ;;
        esac
    fi
    say "installing ${need[*]}"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need[@]}" >&2
fi
NGINX="$(command -v nginx || echo /usr/sbin/nginx)"
# The tree: every regular file sqlite3-doc installed (dpkg -L lists them), excluding compressed changelogs.
DOCROOT=/usr/share/doc/sqlite3
[ -d "$DOCROOT" ] || { echo "offline-mirror-demo: $DOCROOT missing after installing sqlite3-doc" >&2; exit 1; }

if [ -n "${DLCACHE_BIN:-}" ]; then
    BIN="$DLCACHE_BIN"
    BUILD="given by DLCACHE_BIN"
else
    BUILD="$CONFIG build"
    say "building dlcache ($CONFIG)"
    SCRATCH=(); [ -n "${DLCACHE_SCRATCH:-}" ] && SCRATCH=(--scratch-path "$DLCACHE_SCRATCH")
    (cd "$ROOT" && swift build -c "$CONFIG" "${SCRATCH[@]}" --product dlcache >&2)
    BIN="$(cd "$ROOT" && swift build -c "$CONFIG" "${SCRATCH[@]}" --show-bin-path)/dlcache"
fi
[ -x "$BIN" ] || { echo "offline-mirror-demo: no dlcache binary at $BIN" >&2; exit 1; }
say "using $BIN ($BUILD)"

# --- 2. serve a copy of the tree with our own nginx ------------------------------------------------------
T="$(mktemp -d /tmp/dlcache-demo.XXXXXX)"
NGINX_PID=""
cleanup() {
    if [ -n "$NGINX_PID" ]; then kill "$NGINX_PID" 2>/dev/null || true; wait "$NGINX_PID" 2>/dev/null || true; fi
    if [ "$KEEP" = 1 ]; then say "kept $T"; else rm -rf "$T"; fi
}
trap cleanup EXIT
chmod 755 "$T"
WWW="$T/www"; CACHE="$T/cache"; OUT="$T/out"
mkdir -p "$WWW" "$CACHE" "$OUT" "$T/nginx"
(cd "$DOCROOT" && find . -type f ! -name '*.gz' | sed 's|^\./||' | LC_ALL=C sort) > "$T/all-files.txt"
if [ "$LIMIT" -gt 0 ]; then head -n "$LIMIT" "$T/all-files.txt" > "$T/files.txt"; else cp "$T/all-files.txt" "$T/files.txt"; fi
tar -C "$DOCROOT" -cf - --verbatim-files-from -T "$T/files.txt" | tar -C "$WWW" -xf -   # mtimes kept
chmod -R a+rX "$WWW"
FILES=$(wc -l < "$T/files.txt")
BYTES=$(cd "$WWW" && xargs -d '\n' stat -c %s < "$T/files.txt" | awk '{ s += $1 } END { print s + 0 }')
[ "$FILES" -gt 0 ] || { echo "offline-mirror-demo: no files to serve" >&2; exit 1; }

PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$T/nginx/nginx.conf" <<EOF
daemon off;
worker_processes 1;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log warn;
events { worker_connections 512; }
http {
    include /etc/nginx/mime.types;
    default_type application/octet-stream;
    log_format demo '\$status \$request_method \$request_uri \$body_bytes_sent';
    access_log $T/nginx/access.log demo;
    client_body_temp_path $T/nginx/client_body;
    proxy_temp_path $T/nginx/proxy;
    fastcgi_temp_path $T/nginx/fastcgi;
    uwsgi_temp_path $T/nginx/uwsgi;
    scgi_temp_path $T/nginx/scgi;
    keepalive_requests 100000;
    server {
        listen 127.0.0.1:$PORT;
        root $WWW;
        etag on;
    }
}
EOF
[ "$(id -u)" -eq 0 ] && sed -i "1i user $(id -un) $(id -gn);" "$T/nginx/nginx.conf"
"$NGINX" -p "$T/nginx" -c "$T/nginx/nginx.conf" -e "$T/nginx/error.log" &
NGINX_PID=$!
BASE="http://127.0.0.1:$PORT"
for _ in $(seq 1 100); do
    curl -s -o /dev/null "$BASE/" && break
    sleep 0.05
done
curl -s -o /dev/null "$BASE/$(head -n 1 "$T/files.txt")" || { echo "offline-mirror-demo: nginx did not start" >&2; cat "$T/nginx/error.log" >&2; exit 1; }
say "nginx (pid $NGINX_PID) serving $FILES files ($BYTES bytes) at $BASE"

python3 - "$BASE" "$T/files.txt" > "$T/urls.txt" <<'PY'
import sys, urllib.parse
base, listing = sys.argv[1], sys.argv[2]
for line in open(listing, encoding="utf-8"):
    print(base + "/" + urllib.parse.quote(line.rstrip("\n")))
PY
paste -d '\t' "$T/urls.txt" "$T/files.txt" > "$T/pairs.tsv"

LOG="$T/nginx/access.log"
log_mark() { wc -l < "$LOG"; }
log_since() { tail -n "+$(( $1 + 1 ))" "$LOG"; }   # log lines after mark $1
FAIL=0
expect() { # expect <description> <actual> <expected>
    if [ "$2" = "$3" ]; then say "ok: $1 = $2"; else say "FAILED: $1 = $2, expected $3"; FAIL=1; fi
}

# --- 3. baseline with curl, then prefetch ------------------------------------------------------------------
mkdir -p "$T/curl-out"   # curl writes every body to its own file, as a download manager would
awk -v dir="$T/curl-out" '{ printf "url = \"%s\"\noutput = \"%s/%d\"\n", $0, dir, NR }' "$T/urls.txt" > "$T/curl.cfg"
M=$(log_mark); t0=$(now)
curl -s --no-progress-meter --fail --parallel --parallel-max "$CONCURRENCY" -K "$T/curl.cfg"
CURL_TIME=$(elapsed "$t0" "$(now)")
expect "curl baseline requests" "$(log_since "$M" | grep -c '^200 GET ' || true)" "$FILES"

M=$(log_mark); t0=$(now)
"$BIN" prefetch --pin --json --concurrency "$CONCURRENCY" --cache-dir "$CACHE" "$T/urls.txt" > "$T/prefetch.json"
PREFETCH_TIME=$(elapsed "$t0" "$(now)")
PREFETCH_REQ=$(log_since "$M" | wc -l)
jfield() { python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }
expect "prefetch succeeded" "$(jfield "$T/prefetch.json" succeeded)" "$FILES"
expect "prefetch failed" "$(jfield "$T/prefetch.json" failed)" "0"
expect "prefetch origin requests" "$PREFETCH_REQ" "$FILES"
PINNED=$("$BIN" ls --json --cache-dir "$CACHE" | python3 -c 'import json, sys; print(sum(1 for e in json.load(sys.stdin) if e["pinned"]))')
expect "pinned entries" "$PINNED" "$FILES"

# --- 4. every URL again while fresh: no origin request ---------------------------------------------------
M=$(log_mark); t0=$(now); HITS=0
while IFS= read -r url; do
    "$BIN" get --json --cache-dir "$CACHE" "$url" > "$T/get.json" || say "get failed: $url"
    grep -q '"source":"cache"' "$T/get.json" && HITS=$((HITS + 1))
done < "$T/urls.txt"
FRESH_TIME=$(elapsed "$t0" "$(now)")
FRESH_REQ=$(log_since "$M" | wc -l)
expect "hits while fresh" "$HITS" "$FILES"
expect "origin requests while fresh" "$FRESH_REQ" "0"
# The same loop with one curl process per URL fetching from nginx: what a process per URL costs without a cache.
t0=$(now)
while IFS= read -r url; do curl -s -o /dev/null "$url" || true; done < "$T/urls.txt"
CURL_SEQ_TIME=$(elapsed "$t0" "$(now)")

# --- 5. touch some files, revalidate everything -----------------------------------------------------------
[ "$TOUCH" -le "$FILES" ] || TOUCH=$FILES
sleep 1   # a new Last-Modified second, so nginx's ETag (mtime-size) changes
awk -v n="$TOUCH" -v total="$FILES" 'BEGIN { srand(7) } { a[NR] = $0 } END {
    step = int(total / n); if (step < 1) step = 1
    for (i = 0; i < n; i++) print a[1 + i * step] }' "$T/files.txt" > "$T/touched.txt"
while IFS= read -r f; do touch "$WWW/$f"; done < "$T/touched.txt"
CHANGED="$(head -n 1 "$T/touched.txt")"
printf '\n<!-- changed by offline-mirror-demo -->\n' >> "$WWW/$CHANGED"
M=$(log_mark)
while IFS= read -r url; do
    "$BIN" get --policy reload-revalidating --cache-dir "$CACHE" -o /dev/null "$url" || { say "FAILED: get $url"; FAIL=1; }
done < "$T/urls.txt"
RELOAD_200=$(log_since "$M" | grep -c '^200 ' || true)
RELOAD_304=$(log_since "$M" | grep -c '^304 ' || true)
expect "re-downloaded (200) after touch" "$RELOAD_200" "$TOUCH"
expect "not modified (304) after touch" "$RELOAD_304" "$((FILES - TOUCH))"

# --- 6. offline: stop nginx, every URL from cache, byte-identical ------------------------------------------
kill "$NGINX_PID"; wait "$NGINX_PID" 2>/dev/null || true; NGINX_PID=""
curl -s -o /dev/null --max-time 2 "$BASE/" && { say "FAILED: nginx still answering"; FAIL=1; }
# The touched files were re-downloaded with a brand-new Last-Modified, so their heuristic lifetime (10% of their
# age, RFC 9111 §4.2.2) is about zero: they are stale now and RFC 9111 alone would need the origin. The seeds'
# "read it on the subway" mode is --fallback-to-cache (ASI's fallbackToCacheIfLoadFails): serve the stored
# response when the origin cannot be reached. Fresh entries come back as "cache", stale ones as "stale".
OFFLINE_HITS=0; OFFLINE_STALE=0; MISMATCH=0; i=0
t0=$(now)
while IFS=$'\t' read -r url file; do
    i=$((i + 1))
    if "$BIN" get --fallback-to-cache --json -o "$OUT/$i" --cache-dir "$CACHE" "$url" > "$T/get.json"; then
        grep -q '"source":"cache"' "$T/get.json" && OFFLINE_HITS=$((OFFLINE_HITS + 1))
        grep -q '"source":"stale"' "$T/get.json" && OFFLINE_STALE=$((OFFLINE_STALE + 1))
    else
        say "offline get failed: $url"
    fi
    cmp -s "$OUT/$i" "$WWW/$file" || { MISMATCH=$((MISMATCH + 1)); say "mismatch: $file"; }
done < "$T/pairs.tsv"
OFFLINE_TIME=$(elapsed "$t0" "$(now)")
expect "offline served from cache (fresh + stale)" "$((OFFLINE_HITS + OFFLINE_STALE))" "$FILES"
expect "offline mismatches" "$MISMATCH" "0"
"$BIN" verify --cache-dir "$CACHE" >/dev/null || { say "FAILED: dlcache verify reported problems"; FAIL=1; }

# --- 7. summary ---------------------------------------------------------------------------------------------
RATIO=$(awk -v p="$PREFETCH_TIME" -v c="$CURL_TIME" 'BEGIN { if (c > 0) printf "%.2f", p / c; else print "n/a" }')
{
    echo
    echo "offline mirror of $DOCROOT (sqlite3-doc) served by nginx $("$NGINX" -v 2>&1 | sed 's|.*/||'), dlcache $BIN ($BUILD)"
    printf '  %-44s %s\n' "files" "$FILES"
    printf '  %-44s %s\n' "bytes" "$BYTES"
    printf '  %-44s %s s\n' "curl downloads to files (parallel $CONCURRENCY)" "$CURL_TIME"
    printf '  %-44s %s s (%sx curl)\n' "dlcache prefetch --pin (concurrency $CONCURRENCY)" "$PREFETCH_TIME" "$RATIO"
    SEQ_RATIO=$(awk -v g="$FRESH_TIME" -v c="$CURL_SEQ_TIME" 'BEGIN { if (c > 0) printf "%.2f", g / c; else print "n/a" }')
    printf '  %-44s %s / %s in %s s (%sx one curl per URL: %s s)\n' "hits while fresh (dlcache get per URL)" \
        "$HITS" "$FILES" "$FRESH_TIME" "$SEQ_RATIO" "$CURL_SEQ_TIME"
    printf '  %-44s %s\n' "origin requests while fresh" "$FRESH_REQ"
    printf '  %-44s %s x 200, %s x 304 (touched %s)\n' "reload-revalidating after touch" "$RELOAD_200" "$RELOAD_304" "$TOUCH"
    printf '  %-44s %s / %s (%s fresh hits + %s stale, %s s)\n' "offline from cache (nginx stopped)" \
        "$((OFFLINE_HITS + OFFLINE_STALE))" "$FILES" "$OFFLINE_HITS" "$OFFLINE_STALE" "$OFFLINE_TIME"
    printf '  %-44s %s\n' "mismatches (cmp with the files)" "$MISMATCH"
    if [ "$FAIL" = 0 ]; then echo "  result: every expectation met"; else echo "  result: FAILED (see '== FAILED' lines above)"; fi
}
exit "$FAIL"
