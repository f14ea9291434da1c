#!/usr/bin/env bash
# deps.sh GROUP... : make sure the Debian packages a build step needs are here.
#
#   build  - a C compiler, make, pkg-config, OpenBLAS (skipped when NO_BLAS=1)
#   check  - the Check unit-test library (and what "build" needs)
#   docs   - pandoc, and gnuplot for the book's figures
#   pdf    - headless Chromium to print the book, poppler-utils to check it
#   docs-check - headless Chromium and python3, to check the rendered site
#            (both: with the DejaVu and Liberation fonts, see check_fonts)
#   data   - sha256sum, and curl or wget when ../shared/data is not beside us
#   valgrind - valgrind, for `make valgrind`
#   fuzz   - clang and its libFuzzer runtime, for `make fuzz`
#   zip    - zip and unzip, for `make gradescope` and its test
#   mpi    - Open MPI (mpicc, mpirun), for `make ch6 MPI=1`
#   arm64  - the cross compilers for arm64, the arm64 builds of OpenBLAS
#            and Check (Debian's multiarch), and qemu-user-static to run
#            what they build, for `make check-arm64`
#   all    - build, check, docs, data and zip (not Chromium, which is
#            large and only make pdf and make docs-check use, nor MPI)
#
# Each missing tool is mapped to the Debian package that provides it. When
# something is missing we install it with apt-get (through sudo when we are
# not root), saying what and why. NO_INSTALL=1, or a system without apt-get,
# turns that into one error line that names the packages to install.
set -euo pipefail

CC_CMD=${CC:-cc}
missing=()     # Debian package names
reasons=()     # why each one is needed

# A cross compiler (aarch64-linux-gnu-gcc on an x86-64 machine) builds for
# another Debian architecture: the libraries it links are that
# architecture's packages (libopenblas-dev:arm64), from Debian's multiarch,
# found by pkg-config in that architecture's folder. For the machine's own
# compiler TRIPLET and ARCH are empty and nothing changes.
TRIPLET= ARCH=
case ${CC_CMD##*/} in
*-linux-gnu-gcc*)
    t=${CC_CMD##*/}; t=${t%-gcc*}
    case $t in
    aarch64-*) a=arm64 ;;
    x86_64-*)  a=amd64 ;;
    *)         a= ;;
    esac
    if [ -n "$a" ] && command -v dpkg >/dev/null 2>&1 \
       && [ "$a" != "$(dpkg --print-architecture)" ]; then
        TRIPLET=$t ARCH=$a
        export PKG_CONFIG_LIBDIR=${PKG_CONFIG_LIBDIR:-/usr/lib/$t/pkgconfig:/usr/share/pkgconfig}
    fi ;;
esac
# lib NAME: the package NAME for the architecture the compiler builds for
lib() { echo "$1${ARCH:+:$ARCH}"; }
# the folder of the compiler's libraries (/usr/lib/x86_64-linux-gnu), as
# a glob when the compiler does not say
libdir() {
    local m
    m=${TRIPLET:-$("${CC_CMD%% *}" -print-multiarch 2>/dev/null || true)}
    echo "/usr/lib/${m:-*}"
}

need() { missing+=("$1"); reasons+=("$2"); }

check_build() {
    local cc_pkg=build-essential
    case ${CC_CMD##*/} in clang*) cc_pkg=clang ;; esac
    [ -n "$TRIPLET" ] && cc_pkg=gcc-$TRIPLET
    command -v "${CC_CMD%% *}" >/dev/null 2>&1 \
        || need "$cc_pkg" "the C compiler '$CC_CMD'"
    # (a cross compiler's C library is only recommended, and we install
    # without recommendations)
    if [ -n "$TRIPLET" ] && [ ! -e "/usr/$TRIPLET/include/stdio.h" ]; then
        need "libc6-dev-$ARCH-cross" "the C library for $ARCH"
    fi
    command -v make >/dev/null 2>&1 || need make "running the build"
    if [ "${NO_BLAS:-0}" != 1 ]; then
        command -v pkg-config >/dev/null 2>&1 \
            || need pkg-config "finding OpenBLAS"
        if ! command -v pkg-config >/dev/null 2>&1 \
           || ! pkg-config --exists openblas 2>/dev/null; then
            need "$(lib libopenblas-dev)" "fast matrix products (cblas_sgemm)"
        fi
        # the OpenMP build of OpenBLAS shares our loops' thread pool (see
        # the Makefile); gcc builds use it when it is there
        case ${CC_CMD##*/} in
        clang*) ;;
        *) ls -d "$(libdir)"/openblas-openmp >/dev/null 2>&1 \
               || need "$(lib libopenblas-openmp-dev)" \
                       "OpenBLAS threads that share OpenMP's pool" ;;
        esac
    fi
}

