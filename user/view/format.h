/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * format.h - how leaktop spells things for people, once for the TUI, the text report and
 * diff: bytes, rates and ages with their units, stack frames, the title of a call site,
 * process flags, and every string a traced process controls (escaped, see util/escape.h).
 * JSON spells things its own way (view/snapshot.c); only the flags' names are shared.
 */
#ifndef LEAKTOP_FORMAT_H
#define LEAKTOP_FORMAT_H

#include <stddef.h>
#include <stdio.h>

#include "core/model.h"

#define FMT_NUM_LEN 32		/* enough for any number this module spells */

enum fmt_unit {
	UNIT_BYTES,		/* "1.5 KiB", "+410 B/s" */
	UNIT_FDS,		/* "3 fds", "+0.5 fds/s" */
};

/* "512 B", "1.5 KiB", "-2.0 MiB" into buf; returns buf. */
const char *fmt__bytes(char *buf, size_t len, double bytes);
/* The same with a sign always: "+4.0 KiB", "-100 B". */
const char *fmt__signed_bytes(char *buf, size_t len, double bytes);
/* A rate with its unit and sign: "+410 B/s", "+12.5 KiB/s", "+0.5 fds/s". */
const char *fmt__rate(char *buf, size_t len, double per_s, enum fmt_unit unit);
/* An age: "42s", "5m03s", "2h05m", "3d04h"; "-" when unknown (negative). */
const char *fmt__age(char *buf, size_t len, double age_s);

enum frame_style {
	/* The text report: one run's addresses mean something, and a saved report is read
	 * with no other help. */
	FRAME_ADDR,
	/* diff (addresses differ between runs) and the TUI (80 columns): the address only
	 * when no symbol names the frame. */
	FRAME_ADDR_IF_UNKNOWN,
};

/* "#0  0x55d0c0ffee00 leak_here+0x14 leaky.c:12 [/usr/bin/leaky]" (no newline); i is the
 * frame's depth.  0 or -EIO. */
int fmt__frame(FILE *out, unsigned int i, const struct sym_frame *f, enum frame_style style);
/* What names a site: its innermost frame's function and file:line (its innermost Python
 * frame's, if any), "(stack unknown)". */
int fmt__site_title(FILE *out, const struct site *s);
/*
 * A short name for a call site, for labels: its innermost named frame that does more than
 * pass the allocation on (not a wrapper by name: *alloc*, operator new, strdup; not in the C
 * or C++ runtime or an allocator library), with file:line when known: "leak_new()
 * cxx_new.cc:12", "dictAddRaw"; else the innermost named frame; "(unknown in MODULE)",
 * "(stack unknown)".  Escaped; returns buf.
 */
const char *fmt__site_name(char *buf, size_t len, const struct site *s);
/* A string a traced process controls, escaped; fallback when s is NULL or empty. */
int fmt__str(FILE *out, const char *s, const char *fallback);
/* The same into buf, cut at a character to fit; returns buf. */
const char *fmt__str_buf(char *buf, size_t len, const char *s, const char *fallback);

/* Process flags: the contract's names (JSON and the text report), the TUI's letters. */
struct proc_flag_desc {
	const char *name;	/* "heap_growth" */
	char letter;		/* 'H' */
	const char *meaning;	/* "heap grows" */
};

extern const struct proc_flag_desc proc_flags[PROC_FLAG__COUNT];

/*
 * How the heap is traced, for headers: "heap exact  cost 0.40%/2%  bucket 90%" (the budget
 * left in exact mode's bucket), "heap suspects 3  cost 0.05%/2% (exact ~7.10%)  released 2:
 * 4242 redis-server 1.50%, 77 steady_grow 0.01%" (the suspects by what each costs, costliest
 * first; a cost not yet known is "?"); returns buf.
 */
const char *fmt__heap_mode(char *buf, size_t len, const struct model *m);
/* " (costs 0.52% of the CPUs)", or "" when unknown (NaN). */
const char *fmt__cost(char *buf, size_t len, double cost_pct);
/* The letters of flags, "HF"; returns buf (len > PROC_FLAG__COUNT). */
const char *fmt__flag_letters(char *buf, size_t len, unsigned int flags);
/* " [heap_growth] [fd_growth]"; 0 or -EIO. */
int fmt__flag_names(FILE *out, unsigned int flags);
/* The flag whose contract name is name, or -1. */
int fmt__flag_by_name(const char *name);

/*
 * The allocator's slack of p's latest scan, one line: "RSS grows while the live heap is
 * flat: 98.4 MiB held free by glibc arenas, 87.5 MiB trimmable (of 201.2 MiB resident, 100.0
 * MiB live)" (the first words "the allocator holds its heap free:" unless RSS grows and the
 * heap does not); "" when the scan found no glibc heap.  Returns buf.
 */
const char *fmt__alloc_slack(char *buf, size_t len, const struct process *p);

/*
 * Retention path i of a scan's site ss of p, one line: "96% (1.4 MiB) held by g_sessions
 * (server, .bss) -> table_new -> dict_expand" (the root's name, then the sites between it
 * and the site, by their innermost symbol; "..." when the chain was cut).  Returns buf.
 */
const char *fmt__retainer(char *buf, size_t len, const struct process *p,
			  const struct scan_site *ss, uint32_t i);

/*
 * What a module without symbols is missing and the fix, one line of real bytes (print it
 * with fmt__str, JSON keeps it as it is): "symbols missing for /usr/bin/python3.11
 * (build-id c561...): apt install python3.11-dbg"; for a file no package owns, that no
 * debug package is known, and where its debug file would go.  Returns buf.
 */
#define FMT_HINT_LEN 2048
const char *fmt__symbols_hint(char *buf, size_t len, const struct sym_missing *h);

/*
 * A stream that writes into buf (len > 0 bytes, NUL included) and never past it: what does
 * not fit is cut.  For views that draw fixed-size lines with the writers above.  NULL if
 * out of memory (buf is then "").  fmt__line_close ends it, buf terminated.
 */
FILE *fmt__line_open(char *buf, size_t len);
void fmt__line_close(FILE *f, char *buf, size_t len);

/* A lastref verdict as one line (no newline), control characters escaped: "last pointer to
 * 0x... (allocated at f file.c:12) overwritten at g file.c:30 (...)".  Returns buf. */
const char *fmt__lastref_line(char *buf, size_t len, const struct lastref_result *r);

#endif
