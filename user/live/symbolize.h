/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * symbolize.h - turns user return addresses into function, offset, module, file and line.
 *
 * The only module that touches libdw/libdwfl (with its symbol index, live/symindex.c).
 * Process images are registered while their process is alive (their maps are copied and
 * their ELF files opened then), so stacks of a process that has since exited or exec'd
 * still resolve.  ELF modules are cached by
 * (device, inode) and shared between images; both caches are bounded.  Resolved addresses
 * are cached per module (bounded too), so an address shared by many processes (the same
 * program, the same library) is looked up in the ELF file once; a budget bounds the time
 * spent on addresses the cache does not know.
 */
#ifndef LEAKTOP_SYMBOLIZE_H
#define LEAKTOP_SYMBOLIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/frame.h"

struct symbolizer;
struct file_id;

/*
 * A time budget for resolving: addresses the cache knows are always answered; others are
 * looked up only before deadline_ns (CLOCK_MONOTONIC; 0: no limit) and otherwise located
 * only (module filled, `deferred` set) and counted here.
 */
struct sym_budget {
	uint64_t deadline_ns;
	uint64_t looked_up;	/* resolved from the module files */
	uint64_t cached;	/* answered by the cache */
	uint64_t deferred;	/* left for a later call */
};

/* What the symbolizer holds now, for leaktop's own stats. */
struct sym_stats {
	uint64_t images, modules, cache_entries;
	uint64_t read_modules;		/* modules read, not mapped (a file others may change) */
	uint64_t read_bytes;		/* what they may read, all together */
	uint64_t refused;		/* modules not loaded: that would be over the bound */
	uint64_t dwarf_bytes;		/* what the DWARF of the modules open may hold */
	uint64_t dwarf_closed;		/* modules closed to keep that within its bound */
};

struct symbolizer *symbolizer__new(void);
void symbolizer__free(struct symbolizer *sym);

/*
 * Register (or refresh) the image `image_id` of live process `pid`: read /proc/PID/maps and
 * open every file-backed executable mapping (through /proc/PID/map_files or
 * /proc/PID/root, so other mount namespaces work).  Returns 0, -ESRCH if pid is gone.
 */
int symbolizer__add_image(struct symbolizer *sym, uint64_t image_id, int pid);
/* A forked child's image: a copy of its parent's (the child may be gone already). */
int symbolizer__clone_image(struct symbolizer *sym, uint64_t image_id, uint64_t from_id);
/*
 * The image of a program whose maps could not be read (its process is gone, or exec'd again):
 * its main executable only, from what the kernel reported at exec: the file's identity `id`,
 * its code range (start_code, end_code), and its name `path`, which is the exec'd name,
 * possibly of another mount namespace.  The file is opened through /proc/PID/exe (pid > 0),
 * else by that name here, and only when it is a regular file with identity `id`; anything
 * else is refused (-ESTALE, -EINVAL), never waited for: the frames then have no module.
 */
int symbolizer__add_exe_image(struct symbolizer *sym, uint64_t image_id, int pid,
			      const char *path, const struct file_id *id, uint64_t start_code,
			      uint64_t end_code);
bool symbolizer__has_image(struct symbolizer *sym, uint64_t image_id);
/* Forget an image (its modules stay cached while other images use them). */
void symbolizer__drop_image(struct symbolizer *sym, uint64_t image_id);

/*
 * Resolve one address of image `image_id`.  `is_return_addr`: the address follows a call
 * (every frame of a captured user stack), so the lookup uses addr - 1 to land on the call.
 * Always fills `out` (unknown parts NULL/0); returns 0, or -ENOENT when the image or the
 * mapping is unknown.  Free the strings with sym_frame__clear().
 */
int symbolizer__resolve(struct symbolizer *sym, uint64_t image_id, uint64_t addr,
			bool is_return_addr, struct sym_frame *out);
/*
 * The same within a budget (NULL: none).  Returns 0, -ENOENT, or -EAGAIN when the lookup was
 * deferred: `out` then has addr and module, `deferred` set; call again later.
 */
int symbolizer__resolve_within(struct symbolizer *sym, uint64_t image_id, uint64_t addr,
			       bool is_return_addr, struct sym_budget *budget,
			       struct sym_frame *out);
/*
 * Resolve address addr of a process that may be gone, by the file it lies in (identity id,
 * makedev form) and its offset there, as the stack walk found them: through the module
 * already loaded for that file (another image maps it), else by `path` (NULL: none; a name
 * the process's side chose), opened only if it is a regular file with identity id on a
 * file system leaktop may read, never through a link.  Fills `out` as symbolizer__resolve;
 * -ENOENT when the file is neither loaded nor opened (out has no module then).
 */
int symbolizer__resolve_file(struct symbolizer *sym, uint64_t addr, const struct file_id *id,
			     const char *path, uint64_t off, bool is_return_addr,
			     struct sym_budget *budget, struct sym_frame *out);
void symbolizer__stats(const struct symbolizer *sym, struct sym_stats *out);
/*
 * The bound on what the DWARF of modules no image references may hold in memory (default
 * 64 MiB): beyond it, the least recently used of them are closed (and opened again if
 * needed).  For tests.
 */
void symbolizer__set_dwarf_max(struct symbolizer *sym, uint64_t bytes);
/*
 * The build id (lower-case hex, malloc'd) of the file loaded for module name `module` (as the
 * processes saw it), or NULL: none loaded, none has one, or files with different build ids go
 * by that name.  The files were verified when opened (device and inode): no file is opened
 * here.  `symbolizer` is a struct symbolizer (export_opts.build_id's signature).
 */
char *symbolizer__build_id(void *symbolizer, const char *module);

/*
 * A module a frame was resolved in that has no symbol table to name its functions: no
 * .symtab, no MiniDebugInfo (.gnu_debugdata), and no separate debug file in the debug
 * directory (by build id or .gnu_debuglink).  Its frames are named by .dynsym at best.
 */
struct sym_missing_module {
	char *path;		/* as the first process to map it saw it */
	char *build_id;		/* lower-case hex, NULL: none */
	uint64_t dev, ino;	/* the file's identity (its mapping's) */
};

/*
 * Modules found without symbols since the last call, each once per load of its file: the
 * array is the caller's (sym_missing_module__free()).  *out NULL when none.
 */
void symbolizer__take_missing(struct symbolizer *sym, struct sym_missing_module **out,
			      size_t *n);
void sym_missing_module__free(struct sym_missing_module *v, size_t n);

#endif
