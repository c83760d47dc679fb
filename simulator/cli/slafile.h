/* slafile.h -- SLA files: the SLA settings of `lotus-sim whatif --sla @FILE` and `lotus-sim
 * queue --sla @FILE`, and the SLA values of the replay's annotation file (replay.h,
 * sim_annot_load). Betser's UI stubs a "Load SLA" to a file [B L383-L385]; this is its format
 * (docs/formats.md "SLA files"):
 *
 *   {"slas": [{"name": "pen1", "shape": "by-deadline", "rmax": 1, "pen": -1,
 *              "d1": "1h", "d2": "2h"}, ...]}
 *
 * An SLA object has "shape" (the kind: by-deadline, cheap-and-simple, example1) and the kind's
 * keys of the SPEC text (lt_sla_parse: rmax, pen, d1, d2 / rmax, rmin, d0, k / target, peak,
 * offpeak), each a JSON number or a string as the SPEC writes it ("1h", "90s", "2x"). The
 * values, defaults and ranges are checked by lt_sla_parse_kv, the SPEC's own checks. Errors
 * name the file and the JSON path ("sla.json: $.slas[0].d2: SLA 'pen1': d1 (7200 s) must be
 * <= d2 ..."); unknown keys and names given twice are refused.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef SIM_SLAFILE_H
#define SIM_SLAFILE_H

#include <stddef.h>

#include <jansson.h>

#include "lt_err.h"
#include "lt_sla.h"

#define SIM_SLA_NAME     32 /* bytes of a name, NUL included */
#define SIM_SLA_FILE_MAX 64 /* SLAs in one file */

/* One named SLA of a file. */
struct sim_sla_named {
    char name[SIM_SLA_NAME];
    struct lt_sla_spec spec; /* spec.text: the name */
};

/* Is name a valid SLA name: 1..31 of letters, digits, '_', '-', '.'? */
bool sim_sla_name_ok(const char *name);

/* The SLA object v at path at: "shape" and the kind's keys, plus the keys extra[0..n_extra-1]
 * (read by the caller, e.g. "name"). label names the SLA in messages. *out untouched on
 * failure. */
int sim_sla_from_json(json_t *v, const char *at, const char *label, const char *const *extra,
                      size_t n_extra, struct lt_sla_spec *out, struct lt_err *err);

/* An SLA value at path at: a SPEC string (lt_sla_parse) or an SLA object without extra keys. */
int sim_sla_value(json_t *v, const char *at, const char *label, struct lt_sla_spec *out,
                  struct lt_err *err);

/* Reads the SLA file at path: *out (owned, lt_free) gets its *n >= 1 SLAs in file order.
 * Errors name the file (err's source) and the JSON path. */
int sim_sla_file_load(const char *path, struct sim_sla_named **out, size_t *n, struct lt_err *err);

#endif
