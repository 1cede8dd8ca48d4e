#!/usr/bin/env bash
# Fetches the datasets this project trains and tests on (see data/README.md):
#   Multi30k task 1, raw English/French: train, val, test_2016_flickr, test_2017_flickr
#   Tatoeba English-French pairs (manythings.org/anki fra-eng.zip → fra.txt)
# into DEST/multi30k/{split}.{en,fr} and DEST/tatoeba-fra-eng/fra.txt, verifying line counts.
#
# usage: scripts/get-data.sh [--from DIR] [--dest DIR] [--tatoeba-lines N]
#   --from DIR          copy from a local mirror with the same layout instead of downloading
#   --dest DIR          where to put the data (default: data/downloaded in the repository, which
#                       is git-ignored; datasets are never committed)
#   --tatoeba-lines N   keep the first N lines of fra.txt (default 76036, the size of the
#                       project's mirror: the file is ordered by length; 0 keeps all)
# With neither --from nor --dest, an existing, complete ../shared/data beside the checkout is used
# in place and nothing is copied. Re-running is cheap: files already present and verified are kept.
set -euo pipefail

script_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$script_dir/.." && pwd)
shared="$repo/../shared/data"

from=""
dest=""
tatoeba_lines=76036

die() { echo "get-data.sh: error: $*" >&2; exit 1; }
usage() { sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }

