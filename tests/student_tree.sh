# student_tree.sh - sourced (not run) by tests/test_grade.sh and
# tests/test_gradescope.sh, from the repository root:
#
#   student_tree DEST OBJ   a copy of this tree in DEST, as a student's
#                           clone is once they have worked in exercises/:
#                           two answers (1.3 and 3.1, from solutions/),
#                           one file that does not compile (2.1: 2
#                           points) and the other stubs, committed over
#                           the stubs. Status 1 when this tree is no
#                           git clone (DEST then needs git's history).
#
# DEST shares this clone's git history (nothing of it is copied) and has
# the files that grading and the zip use (Makefile, LICENSE, common/,
# chapters/, tests/, solutions/) as they are in this tree now, with their
# times: its data/ and OBJ are links to this tree's, so that make finds
# OBJ's objects up to date there and compiles nothing but the exercises
# (it writes into OBJ only what this tree's make would).
student_tree() {
    local dest=$1 obj=$2 f
    git rev-parse --git-dir > /dev/null 2>&1 || return 1
    # (no checkout: the index is HEAD's, the files are copied)
    git clone -q --no-checkout --shared . "$dest" \
        && git -C "$dest" reset -q || return 1
    cp -a Makefile LICENSE .gitignore common chapters tests solutions \
        "$dest/" || return 1
    mkdir -p "$dest/data" "$dest/$(dirname "$obj")"
    for f in data/*; do
        [ -e "$f" ] && ln -s "$PWD/$f" "$dest/data/"
    done
    ln -s "$(cd "$obj" && pwd)" "$dest/$obj" || return 1
    # the student's work, from the stubs as the course gives them
    rm -rf "$dest/exercises"
    bash tests/stubs.sh "$dest/exercises" || return 1
    cp solutions/ch1/ex1_3_split.c "$dest/exercises/ch1/"
    cp solutions/ch3/ex3_1_relu.c "$dest/exercises/ch3/"
    echo 'int broken(void) { return 1 }' \
        >> "$dest/exercises/ch2/ex2_1_softmax.c"
    git -C "$dest" add -A exercises \
        && git -C "$dest" -c user.name=Student -c user.email=s@example.com \
               commit -q --allow-empty -m "my answers"
}