check_check() {
    command -v pkg-config >/dev/null 2>&1 \
        || need pkg-config "finding the Check library"
    if ! command -v pkg-config >/dev/null 2>&1 \
       || ! pkg-config --exists check 2>/dev/null; then
        need "$(lib check)" "the unit tests (the Check library)"
    fi
}

# make check-arm64 (tests/arm64.sh): the project built by Debian's cross
# compilers for arm64 against the arm64 builds of OpenBLAS and Check, and
# run here under qemu's user-mode emulation.
check_arm64() {
    CC_CMD=aarch64-linux-gnu-gcc TRIPLET=aarch64-linux-gnu ARCH=arm64
    export PKG_CONFIG_LIBDIR=/usr/lib/$TRIPLET/pkgconfig:/usr/share/pkgconfig
    check_build; check_check
    command -v aarch64-linux-gnu-g++ >/dev/null 2>&1 \
        || need g++-aarch64-linux-gnu "chapter 8's emulated kernels (C++) for arm64"
    command -v qemu-aarch64-static >/dev/null 2>&1 \
        || need qemu-user-static "running arm64 programs here (qemu-aarch64-static)"
    # what they load when they run: arm64's C library with its loader, and
    # its C++ library (chapter 8's emulation), from Debian's multiarch. (Not
    # the cross compilers' copies with qemu -L: under qemu 7.2 a process
    # started that way hangs in the child of every fork, and the tests
    # run each in a child.)
    [ -e /lib/ld-linux-aarch64.so.1 ] \
        || need libc6:arm64 "arm64's C library, to run arm64 programs"
    [ -e /usr/lib/aarch64-linux-gnu/libstdc++.so.6 ] \
        || need libstdc++6:arm64 "arm64's C++ library, to run arm64 programs"
}

check_docs() {
    command -v pandoc >/dev/null 2>&1 || need pandoc "rendering the book"
    command -v gnuplot >/dev/null 2>&1 \
        || need gnuplot-nox "drawing the book's figures (make figures)"
}

check_chromium() {
    command -v chromium >/dev/null 2>&1 \
        || need chromium "headless Chromium, to $1"
    check_fonts
}

# The fonts the pages are checked and printed in: DejaVu (the style
# sheet's sans and mono, and the figures' labels) and Liberation (the
# stand-ins for Arial, Times and Courier that Chromium picks for a page
# that names no font). Where a page falls back on whatever else the
# machine has, its tables and lines are as wide as that font makes them,
# and a check of the layout sees another page than the one written
# here; so every machine that runs Chromium for us has these two.
check_fonts() {
    [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] \
        && [ -e /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ] \
        || need fonts-dejavu-core "the DejaVu fonts the pages are checked in"
    [ -e /usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf ] \
        || need fonts-liberation "the Liberation fonts the pages are checked in"
}

check_pdf() {
    check_chromium "print the book to PDF (make pdf)"
    { command -v pdfinfo && command -v pdftotext; } >/dev/null 2>&1 \
        || need poppler-utils "checking the book's PDF (pdfinfo, pdftotext)"
}

check_docs_check() {
    check_chromium "open every page of the site (make docs-check)"
    command -v python3 >/dev/null 2>&1 \
        || need python3 "docs/check_site.py, which drives Chromium"
}

check_valgrind() {
    command -v valgrind >/dev/null 2>&1 || need valgrind "make valgrind"
}

