#include "plotdata.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "utf8.h"

int plot_dir_check(const char *dir, Error *err) {
    struct stat st;
    if (!*dir) return error_set(err, "--plot-data is empty: give a folder");
    if ((mkdir(dir, 0777) != 0 && errno != EEXIST) || access(dir, W_OK) != 0)
        return error_set(err, "--plot-data %s: cannot write there: %s", dir,
                         strerror(errno));
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode))
        return error_set(err, "--plot-data %s: not a folder", dir);
    return 0;
}

FILE *plot_csv_open(const char *dir, const char *name, const char *header,
                    Error *err) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        error_set(err, "--plot-data: cannot write %s: %s", path,
                  strerror(errno));
        return NULL;
    }
    fprintf(f, "%s\n", header);
    return f;
}

int plot_csv_close(FILE *f, const char *dir, const char *name, Error *err) {
    bool failed = ferror(f) != 0;
    int saved = errno;
    if (fclose(f) != 0) failed = true, saved = errno;
    if (failed)
        return error_set(err, "--plot-data: cannot write %s/%s: %s", dir,
                         name, strerror(saved));
    return 0;
}

void plot_csv_label(FILE *f, uint32_t cp) {
    // gnuplot reads a quoted field with its quotes removed, but turns
    // backslashes and doubled quotes inside one into nothing useful: so
    // only the comma is quoted, and " and \ get names
    static const struct { uint32_t cp; const char *name; } names[] = {
        {' ', "sp"}, {'\n', "nl"}, {'\t', "tab"}, {'"', "dq"},
        {'\\', "bs"}, {',', "\",\""},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (cp == names[i].cp) {
            fputs(names[i].name, f);
            return;
        }
    if (cp < ' ' || cp == 0x7f) cp = '?';
    char buf[5];
    fwrite(buf, 1, (size_t)utf8_encode(cp, buf), f);
}
