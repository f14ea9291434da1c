#include "profile_csv.h"

#include <stdio.h>

#include "error.h"
#include "flags.h"
#include "plotdata.h"
#include "profile.h"

void profile_csv_check(const char *dir, bool profile) {
    if (!profile)
        flags_fail("--plot-data writes the profile: give --profile too");
    Error err;
    if (plot_dir_check(dir, &err) != 0) die("%s", err.msg);
}

void profile_csv_write(const char *dir, int steps) {
    double total = 0;
    for (int k = 0; k < PROF_KINDS; k++)
        total += prof_seconds[k][0] + prof_seconds[k][1];
    Error err;
    FILE *f = plot_csv_open(dir, "profile.csv", "kind,forward_ms,"
                            "backward_ms,total_ms,percent", &err);
    if (!f) die("%s", err.msg);
    // as show_profile in run.c: seconds in all steps -> ms per step
    for (int k = 0; steps >= 1 && total > 0 && k < PROF_KINDS; k++) {
        double fw = prof_seconds[k][0], bw = prof_seconds[k][1];
        fprintf(f, "%s,%.4f,%.4f,%.4f,%.2f\n", prof_name((ProfKind)k),
                1e3 * fw / steps, 1e3 * bw / steps, 1e3 * (fw + bw) / steps,
                100 * (fw + bw) / total);
    }
    if (plot_csv_close(f, dir, "profile.csv", &err) != 0) die("%s", err.msg);
    printf("plot data   %s/profile.csv\n", dir);
}
