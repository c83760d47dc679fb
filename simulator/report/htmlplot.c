/* htmlplot.c -- the HTML reports' shared parts (htmlplot.h): gnuplot on PATH, run by
 * fork/exec in a temporary directory (so no path is ever quoted into a script), SVG inlined,
 * HTML and gnuplot-string escaping, the style sheet.
 *
 * SPDX-License-Identifier: MIT
 */
#include "report/htmlplot.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/outfile.h"
#include "lt_mem.h"

/* An SVG is inlined whole; a whole-trace plot is a few MB, so 256 MiB means "broken". */
#define MAX_SVG ((size_t)256 << 20)
/* Bytes of gnuplot's error output quoted in an error message. */
#define GP_MSG 120

int sim_close_written(FILE *f, const char *path, struct lt_err *err)
{
    int bad = fflush(f) != 0 || ferror(f);
    int saved = errno;

    if (fclose(f) != 0 && !bad) {
        bad = 1;
        saved = errno;
    }
    if (bad)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot write '%s': %s", path, strerror(saved));
    return 0;
}

void sim_gp_line_style(FILE *f, size_t i)
{
    static const int dash[SIM_GP_DASHES] = {1, 2, 4, 5};
    fprintf(f, "lw 1.5 lt %zu dt %d", i % SIM_GP_COLOURS + 1, dash[i % SIM_GP_DASHES]);
}

size_t sim_gp_point_type(size_t i)
{
    return i % SIM_GP_POINTS + 1;
}

void sim_html_head(FILE *f, const char *what, const char *extra_css, const char *command)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n",
          f);
    fprintf(f, "<title>lotus-sim %s report</title>\n<style>\n%s%s</style>\n</head>\n<body>\n", what,
            sim_html_css(), extra_css != NULL ? extra_css : "");
    fprintf(f, "<h1>lotus-sim %s report</h1>\n", what);
    if (command != NULL) {
        fputs("<code class=\"cmd\">", f);
        sim_html_puts(f, command);
        fputs("</code>\n", f);
    }
}

void sim_html_no_gnuplot(FILE *f)
{
    fputs("<p class=\"note\">No plot: gnuplot was not found on PATH when this report was "
          "written. Install gnuplot (Debian: <code>apt-get install gnuplot-nox</code>) and run "
          "the command again to get the plots.</p>\n",
          f);
}

void sim_html_footer(FILE *f, const char *version)
{
    fputs("<p class=\"cap\">Written by lotus-sim", f);
    if (version != NULL) {
        fputc(' ', f);
        sim_html_puts(f, version);
    }
    fputs(".</p>\n</body>\n</html>\n", f);
}

int sim_html_report(const char *dir, const char *version, int (*page)(FILE *f, void *ctx),
                    void *ctx, struct lt_err *err)
{
    char *final = lt_strfmt("%s/report.html", dir);
    char *tmp = NULL; /* "<final>.tmp", from sim_tmp_open; freed by sim_tmp_commit */
    FILE *f;
    int rc;

    if (final == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory");
    if ((f = sim_tmp_open(final, &tmp, err)) == NULL) {
        lt_free(final);
        return err->code;
    }
    rc = page(f, ctx);
    sim_html_footer(f, version);
    rc = sim_tmp_commit(f, tmp, final, rc, err);
    lt_free(final);
    return rc;
}

void sim_html_puts(FILE *f, const char *s)
{
    for (; s != NULL && *s != '\0'; s++) {
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&#39;", f);
            break;
        default:
            fputc(*s, f);
        }
    }
}

void sim_gp_puts(FILE *f, const char *s)
{
    for (; *s != '\0'; s++) {
        if (*s == '\'')
            fputc('\'', f);
        fputc(*s, f);
    }
}

static const char css[] =
    "body{font-family:system-ui,sans-serif;margin:1.5em auto;max-width:1000px;padding:0 1em;"
    "color:#222}\n"
    "h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.2em;margin-top:1.6em}\n"
    "code.cmd{display:block;background:#f4f4f4;padding:.5em;white-space:pre-wrap;"
    "word-break:break-all}\n"
    "table{border-collapse:collapse;margin:.5em 0}td,th{padding:.25em .7em;"
    "border-bottom:1px solid #ddd}th{text-align:left;background:#f4f4f4}\n"
    "td.n{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}\n"
    "table.facts th{background:none;font-weight:normal;color:#555}\n"
    "svg{width:100%;height:auto;display:block}\n"
    ".note{background:#fff3cd;border:1px solid #e0c36b;padding:.6em}\n"
    ".cap{color:#555;font-size:.9em}\n";

const char *sim_html_css(void)
{
    return css;
}

bool sim_gnuplot_find(char *out, size_t cap)
{
    const char *path = getenv("PATH");
    const char *p = path;

    out[0] = '\0';
    if (path == NULL)
        return false;
    for (;;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        struct stat st;
        /* An empty PATH entry means the current directory. */
        int w = len == 0 ? snprintf(out, cap, "./gnuplot")
                         : snprintf(out, cap, "%.*s/gnuplot", (int)len, p);
        if (w > 0 && (size_t)w < cap && stat(out, &st) == 0 && S_ISREG(st.st_mode) &&
            access(out, X_OK) == 0)
            return true;
        if (end == NULL)
            break;
        p = end + 1;
    }
    out[0] = '\0';
    return false;
}

