/* lt_slots.h -- slot-based clusters (Cavdar ch. 6-9): server types, slot configurations, and
 * WASC, the workload-aware slot configuration of chapter 8.
 *
 * Source: Cavdar, "Priority Scheduling for Heterogeneous Workloads in Computing Clusters"
 * (PhD thesis, 2015): Table 3.1 (server types and power), Table 8.1 (SC1-SC4 and WASC),
 * section 8.2 (WASC phases I and II, equations 8.1-8.5). The readings taken where the thesis
 * is silent are those of ../shared/spec/cavdar-thesis-digest.md, cited by their ids (A1,
 * A32, A33); docs/slots.md states each one.
 *
 * In the slot model a server runs at most `slots` tasks whatever their requests; a slot's
 * "power" is the server's CPU divided by its slots (the CPU a task gets when the server is
 * full), and WASC gives production classes fewer, more powerful slots on the fastest servers.
 *
 * SPDX-License-Identifier: MIT
 */
#ifndef LT_SLOTS_H
#define LT_SLOTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lt_err.h"

/* A server type of Table 3.1: normalised capacities (type D = 1.0), cores and power (W). */
struct lt_server_type {
    const char *name;
    double cpu, mem;
    uint32_t cores;
    double p_cpu, p_mem, p_sleep, p_idle, p_peak;
};

/* The built-in types "A", "B", "C", "D" (Table 3.1 verbatim, 8 cores each: A1, A53). */
size_t lt_server_type_count(void);
const struct lt_server_type *lt_server_type_at(size_t i);
/* NULL and LT_ENOTFOUND, naming the known types, for an unknown name. */
const struct lt_server_type *lt_server_type_find(const char *name, struct lt_err *err);

/* A group of identical servers with the same slot count. */
struct lt_slot_group {
    const struct lt_server_type *type;
    uint32_t count; /* servers */
    uint32_t slots; /* per server, >= 1 (0 in an inventory, where it is not used) */
};

#define LT_SLOT_MAX_GROUPS 32

/* A cluster's slot configuration: its server groups, in order. */
struct lt_slot_config {
    size_t n;
    struct lt_slot_group g[LT_SLOT_MAX_GROUPS];
};

/* Servers and slots of a configuration. */
uint64_t lt_slot_config_servers(const struct lt_slot_config *c);
uint64_t lt_slot_config_slots(const struct lt_slot_config *c);

/* A slot's power: the CPU a task gets on a full server, type->cpu / slots (A23). */
double lt_slot_power(const struct lt_slot_group *g);

/* The CPU-based configuration SC<level> of Table 8.1 (level 1..4) over an inventory: every
 * server gets 16 * level slots per unit of CPU (8/16/24/32 on the 0.5-CPU types A, B, C,
 * twice that on D). Chapter 6 uses SC3, chapter 7 SC2. Errors: LT_EINVAL naming the bad
 * level, an empty inventory, a server type without CPU, or a count of 0. */
LT_MUST_CHECK int lt_slot_config_sc(int level, const struct lt_slot_group *inv, size_t n,
                                    struct lt_slot_config *out, struct lt_err *err);

/* The slots of one server with cpu units of CPU under the CPU-based configuration SC<level>:
 * 16 * level per unit, rounded to the nearest whole slot, at least 1 (Table 8.1: 8..32 slots on
 * the 0.5-CPU types A, B, C, twice that on D). lt_slot_config_sc applies it to every group;
 * lotus-extender's `--slots capacity` to every node (docs/extender.md). Errors: LT_EINVAL naming
 * a level outside 1..4 or a cpu that is not positive and finite. */
LT_MUST_CHECK int lt_slot_count_sc(int level, double cpu, uint32_t *out, struct lt_err *err);

/* ---- WASP's assignment (WAA, chapter 8, A23) over servers with slot counts ---- */

/* Is class cls (0..11) a production class (9..11 [L965])? WAA gives these the most powerful
 * free slot; lotus-sim's slot simulator and lotus-extender's prioritize both ask this. */
bool lt_class_is_production(int cls);

/* WAA's order of slot powers: < 0 if a slot of power a is preferred to one of power b (more
 * CPU per slot), > 0 if b is preferred, 0 for equal powers (the same tier). Exact comparison:
 * powers computed the same way from the same numbers fall in one tier. */
int lt_slot_power_cmp(double a, double b);

/* One server as WAA sees it. */
struct lt_slot_node {
    uint32_t slots; /* slot limit (0: none configured, so never a free slot) */
    uint32_t used;  /* slots held by tasks (may exceed slots on an overcommitted server) */
    double power;   /* CPU per slot, lt_slot_power (any unit, the same for every server) */
};

/* Has server s a free slot (used < slots)? */
bool lt_slot_node_free(const struct lt_slot_node *s);

#define LT_SLOT_NO_TIER UINT32_MAX /* lt_slot_waa_tiers: the server has no free slot */

/* WAA's preference over servers nodes[0..n-1] (A23): among those with a free slot, tier 0 holds
 * the most powerful, tier 1 the next power down, and so on (equal powers share a tier);
 * tier[i] is node i's tier, LT_SLOT_NO_TIER if it has no free slot. *n_tiers receives the
 * number of tiers. A production task goes to a server of the lowest tier; within a tier the
 * caller chooses (the simulator uniformly at random, the extender by its placement policy).
 * O(n log n). Errors: LT_EINVAL for NULL arguments or a free server whose power is not
 * positive and finite, LT_ENOMEM; tier is then unspecified. */
