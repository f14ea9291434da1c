# listings.sh - sourced by tests/cli/test_cli.sh and tests/test_grade.sh:
# the chapters' listings of a command's output, checked against the
# output the command really gives.
#
# A listing is a code block of a chapter (chapters/*/chN.md) whose first
# line is "$ COMMAND"; the lines after it are the output, where a line
# "..." stands for lines left out.

# listings_of REGEX DIR: writes each listing whose command line (after
# "$ ") matches the extended REGEX into DIR/1, DIR/2, ..., its first line
# the "$ COMMAND" line. Prints how many.
listings_of() {
    mkdir -p "$2"
    awk -v re="$1" -v out="$2" '
        /^```/ { if (f) { close(f); f = "" } inb = !inb; first = 1; next }
        inb && first && /^\$ / {
            first = 0
            cmd = substr($0, 3)
            if (cmd ~ re) { f = out "/" ++n; print > f }
            next
        }
        { first = 0 }
        f { print > f }
        END { print n + 0 }' "${ROOT:-.}"/chapters/ch*/ch*.md
}

# listing_matches LISTING OUTPUT: whether each run of lines of LISTING
# (after its command line) between "..." lines comes, in order, in the
# file OUTPUT; on stderr the first that does not.
listing_matches() {
    tail -n +2 "$1" | awk -v out="$2" '
        BEGIN { while ((getline line < out) > 0) o[++n] = line; at = 1 }
        function take(   i, j, most) {   # the run s[1..k], from o[at] on
            most = 1
            for (i = at; i + k - 1 <= n; i++) {
                for (j = 1; j <= k && o[i + j - 1] == s[j]; j++) ;
                if (j > k) { at = i + k; k = 0; return }
                if (j > most) most = j
            }
            # the line where the run that came furthest parted
            print "    not in the output: " s[most]; bad = 1; exit 1
        }
        $0 == "..." { if (k) take(); next }
        { s[++k] = $0 }
        END { if (k && !bad) take() }' >&2
}