int sim_tmpdir_make(const char *dir, char **out, struct lt_err *err)
{
    *out = lt_strfmt("%s/.report-XXXXXX", dir);
    if (*out == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory writing the report");
    if (mkdtemp(*out) == NULL) {
        int rc = lt_err_set(err, LT_EIO, 0, 0, "cannot create a temporary directory in '%s': %s",
                            dir, strerror(errno));
        lt_free(*out);
        *out = NULL;
        return rc;
    }
    return 0;
}

void sim_tmpdir_remove(char **dir)
{
    DIR *d;
    struct dirent *e;

    if (*dir == NULL)
        return;
    d = opendir(*dir);
    if (d != NULL) {
        while ((e = readdir(d)) != NULL) {
            char *f;
            if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
                continue;
            f = lt_strfmt("%s/%s", *dir, e->d_name);
            if (f != NULL)
                remove(f);
            lt_free(f);
        }
        closedir(d);
    }
    rmdir(*dir);
    lt_free(*dir);
    *dir = NULL;
}

/* Reads up to cap - 1 bytes of gnuplot's output into msg, newlines as spaces. */
static void gnuplot_msg(const char *tmpdir, char *msg, size_t cap)
{
    char *path = lt_strfmt("%s/gnuplot.err", tmpdir);
    FILE *f = path ? fopen(path, "r") : NULL;
    size_t n = 0;

    if (f != NULL) {
        n = fread(msg, 1, cap - 1, f);
        fclose(f);
    }
    msg[n] = '\0';
    for (size_t k = 0; k < n; k++)
        if (msg[k] == '\n' || msg[k] == '\r' || msg[k] == '\t')
            msg[k] = ' ';
    lt_free(path);
}

/* The child: stdin from /dev/null, stdout and stderr to errfd, cwd the temporary directory.
 * Only async-signal-safe calls between fork and exec. */
static void gnuplot_child(const char *gnuplot, const char *tmpdir, int nullfd, int errfd)
{
    char arg0[] = "gnuplot";
    char arg1[] = "plots.gp";
    char *argv[] = {arg0, arg1, NULL};

    if (dup2(nullfd, 0) < 0 || dup2(errfd, 1) < 0 || dup2(errfd, 2) < 0 || chdir(tmpdir) != 0)
        _exit(127);
    execv(gnuplot, argv);
    _exit(127);
}

int sim_gnuplot_run(const char *gnuplot, const char *tmpdir, const char *const *files, size_t n,
                    struct lt_err *err)
{
    char *errpath = lt_strfmt("%s/gnuplot.err", tmpdir);
    char msg[GP_MSG];
    int nullfd, errfd, status = 0;
    pid_t pid;

    if (errpath == NULL)
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory writing the report");
    errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    lt_free(errpath);
    nullfd = open("/dev/null", O_RDONLY);
    if (errfd < 0 || nullfd < 0) {
        int rc = lt_err_set(err, LT_EIO, 0, 0, "cannot set up gnuplot's files in '%s': %s", tmpdir,
                            strerror(errno));
        if (errfd >= 0)
            close(errfd);
        if (nullfd >= 0)
            close(nullfd);
        return rc;
    }
    pid = fork();
    if (pid == 0)
        gnuplot_child(gnuplot, tmpdir, nullfd, errfd);
    close(errfd);
    close(nullfd);
    if (pid < 0)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot start '%s': %s", gnuplot, strerror(errno));
    while (waitpid(pid, &status, 0) < 0) {
        /* ECHILD: the caller reaps children itself; the output files still tell. */
        if (errno != EINTR) {
            status = 0;
            break;
        }
    }
    gnuplot_msg(tmpdir, msg, sizeof(msg));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return lt_err_set(err, LT_EIO, 0, 0, "gnuplot '%s' failed (status %d): %s", gnuplot,
                          WIFEXITED(status) ? WEXITSTATUS(status) : -1, msg);
    for (size_t k = 0; k < n; k++) {
        char *svg = lt_strfmt("%s/%s", tmpdir, files[k]);
        struct stat st;
        bool ok = svg != NULL && stat(svg, &st) == 0 && st.st_size > 0;
        lt_free(svg);
        if (!ok)
            return lt_err_set(err, LT_EIO, 0, 0, "gnuplot '%s' wrote no '%s': %s", gnuplot,
                              files[k], msg);
    }
    return 0;
}

int sim_svg_inline(FILE *f, const char *path, struct lt_err *err)
{
    FILE *in = fopen(path, "rb");
    char *data;
    size_t n, at;
    struct stat st;

    if (in == NULL)
        return lt_err_set(err, LT_EIO, 0, 0, "cannot open '%s': %s", path, strerror(errno));
    if (fstat(fileno(in), &st) != 0 || st.st_size <= 0 || (uintmax_t)st.st_size > MAX_SVG) {
        fclose(in);
        return lt_err_set(err, LT_EIO, 0, 0, "'%s' is empty or larger than %zu bytes", path,
                          MAX_SVG);
    }
    data = lt_malloc((size_t)st.st_size + 1);
    if (data == NULL) {
        fclose(in);
        return lt_err_set(err, LT_ENOMEM, 0, 0, "out of memory writing the report");
    }
    n = fread(data, 1, (size_t)st.st_size, in);
    fclose(in);
    data[n] = '\0';
    for (at = 0; at + 4 <= n && memcmp(data + at, "<svg", 4) != 0; at++)
        ;
    if (at + 4 > n) {
        lt_free(data);
        return lt_err_set(err, LT_EIO, 0, 0, "'%s' holds no '<svg' element", path);
    }
    fwrite(data + at, 1, n - at, f);
    fputc('\n', f);
    lt_free(data);
    return 0;
}
