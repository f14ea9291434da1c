# error_width.sh - sourced by tests/bad_inputs.sh and tests/cli/test_cli.sh:
# an error is one line, and it fits in 80 columns.
#
# The width is counted in characters, without what the line quotes back:
# a path, a value of 5 or more characters that the command line gave,
# the system's reason (strerror). Those are as long as the user or the
# system made them; the rest is the program's, and must fit. A few kinds
# of error may run past 80 columns (error_wide_ok); README.md names them.

# error_width FILE ARGS...: the width of FILE's first line, less the paths
# in it and the ARGS of 5 characters or more that it repeats.
error_width() {
    local line arg
    line=$(head -n 1 "$1")
    shift
    for arg in "$@"; do
        case $arg in
            -*|*/*) ;;
            ?????*) line=${line//"$arg"/} ;;
        esac
    done
    printf '%s\n' "$line" |
        sed -E -e "s#(^|[ '\"(\[])/[^ :,)'\"]*#\1#g" \
            -e 's/(No such file or directory|Is a directory|Not a directory)//' \
            -e 's/(Permission denied|Read-only file system|File too large)//' \
            -e 's/(No space left on device)//' |
        tr -d '\n' | LC_ALL=C.UTF-8 wc -m
}

# error_wide_ok FILE: whether FILE's line is of a kind allowed past 80
# columns: an error about one tensor of a checkpoint (it names the file,
# the tensor and the numbers that do not fit), and a refusal for memory
# (the sizes, and the flags that would lower them).
error_wide_ok() {
    grep -qE -e ': tensor ' -e 'needs [0-9]+ MiB' "$1"
}

# error_too_wide FILE ARGS...: prints "N columns" and succeeds when FILE's
# line breaks the rule; fails (prints nothing) when it keeps it.
error_too_wide() {
    local w
    w=$(error_width "$@")
    [ "$w" -gt 80 ] && ! error_wide_ok "$1" && echo "$w columns"
}
