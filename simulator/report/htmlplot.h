/* htmlplot.h -- what the one-page HTML reports share: gnuplot found on PATH and run in a
 * temporary directory, its SVG inlined, text escaped for HTML and for gnuplot strings, the
 * page's style sheet, files written whole.
 *
 * Used by report.c (lotus-sim replay), tx_report.c (lotus-sim tx), slots_report.c
 * (lotus-sim slots), queue_report.c and whatif_report.c.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_HTMLPLOT_H
#define SIM_HTMLPLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "lt_err.h"

/* Longest path of an executable found on PATH. */
#define SIM_MAX_PATH 4096

/* Closes f and reports a write error on path (a full disk shows at fflush or fclose):
 * 0 or LT_EIO. */
LT_MUST_CHECK int sim_close_written(FILE *f, const char *path, struct lt_err *err);

/* Writes s to f with the five HTML special characters escaped. NULL writes nothing. */
void sim_html_puts(FILE *f, const char *s);

/* Writes s to f as the body of a gnuplot single-quoted string (' doubled). The caller
 * guarantees that s has no control character. */
void sim_gp_puts(FILE *f, const char *s);

/* Line i of a multi-line plot has colour i % 8 (gnuplot's 8 default colours), dash type
 * i % 4 and point type i % 13 + 1: two lines that coincide (bestfit1 and bestfit3 often do)
 * still differ in dash and marks. */
#define SIM_GP_COLOURS 8
#define SIM_GP_DASHES  4
#define SIM_GP_POINTS  13

/* Writes line i's style, "lw 1.5 lt C dt D" (dash types 1, 2, 4, 5; 3, dots, is left for
 * the replay's censored CDF). */
void sim_gp_line_style(FILE *f, size_t i);

/* Line i's point type, i % SIM_GP_POINTS + 1. */
size_t sim_gp_point_type(size_t i);

/* Starts a page: the HTML head with the reports' style sheet and extra_css (NULL: none), the
 * title and heading "lotus-sim WHAT report", and the command box (command NULL: none). */
void sim_html_head(FILE *f, const char *what, const char *extra_css, const char *command);

/* The note in place of a plot when gnuplot was not on PATH. */
void sim_html_no_gnuplot(FILE *f);

/* Ends a page: "Written by lotus-sim[ VERSION]." (version NULL: none) and the closing tags. */
void sim_html_footer(FILE *f, const char *version);

/* Writes DIR/report.html whole or not at all (sim_tmp_open, sim_tmp_commit): page(f, ctx)
 * writes it up to the footer, then sim_html_footer(f, version). Returns page's error, else
 * the write's: 0, LT_EIO or LT_ENOMEM. */
LT_MUST_CHECK int sim_html_report(const char *dir, const char *version,
                                  int (*page)(FILE *f, void *ctx), void *ctx, struct lt_err *err);

/* The reports' style sheet (the body of a <style> element). */
const char *sim_html_css(void);

/* Fills out (cap bytes) with the path of the first executable regular file `gnuplot` on
 * PATH; returns false (out = "") when there is none. */
bool sim_gnuplot_find(char *out, size_t cap);

/* Makes DIR/.report-XXXXXX into *out (owned, lt_free): 0, LT_EIO or LT_ENOMEM. */
LT_MUST_CHECK int sim_tmpdir_make(const char *dir, char **out, struct lt_err *err);

/* Removes every entry of the temporary directory *dir, then the directory; frees and clears
 * *dir. NULL does nothing. */
void sim_tmpdir_remove(char **dir);

/* Runs gnuplot (its path) on tmpdir/plots.gp with tmpdir as its working directory and waits
 * for it; then each of files[0..n-1] must exist in tmpdir and not be empty. Returns 0, or
 * LT_EIO quoting gnuplot's first output when it cannot be started, fails, or leaves out a
 * file; LT_ENOMEM. */
LT_MUST_CHECK int sim_gnuplot_run(const char *gnuplot, const char *tmpdir, const char *const *files,
                                  size_t n, struct lt_err *err);

/* Copies the SVG at path into f from its "<svg" on: 0, or LT_EIO for a missing, empty, huge
 * (> 256 MiB) or non-SVG file; LT_ENOMEM. */
LT_MUST_CHECK int sim_svg_inline(FILE *f, const char *path, struct lt_err *err);

#endif
