#!/usr/bin/env bash
# Real documents some tests and benchmarks read, from Debian packages; install what is missing.
# python3.11-doc: the Python docs' HTML (tests/test_hidden_text_ordinary.py, bench/pydocs_corpus.py);
# libtasn1-doc and shared-mime-info: two real PDFs with no hidden text;
# sqlite3-doc and git-doc: the real-docs corpora (../shared/data/realdocs, bench/bench_realdocs.py,
# tests/test_realdocs_corpora.py);
# libreoffice-writer-nogui (below): the rendered check of .docx/.odt.
# wordnet-base: the WordNet 3.0 database scripts/build_wordnet_lexicon.py derives the support
# check's paraphrase lexicon from (the package ships the derived file; it never needs Debian).
set -euo pipefail
. "$(dirname "$0")/apt_install.sh"
declare -A wanted=(
    [wordnet-base]=/usr/share/wordnet/data.noun
    [python3.11-doc]=/usr/share/doc/python3.11/html/library/functools.html
    [libtasn1-doc]=/usr/share/doc/libtasn1-doc/libtasn1.pdf
    [shared-mime-info]=/usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf
    [sqlite3-doc]=/usr/share/doc/sqlite3/lang_conflict.html
    [git-doc]=/usr/share/doc/git-doc/git-commit.html
)
cd "$(dirname "$0")/.."
unpacked="$(pwd)/.cache/testdata/root"
missing=()
for pkg in "${!wanted[@]}"; do
    [ -f "${wanted[$pkg]}" ] || [ -f "$unpacked${wanted[$pkg]}" ] || missing+=("$pkg")
done
if [ "${#missing[@]}" -gt 0 ]; then
    echo "== installing ${missing[*]} (apt-get)"
    apt_install "${missing[@]}"
    for pkg in "${missing[@]}"; do
        [ -f "${wanted[$pkg]}" ] && continue
        # Not installed (it would upgrade the system's own packages, e.g. python3.11-doc wants the
        # newest python3.11): unpack its .deb into this checkout instead; nothing is installed.
        # Tests and benchmarks find it there through bench/debian_files.py.
        echo "== unpacking $pkg into $unpacked (not installed)"
        debs="$(pwd)/.cache/testdata/debs"
        mkdir -p "$debs" "$unpacked"
        (cd "$debs" && rm -f "${pkg}"_*.deb && apt-get download -qq "$pkg" 2>/dev/null) &&
            dpkg-deb -x "$debs/${pkg}"_*.deb "$unpacked" || true
        if [ ! -f "$unpacked${wanted[$pkg]}" ]; then
            echo "error: ${wanted[$pkg]} from $pkg is missing: neither installed nor unpacked" \
                "(check 'apt-get download $pkg', or see /etc/dpkg/dpkg.cfg.d/ if dpkg" \
                "excludes /usr/share/doc here)" >&2
            exit 1
        fi
    done
fi
# LibreOffice Writer (no GUI): lays .docx and .odt out for the rendered visibility check
# (sources/render_office.py; tests/test_office_rendered.py skips without it). Not installed when it
# would upgrade a system package (apt_install says so); the tests then skip and say why.
if ! command -v soffice >/dev/null 2>&1 && ! command -v libreoffice >/dev/null 2>&1; then
    echo "== installing libreoffice-writer-nogui (apt-get)"
    apt_install libreoffice-writer-nogui
    command -v soffice >/dev/null 2>&1 ||
        echo "warning: LibreOffice is not installed: tests/test_office_rendered.py will skip" >&2
fi