LT_MUST_CHECK int lt_slot_waa_tiers(const struct lt_slot_node *nodes, size_t n, uint32_t *tier,
                                    size_t *n_tiers, struct lt_err *err);

/* ---- WASC (chapter 8) ---- */

/* Priority groups [L965]: gratis 0-1, middle 2-8, production 9-11. */
enum lt_class_group { LT_GRATIS, LT_MIDDLE, LT_PRODUCTION };

/* The group of a priority 0..11; -1 for any other value. */
int lt_class_group_of(int priority);

/* One priority class's workload statistics (Table 5.2 columns). A statistic the source does
 * not give (Table 5.2's "n/a") is NaN: the class is then left out of every sum that needs
 * it, and lt_wasc reports how many were left out. */
struct lt_class_stats {
    int priority;        /* 0..11 */
    double arrivals;     /* P_i: share of the arrivals (any unit: only ratios are used) */
    double cpu_demand;   /* omega_i: mean CPU demand, cpu-s */
    double cpu_usage;    /* xi_i: mean CPU usage */
    double cpu_usage_sd; /* sigma_i: its standard deviation */
};

struct lt_wasc_params {
    double c;           /* confidence indicator of equation 8.3 (2: Chebyshev, >= 75 %) */
    double delta[3];    /* slow-down sensitivity per group: 0.5, 0.75, 1.0 [L1558] */
    uint32_t min_cores; /* slot counts are multiples of this, >= it (8 [L1570]) */
    bool sd_given;      /* use sd_p and sd_np as the groups' pooled deviations */
    double sd_p, sd_np; /* (the thesis never gives sigma: Table 8.1 needs about 0.0172 and
                         * 0.0082, A32) */
    uint32_t fixture_p; /* if not 0: N_p and N_np are these (Table 8.1: 24 and 48) */
    uint32_t fixture_np;
};

/* Table 5.2 of the thesis [L1038-L1053], priorities 0..11: % of tasks, CPU demand and CPU
 * usage ("<=0.01" read as 0.01, class 7's "n/a" as NaN); no deviations (NaN): the thesis gives
 * none. */
void lt_wasc_table_5_2(struct lt_class_stats cls[12]);

/* WASC's slot configuration of Table 8.1 over an inventory: phase II from Table 5.2's
 * statistics (phi_p), with Table 8.1's slot counts N_p = 24 and N_np = 48 (the thesis gives no
 * sigma to derive them; docs/slots.md). Errors as lt_wasc. */
LT_MUST_CHECK int lt_wasc_table_8_1(const struct lt_slot_group *inv, size_t n_inv,
                                    struct lt_slot_config *out, struct lt_err *err);

/* The defaults above, with no fixture and no given deviations. */
void lt_wasc_params_default(struct lt_wasc_params *p);

struct lt_wasc_result {
    double phi_p;          /* production share of the CPU occupancy, eq. 8.1-8.2 (fraction) */
    double xi[2];          /* pooled mean CPU usage: [0] production, [1] non-production */
    double sd[2];          /* pooled standard deviation (or the given ones) */
    double delta[2];       /* delta: production's, and the arrival-weighted non-production mean */
    double theta[2];       /* estimated CPU usage per task, eq. 8.3 */
    double c_max;          /* C: CPU of the most powerful server type of the inventory */
    uint32_t n_slots[2];   /* N_p, N_np on a server of CPU C (eq. 8.4, rounded) */
    uint32_t prod_servers; /* servers given production slots (phase II) */
    double prod_cpu;       /* their CPU, against the budget phi_p * total CPU */
    size_t skipped;        /* classes left out of some sum for a missing statistic */
    struct lt_slot_config config;        /* the inventory split into production and normal groups */
    bool production[LT_SLOT_MAX_GROUPS]; /* config.g[k] holds production slots */
};

/* WASC over classes cls[0..n-1] and a server inventory inv[0..n_inv-1] (slots unused).
 * Phase I: phi_p = sum_production P_i omega_i / sum_all P_i omega_i; per group g in
 * {production, non-production}, theta_g = delta_g (xi_g + c sigma_g) with the pooled mean and
 * deviation (law of total variance over the classes, weighted by arrivals) and delta_np the
 * arrival-weighted mean of the classes' deltas; N_g = C / theta_g rounded to the nearest
 * multiple of min_cores, at least min_cores (A32). Phase II: server types by core speed (cpu /
 * cores) descending, whole servers get production slots N_p * cpu / C while their CPU stays
 * within phi_p * total CPU, to the nearest server, at least one (A33); every other server
 * gets N_np * cpu / C slots (rounded, at least 1).
 * Errors (LT_EINVAL, naming the class, group or server type): a priority outside 0..11 or
 * twice, a negative or infinite statistic, a group with no class that has the statistics it
 * needs, a zero total demand, an empty inventory or a type without CPU or cores, more groups
 * than LT_SLOT_MAX_GROUPS after the split, a non-positive c or delta. */
LT_MUST_CHECK int lt_wasc(const struct lt_class_stats *cls, size_t n,
                          const struct lt_slot_group *inv, size_t n_inv,
                          const struct lt_wasc_params *p, struct lt_wasc_result *out,
                          struct lt_err *err);

#endif