while [[ $# -gt 0 ]]; do
  case "$1" in
    --from) [[ $# -ge 2 ]] || die "--from needs a directory"; from=$2; shift 2 ;;
    --dest) [[ $# -ge 2 ]] || die "--dest needs a directory"; dest=$2; shift 2 ;;
    --tatoeba-lines)
      [[ $# -ge 2 && $2 =~ ^[0-9]+$ ]] || die "--tatoeba-lines needs a number"; tatoeba_lines=$2; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) usage >&2; echo >&2; die "unknown argument '$1'" ;;
  esac
done

multi30k_url="https://raw.githubusercontent.com/multi30k/dataset/master/data/task1/raw"
tatoeba_url="https://www.manythings.org/anki/fra-eng.zip"
splits=(train val test_2016_flickr test_2017_flickr)
declare -A expected=([train]=29000 [val]=1014 [test_2016_flickr]=1000 [test_2017_flickr]=1000)

# Lines in a file, counting a last line without '\n' (wc -l would not).
count_lines() { awk 'END { print NR }' "$1"; }
# Lines of a TSV file without a tab (not a sentence pair).
count_untabbed() { awk -F'\t' 'NF < 2 { n++ } END { print n + 0 }' "$1"; }

multi30k_ok() {  # DIR: all splits present with the expected line counts
  local split lang f
  for split in "${splits[@]}"; do
    for lang in en fr; do
      f="$1/multi30k/$split.$lang"
      [[ -f $f && $(count_lines "$f") -eq ${expected[$split]} ]] || return 1
    done
  done
}

if [[ -z $from && -z $dest ]]; then
  if [[ -d $shared ]] && multi30k_ok "$shared" && [[ -s $shared/tatoeba-fra-eng/fra.txt ]]; then
    echo "Using the mirrored datasets in place: $(cd "$shared" && pwd) (nothing to download)."
    echo "Readers default to it; set NMT_DATA to point the tests elsewhere."
    exit 0
  fi
  if [[ -d $shared ]]; then echo "Note: $shared is incomplete; downloading instead."; fi
fi
dest=${dest:-$repo/data/downloaded}
[[ -z $from || -d $from ]] || die "--from $from: no such directory"

download() {  # URL OUT
  echo "  downloading $1"
  if command -v curl >/dev/null; then
    # manythings.org refuses requests without a browser-like user agent.
    curl -fsSL --retry 3 -A "Mozilla/5.0 (nmt get-data.sh)" -o "$2" "$1" || die "download failed: $1"
  elif command -v wget >/dev/null; then
    wget -q -U "Mozilla/5.0 (nmt get-data.sh)" -O "$2" "$1" || die "download failed: $1"
  else
    die "neither curl nor wget is installed"
  fi
}

mkdir -p "$dest/multi30k" "$dest/tatoeba-fra-eng" || die "cannot create $dest"
dest=$(cd "$dest" && pwd)
tmp=$(mktemp -d "$dest/.get-data.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "Destination: $dest"

# ---- Multi30k ----
echo "Multi30k task 1 (en, fr):"
for split in "${splits[@]}"; do
  for lang in en fr; do
    name="$split.$lang"
    out="$dest/multi30k/$name"
    want=${expected[$split]}
    if [[ -f $out && $(count_lines "$out") -eq $want ]] &&
       { [[ -z $from ]] || cmp -s "$out" "$from/multi30k/$name"; }; then
      echo "  $name: already present ($want lines)"
      continue
    fi
    part="$tmp/$name"
    if [[ -n $from ]]; then
      if [[ -f $from/multi30k/$name ]]; then
        echo "  copying $from/multi30k/$name"
        cp "$from/multi30k/$name" "$part"
      elif [[ -f $from/multi30k/$name.gz ]]; then
        echo "  decompressing $from/multi30k/$name.gz"
        gunzip -c "$from/multi30k/$name.gz" > "$part" || die "$from/multi30k/$name.gz: not a gzip file"
      else
        die "$from/multi30k/$name: missing from the mirror"
      fi
    else
      download "$multi30k_url/$name.gz" "$part.gz"
      gunzip -c "$part.gz" > "$part" || die "$name.gz: downloaded file is not gzip data"
    fi
    got=$(count_lines "$part")
    [[ $got -eq $want ]] || die "multi30k/$name has $got lines, expected $want (source: ${from:-$multi30k_url})"
    chmod 644 "$part"
    mv -f "$part" "$out"
    echo "  $name: ok ($got lines)"
  done
done

# ---- Tatoeba fra-eng ----
echo "Tatoeba fra-eng:"
out="$dest/tatoeba-fra-eng/fra.txt"
part="$tmp/fra.txt"
if [[ -n $from ]]; then
  src="$from/tatoeba-fra-eng/fra.txt"
  [[ -f $src ]] || die "$src: missing from the mirror"
  if [[ $tatoeba_lines -gt 0 ]]; then head -n "$tatoeba_lines" "$src" > "$part"; else cp "$src" "$part"; fi
else
  download "$tatoeba_url" "$tmp/fra-eng.zip"
  if command -v unzip >/dev/null; then
    unzip -p "$tmp/fra-eng.zip" fra.txt > "$part.all" || die "fra-eng.zip: no fra.txt inside"
  else
    python3 -c 'import sys, zipfile; sys.stdout.buffer.write(zipfile.ZipFile(sys.argv[1]).read("fra.txt"))' \
      "$tmp/fra-eng.zip" > "$part.all" || die "fra-eng.zip: no fra.txt inside"
  fi
  if [[ $tatoeba_lines -gt 0 ]]; then head -n "$tatoeba_lines" "$part.all" > "$part"; else mv "$part.all" "$part"; fi
fi
got=$(count_lines "$part")
[[ $got -gt 0 ]] || die "tatoeba-fra-eng/fra.txt is empty (source: ${from:-$tatoeba_url})"
if [[ $tatoeba_lines -gt 0 && $got -lt $tatoeba_lines ]]; then
  echo "  note: fra.txt has only $got lines (asked for $tatoeba_lines)"
fi
untabbed=$(count_untabbed "$part")
[[ $untabbed -eq 0 ]] || echo "  note: $untabbed lines have no tab; the reader will skip and count them"
if [[ -f $out ]] && cmp -s "$part" "$out"; then
  echo "  fra.txt: already present ($got lines)"
else
  chmod 644 "$part"
  mv -f "$part" "$out"
  echo "  fra.txt: ok ($got lines)"
fi
echo "Done. Datasets are in $dest (never commit them)."