check_fuzz() {
    local clang_cmd=clang
    case ${CC_CMD##*/} in clang*) clang_cmd=${CC_CMD%% *} ;; esac
    if ! command -v "$clang_cmd" >/dev/null 2>&1; then
        need clang "the fuzzing build (make fuzz)"
        need libclang-rt-dev "libFuzzer, clang's fuzzing runtime"
    # clang without its runtime libraries links no fuzzer
    elif ! echo 'int LLVMFuzzerTestOneInput(const char *d, long n)
                 { (void)d; (void)n; return 0; }' \
            | "$clang_cmd" -fsanitize=fuzzer -x c - -o /dev/null \
              >/dev/null 2>&1; then
        need libclang-rt-dev "libFuzzer, clang's fuzzing runtime"
    fi
}

check_zip() {
    command -v zip >/dev/null 2>&1 || need zip "the autograder's zip"
    command -v unzip >/dev/null 2>&1 \
        || need unzip "unpacking the autograder's zip in its test"
}

check_mpi() {
    command -v mpicc >/dev/null 2>&1 \
        || need libopenmpi-dev "building ./ch6 against MPI (MPI=1)"
    command -v mpirun >/dev/null 2>&1 \
        || need openmpi-bin "mpirun, which starts the processes"
    # mpirun starts even the processes of one machine through its ssh
    # launcher, and stops at once when there is no ssh
    command -v ssh >/dev/null 2>&1 \
        || need openssh-client "mpirun's launcher (ssh), even on one machine"
}

check_data() {
    command -v sha256sum >/dev/null 2>&1 || need coreutils "sha256sum"
    if [ ! -d ../shared/data ] && ! command -v curl >/dev/null 2>&1 \
       && ! command -v wget >/dev/null 2>&1; then
        need curl "downloading the data sets"
    fi
    # (a minimal Debian, such as the debian:12 container, has no
    # certificate authorities, and curl only recommends them: without
    # them no https download starts)
    if [ ! -d ../shared/data ] && command -v apt-get >/dev/null 2>&1 \
       && [ ! -s /etc/ssl/certs/ca-certificates.crt ]; then
        need ca-certificates "checking the download sites' certificates (https)"
    fi
}

[ $# -gt 0 ] || set -- all
for group in "$@"; do
    case $group in
        build) check_build ;;
        check) check_build; check_check ;;
        docs)  check_docs ;;
        pdf)   check_pdf ;;
        docs-check) check_docs_check ;;
        data)  check_data ;;
        valgrind) check_valgrind ;;
        fuzz)  check_fuzz ;;
        zip)   check_zip ;;
        mpi)   check_mpi ;;
        arm64) check_arm64 ;;
        all)   check_build; check_check; check_docs; check_data; check_zip ;;
        *) echo "deps.sh: unknown group '$group'" >&2; exit 2 ;;
    esac
done

[ ${#missing[@]} -eq 0 ] && exit 0

# de-duplicate, keeping the first reason given for each package; the
# foreign architectures that the names with a :ARCH need
pkgs=(); why=(); foreign=()
for i in "${!missing[@]}"; do
    case " ${pkgs[*]-} " in *" ${missing[$i]} "*) continue ;; esac
    pkgs+=("${missing[$i]}"); why+=("${missing[$i]} (${reasons[$i]})")
    case ${missing[$i]} in
    *:*) a=${missing[$i]##*:}
         dpkg --print-foreign-architectures | grep -qx "$a" \
             || case " ${foreign[*]-} " in *" $a "*) ;; *) foreign+=("$a") ;; esac
         ;;
    esac
done

if [ "${NO_INSTALL:-0}" = 1 ] || ! command -v apt-get >/dev/null 2>&1; then
    add=
    for a in ${foreign[@]+"${foreign[@]}"}; do add+="dpkg --add-architecture $a; "; done
    [ -n "$add" ] && add+="apt-get update; "
    echo "error: missing packages: ${why[*]}; install them (Debian/Ubuntu:" \
         "${add}apt-get install ${pkgs[*]}) and run make again" >&2
    exit 1
fi

SUDO=
if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO=sudo; else
        echo "error: missing packages ${pkgs[*]} and not root (no sudo):" \
             "ask an administrator to run apt-get install ${pkgs[*]}" >&2
        exit 1
    fi
fi

export DEBIAN_FRONTEND=noninteractive
# Packages of another architecture (libopenblas-dev:arm64) come from its
# package lists, which apt fetches once dpkg knows the architecture.
for a in ${foreign[@]+"${foreign[@]}"}; do
    echo "deps: adding $a as a foreign architecture (dpkg --add-architecture" \
         "$a), for the $a builds of the libraries"
    $SUDO dpkg --add-architecture "$a"
done
if [ ${#foreign[@]} -gt 0 ]; then
    echo "deps: refreshing package lists (apt-get update)"
    $SUDO apt-get update -q >/dev/null 2>&1 \
        || { echo "error: apt-get update failed" >&2; exit 1; }
fi
for w in "${why[@]}"; do echo "deps: installing $w"; done
# Install from the current package lists; if that fails (lists missing or
# stale on a fresh machine), refresh them once and try again.
if ! $SUDO apt-get install -y -q --no-install-recommends "${pkgs[@]}" \
        >/tmp/deps-apt.$$.log 2>&1; then
    echo "deps: refreshing package lists (apt-get update)"
    $SUDO apt-get update -q >/tmp/deps-apt.$$.log 2>&1 || true
    if ! $SUDO apt-get install -y -q --no-install-recommends "${pkgs[@]}" \
            >/tmp/deps-apt.$$.log 2>&1; then
        tail -n 5 /tmp/deps-apt.$$.log >&2
        echo "error: apt-get install ${pkgs[*]} failed (log: /tmp/deps-apt.$$.log)" >&2
        exit 1
    fi
fi
rm -f /tmp/deps-apt.$$.log
echo "deps: installed ${pkgs[*]}"
