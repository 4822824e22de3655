// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * symbolize.c - user address to function, offset, module, source file and line.
 *
 * Owns everything libdw/libdwfl: two bounded caches.  Modules are ELF files, one Dwfl each,
 * keyed by the (device, inode) of the mapping and shared by every image that maps the file;
 * the file is opened once, through /proc/PID/map_files/START-END (works across mount
 * namespaces and for deleted files) or else PATH inside /proc/PID/root, always by
 * live/safe_open.c (a regular file with the mapping's device and inode, never blocking), and
 * the descriptor stays with the Dwfl, so the process may exit or exec afterwards.  While
 * the descriptor is open the inode cannot be reused, so (device, inode) identifies the
 * content.  libdwfl maps the files it is given: only files nobody but root can change are
 * given to it so (owned by root, writable by no one else, on a local file system).  Any
 * other file, a library in a user's directory say, could be truncated by its owner while
 * mapped here, and the next lookup in it would raise SIGBUS: such files are read instead
 * (an Elf opened with ELF_C_READ, handed to libdwfl by sym_find_elf), so a truncation makes
 * lookups fail, nothing worse; what they may read is charged against SYM_MAX_READ_BYTES.
 * Separate debug information comes only from the debug directory (/usr/lib/debug,
 * by build id or by a plain .gnu_debuglink name), never from a path the traced program's
 * ELF leads to; DWARF that would make libdw open a dwz file itself (one not found there) is
 * left unused, the symbol table still names functions.  Images are
 * process images: a copy of their executable mappings, each pointing at its module.
 * A runtime address becomes a file offset through its mapping, then an ELF virtual address
 * through the PT_LOAD program headers, then a Dwfl address through the module's bias.
 * Lookups are cached in a fixed table keyed by (module serial, Dwfl address): a module's
 * serial is never reused, so an evicted module's entries simply never match again.  The
 * memory is bounded by the limits below; images are dropped when their process is
 * reaped.  Not thread-safe.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "live/symbolize.h"
#include "live/symindex.h"
#include "live/procmaps.h"
#include "live/safe_open.h"
#include "util/clock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <zlib.h>

/* From libstdc++ (the C++ ABI's abi::__cxa_demangle, extern "C"). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

#define SYM_MAX_MODULES		256	/* open ELF files (each holds one or two fds) */
#define SYM_MAX_IMAGES		4096
#define SYM_IMAGE_BUCKETS	1024	/* power of two */
#define SYM_CACHE_SLOTS		16384	/* resolved addresses kept; power of two */
#define SYM_DEBUG_DIR		"/usr/lib/debug"
#define SYM_MAX_BUILD_ID	64	/* bytes */
#define SYM_FAILED_FILES	64	/* files of gone processes not opened, remembered */
/*
 * What the modules read rather than mapped may read, all together: their symbol tables,
 * string tables, notes and sections not loaded (DWARF, .gnu_debugdata), as section headers
 * give them (the whole file without them).  A module that would not fit, once the least
 * recently used read modules no image needs are evicted, is refused (left unsymbolized).
 */
#define SYM_MAX_READ_BYTES	(512ull << 20)
/*
 * What the DWARF of modules no image references may hold in memory, all together (libdw
 * keeps each compressed section inflated, and every unit and line table it parsed, until the
 * module is closed): beyond it the least recently used such modules are closed.  Modules
 * images reference are never closed for it; their DWARF counts.
 */
#define SYM_MAX_DWARF_BYTES	(64ull << 20)

struct sym_segment {			/* one PT_LOAD */
	uint64_t offset;
	uint64_t filesz;
	uint64_t vaddr;
	bool exec;			/* PF_X */
};

struct sym_module {
	uint64_t dev, ino;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	GElf_Addr bias;			/* Dwfl address = ELF vaddr + bias */
	struct sym_segment *segs;
	size_t nsegs;
	unsigned int refs;		/* images referencing it; evictable at 0 */
	uint64_t last_use;
	uint64_t serial;		/* unique for the symbolizer's life; cache key */
	char *path;			/* the name the first process to map it saw */
	char *build_id;			/* lower-case hex, NULL: none */
	bool dwarf_checked;		/* module_dwarf_usable() ran */
	bool dwarf_usable;		/* source lines may be looked up */
	Dwarf *alt;			/* its dwz file, from the debug directory; NULL: none */
	int alt_fd;
	bool has_symtab;		/* the file has a .symtab */
	bool has_debugdata;		/* or MiniDebugInfo (.gnu_debugdata, read by libdwfl) */
	bool debug_found;		/* sym_find_debuginfo() gave libdwfl a debug file */
	bool symbols_checked;		/* missing is known (after the first lookup) */
	bool missing;			/* none of the three: named by .dynsym at best */
	bool missing_queued;		/* handed to symbolizer__take_missing() */
	struct sym_index *index;	/* its symbols by address (built at its first lookup) */
	bool index_tried;		/* NULL index then: too many symbols, libdwfl searches */
	uint64_t read_bytes;		/* read, not mapped: what it may read (0: mapped) */
	uint64_t dwarf_bytes;		/* what its DWARF may hold (dwarf_estimate); 0: unused */
	bool dwarf_counted;		/* in sym->dwarf_bytes */
	Elf *read_elf;			/* ... its Elf and fd until sym_find_elf hands them over */
	int read_fd;
};

/* One resolved address of a module (direct-mapped: a collision replaces the entry). */
struct sym_cached {
	uint64_t serial;		/* module's serial; 0: empty */
	GElf_Addr dwaddr;
	char *symbol;			/* display name, NULL: none */
	uint64_t offset;		/* dwaddr - function start */
	char *file;
	int line;
};

struct sym_image {
	uint64_t id;
	struct proc_maps maps;		/* executable mappings only */
	struct sym_module **map_mod;	/* parallel to maps.v, not owning; NULL: no module */
	struct sym_module **mods;	/* distinct modules, one reference each */
	size_t nmods;
	uint64_t last_use;
	struct sym_image *next;		/* hash chain */
};

struct symbolizer {
	struct sym_module *mods[SYM_MAX_MODULES];
	size_t nmods;
	struct sym_image *buckets[SYM_IMAGE_BUCKETS];
	size_t nimages;
	uint64_t tick;
	uint64_t page_size;
	uint64_t next_serial;
	struct sym_cached *cache;	/* SYM_CACHE_SLOTS */
	size_t cache_used;
	struct sym_missing_module *missing;	/* found without symbols, not yet taken */
	size_t n_missing;
	uint64_t read_bytes;		/* of the modules read, not mapped */
	uint64_t refused;		/* modules not loaded: over SYM_MAX_READ_BYTES */
	uint64_t dwarf_bytes;		/* of the modules whose DWARF was used */
	uint64_t dwarf_max_bytes;	/* SYM_MAX_DWARF_BYTES unless a test set it */
	uint64_t dwarf_closed;		/* modules closed to keep within it */
	struct file_id failed[SYM_FAILED_FILES];	/* files not opened by name lately */
	size_t next_failed;
};

/*
 * The main file of a module read, not mapped: the Elf module_new opened (ELF_C_READ), and
 * its descriptor, both libdwfl's from now on.  A module reported with its descriptor never
 * gets here; no file is ever looked for by name.
 */
static int sym_find_elf(Dwfl_Module *mod, void **userdata, const char *modname,
			Dwarf_Addr base, char **file_name, Elf **elfp)
{
	struct sym_module *m = userdata ? *userdata : NULL;
	int fd;

	if (!m || !m->read_elf)
		return -1;
	/* The name the process saw: sym_find_debuginfo() looks in the debug directory by it. */
	*file_name = modname ? strdup(modname) : NULL;
	*elfp = m->read_elf;
	fd = m->read_fd;
	m->read_elf = NULL;
	m->read_fd = -1;
	return fd;
}

/*
 * May the file open at fd be mapped?  Only if nobody but root can change it: owned by root,
 * writable by no group or other user (nor by an ACL entry: its mask is the group bits), on
 * a local file system (a FUSE daemon, a network server could shrink it under us).
 */
static bool file_root_only(int fd, struct stat *st)
{
	static const long remote[] = { FUSE_SUPER_MAGIC, NFS_SUPER_MAGIC, V9FS_MAGIC,
				       CEPH_SUPER_MAGIC, 0xff534d42 /* CIFS */,
				       0xfe534d42 /* SMB2 */ };
	struct statfs sf;

	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_uid != 0 ||
	    (st->st_mode & (S_IWGRP | S_IWOTH)) || fstatfs(fd, &sf))
		return false;
	for (size_t i = 0; i < sizeof(remote) / sizeof(remote[0]); i++)
		if ((long)sf.f_type == remote[i])
			return false;
	return true;
}

/* Does the ELF file in fd carry this build id? */
static bool file_has_build_id(int fd, const unsigned char *id, int len)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	const void *got;
	bool same;
	ssize_t n;

	if (!elf)
		return false;
	n = dwelf_elf_gnu_build_id(elf, &got);
	same = n == len && !memcmp(got, id, (size_t)len);
	elf_end(elf);
	return same;
}

/* Is the CRC-32 of the whole file in fd `want` (the .gnu_debuglink check)? */
static bool file_has_crc(int fd, uint32_t want)
{
	static unsigned char buf[65536];
	uLong crc = crc32(0, NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		crc = crc32(crc, buf, (uInt)n);
		off += n;
	}
	return n == 0 && crc == want;
}

/*
 * Open a debug file at path (in the debug directory: root's) when it is a regular file of
 * this module: the same build id when the module has one, else the debuglink's CRC.  libdw
 * maps it: only a file nobody but root can change.  fd or -1.
 */
static int open_debug_file(const char *path, const unsigned char *id, int id_len, uint32_t crc)
{
	struct stat st;
	int fd;

	if (safe_open(AT_FDCWD, path, SAFE_NOFOLLOW, NULL, &fd))
		return -1;
	if (file_root_only(fd, &st) &&
	    (id_len > 0 ? file_has_build_id(fd, id, id_len) : file_has_crc(fd, crc)))
		return fd;
	close(fd);
	return -1;
}

/* "/usr/lib/debug/.build-id/xx/yyyy.debug" for a build id.  0, or -1 if it does not fit. */
static int build_id_path(const unsigned char *id, int len, char *buf, size_t size)
{
	size_t n;
	int i;

	if (len < 2 || len > SYM_MAX_BUILD_ID)
		return -1;
	n = (size_t)snprintf(buf, size, SYM_DEBUG_DIR "/.build-id/%02x/", id[0]);
	for (i = 1; i < len && n + 2 < size; i++)
		n += (size_t)snprintf(buf + n, size - n, "%02x", id[i]);
	return snprintf(buf + n, size - n, ".debug") >= (int)(size - n) ? -1 : 0;
}

/* A plain file name: not empty, no '/', not "." or "..". */
static bool plain_name(const char *s)
{
	return *s && !strchr(s, '/') && strcmp(s, ".") && strcmp(s, "..");
}

/* An absolute path none of whose components is "." or "..". */
static bool clean_path(const char *p)
{
	const char *c;

	if (p[0] != '/')
		return false;
	for (c = p; (c = strstr(c, "/.")); c++) {
		if (c[2] == '/' || !c[2] || (c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	}
	return true;
}

/*
 * libdwfl's search for separate debug information.  The standard one looks where the
 * traced program's ELF points (its .gnu_debuglink name may climb out with "../", relative to
 * the path the process saw, resolved here) and opens with a blocking open(): a FIFO there
 * hangs leaktop.  This one looks in the debug directory only: by build id, then
 * /usr/lib/debug/DIR/NAME for a module at DIR/FILE with a plain debuglink NAME, each
 * opened by safe_open and checked against the module.  It never leaves a file name behind
 * (libdwfl would open that itself).  Requests without a CRC are dwz (.gnu_debugaltlink)
 * files: module_dwarf_usable() serves those.
 */
static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			      Dwarf_Addr base, const char *file_name, const char *debuglink_file,
			      GElf_Word debuglink_crc, char **debuginfo_file_name)
{
	const unsigned char *id = NULL;
	const char *main_name = file_name ? file_name : modname;
	char path[PATH_MAX];
	GElf_Addr id_vaddr;
	const char *slash;
	int id_len, fd;

	*debuginfo_file_name = NULL;
	if (debuglink_file && !debuglink_crc)
		return -1;
	id_len = dwfl_module_build_id(mod, &id, &id_vaddr);
	fd = -1;
	if (id_len > 0 && !build_id_path(id, id_len, path, sizeof(path)))
		fd = open_debug_file(path, id, id_len, 0);
	if (fd < 0 && debuglink_file && plain_name(debuglink_file) && main_name &&
	    clean_path(main_name)) {
		slash = strrchr(main_name, '/');
		if (snprintf(path, sizeof(path), SYM_DEBUG_DIR "%.*s/%s", (int)(slash - main_name),
			     main_name, debuglink_file) < (int)sizeof(path))
			fd = open_debug_file(path, id_len > 0 ? id : NULL, id_len > 0 ? id_len : 0,
					     debuglink_crc);
	}
	/* The module's userdata is its struct sym_module (module_new). */
	if (fd >= 0 && userdata && *userdata)
		((struct sym_module *)*userdata)->debug_found = true;
	return fd;
}

static const Dwfl_Callbacks sym_dwfl_callbacks = {
	.find_elf = sym_find_elf,
	.find_debuginfo = sym_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static void module_free(struct sym_module *m)
{
	if (!m)
		return;
	if (m->dwfl)
		dwfl_end(m->dwfl);	/* closes the file descriptor it was given */
	if (m->alt)
		dwarf_end(m->alt);	/* after the Dwarf that used it */
	if (m->alt_fd >= 0)
		close(m->alt_fd);
	if (m->read_elf)
		elf_end(m->read_elf);	/* never handed over to libdwfl */
	if (m->read_fd >= 0)
		close(m->read_fd);
	sym_index__free(m->index);
	free(m->segs);
	free(m->path);
	free(m->build_id);
	free(m);
}

/* Close module i of sym's (no image references it) and forget what it held. */
static void module_drop(struct symbolizer *sym, size_t i)
{
	sym->read_bytes -= sym->mods[i]->read_bytes;
	if (sym->mods[i]->dwarf_counted)
		sym->dwarf_bytes -= sym->mods[i]->dwarf_bytes;
	module_free(sym->mods[i]);
	sym->mods[i] = sym->mods[--sym->nmods];
}

/*
 * Open the file of mapping `map` of process `pid`: through /proc/PID/map_files, else its
 * path inside /proc/PID/root; `exe`: the process's executable, through /proc/PID/exe (pid >
 * 0), else its path here; no process and not `exe`: its path here, a last component that is
 * a link refused.  Either way only the regular file with the mapping's device and inode.
 * fd, or -errno (-ESTALE, -EINVAL: refused).
 */
static int module_open_file(int pid, const struct proc_map *map, bool exe)
{
	const struct file_id want = { .dev = map->dev, .ino = map->ino };
	char path[64];
	int fd, err = -ENOENT;

	if (pid > 0 && !exe) {
		err = safe_open__mapped(pid, map->start, map->end, map->deleted ? NULL : map->path,
					&want, &fd);
		return err ? err : fd;
	}
	/*
	 * No process (gone): the name BPF built from the file's dentries, which name no link.
	 * It is the name in the mount namespace of the process that mapped it, which may have
	 * its own /proc: a name there is never looked up through leaktop's procfs (safe_open
	 * trusts /proc/ names: its callers make them).
	 */
	if (!exe) {
		if (!map->path || map->path[0] != '/' || map->deleted ||
		    !strncmp(map->path, "/proc/", 6))
			return err;
		err = safe_open(AT_FDCWD, map->path, SAFE_NOFOLLOW, &want, &fd);
		return err ? err : fd;
	}
	if (pid > 0) {
		snprintf(path, sizeof(path), "/proc/%d/exe", pid);
		err = safe_open(AT_FDCWD, path, SAFE_FOLLOW, &want, &fd);
		if (!err)
			return fd;
	}
	if (!exe || !map->path || map->path[0] != '/' || map->deleted)
		return err;
	err = safe_open(AT_FDCWD, map->path, SAFE_FOLLOW, &want, &fd);
	return err ? err : fd;
}

/* The module's build id as lower-case hex into m->build_id (left NULL if none). */
static void module_note_build_id(struct sym_module *m)
{
	const unsigned char *id;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(m->mod, &id, &vaddr), i;

	if (len <= 0 || len > SYM_MAX_BUILD_ID)
		return;
	m->build_id = malloc((size_t)len * 2 + 1);
	for (i = 0; m->build_id && i < len; i++)
		sprintf(m->build_id + 2 * i, "%02x", id[i]);
}

/*
 * Which symbol tables the file itself has: .symtab, and MiniDebugInfo (.gnu_debugdata: an
 * xz-compressed ELF holding a .symtab of the functions .dynsym lacks, as Fedora ships),
 * which libdwfl (built with liblzma) reads as its auxiliary symbol table.
 */
static void module_note_sections(struct sym_module *m, Elf *elf)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name;

		if (!sh)
			continue;
		if (sh->sh_type == SHT_SYMTAB)
			m->has_symtab = true;
		name = elf_strptr(elf, shstrndx, sh->sh_name);
		if (name && !strcmp(name, ".gnu_debugdata"))
			m->has_debugdata = true;
	}
}

/*
 * The address range to report a module read, not mapped, with: from its first PT_LOAD's
 * aligned start (as libdwfl takes it: the bias it finds is 0) to the end of its last.
 */
static int load_range(Elf *elf, GElf_Addr *low, GElf_Addr *high)
{
	size_t nphdr;
	bool first = true;

	*low = *high = 0;
	if (elf_getphdrnum(elf, &nphdr))
		return -ENOEXEC;
	for (size_t i = 0; i < nphdr; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		if (first)
			*low = ph->p_vaddr & -ph->p_align;
		first = false;
		if (ph->p_vaddr + ph->p_memsz > *high && ph->p_vaddr + ph->p_memsz >= ph->p_vaddr)
			*high = ph->p_vaddr + ph->p_memsz;
	}
	return *high > *low ? 0 : -ENOEXEC;
}

/* The size a compressed section (SHF_COMPRESSED, or GNU's .zdebug) inflates to, or 0. */
static uint64_t inflated_size(int fd, const GElf_Shdr *sh, const char *name)
{
	unsigned char b[sizeof(Elf64_Chdr)];
	Elf64_Chdr ch;
	uint64_t n = 0;

	if (sh->sh_flags & SHF_COMPRESSED) {
		if (pread(fd, &ch, sizeof(ch), (off_t)sh->sh_offset) != (ssize_t)sizeof(ch))
			return UINT64_MAX;
		return ch.ch_size;
	}
	if (!name || strncmp(name, ".zdebug", 7))
		return 0;
	/* "ZLIB" and the size, big-endian. */
	if (pread(fd, b, 12, (off_t)sh->sh_offset) != 12 || memcmp(b, "ZLIB", 4))
		return 0;
	for (int i = 4; i < 12; i++)
		n = n << 8 | b[i];
	return n;
}

/*
 * What libdwfl may read of a module read, not mapped: every section but the loaded code
 * and data (symbol and string tables, notes, DWARF, .gnu_debugdata), compressed ones at the
 * size they inflate to; the whole file when it has no section headers.
 */
static uint64_t read_estimate(Elf *elf, int fd, uint64_t file_bytes)
{
	uint64_t total = 0, inflated;
	Elf_Scn *scn = NULL;
	size_t shnum, shstrndx;

	if (elf_getshdrnum(elf, &shnum) || !shnum || elf_getshdrstrndx(elf, &shstrndx))
		return file_bytes;
	total = shnum * sizeof(Elf64_Shdr);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);

		if (!sh)
			return file_bytes;
		if (sh->sh_type == SHT_NOBITS ||
		    ((sh->sh_flags & SHF_ALLOC) && (sh->sh_type == SHT_PROGBITS ||
						    sh->sh_type == SHT_INIT_ARRAY ||
						    sh->sh_type == SHT_FINI_ARRAY)))
			continue;
		inflated = inflated_size(fd, sh, elf_strptr(elf, shstrndx, sh->sh_name));
		total += inflated > sh->sh_size ? inflated : sh->sh_size;
		if (total >= UINT64_MAX / 2)
			return UINT64_MAX / 2;
	}
	return total;
}

/*
 * Make room for a module read, not mapped, that may read `bytes`: evict the least recently
 * used read modules no image references.  0, or -EFBIG/-ENOSPC (refused, counted).
 */
static int read_room(struct symbolizer *sym, uint64_t bytes)
{
	while (bytes <= SYM_MAX_READ_BYTES && sym->read_bytes + bytes > SYM_MAX_READ_BYTES) {
		size_t victim = SYM_MAX_MODULES;

		for (size_t i = 0; i < sym->nmods; i++) {
			const struct sym_module *m = sym->mods[i];

			if (m->refs || !m->read_bytes)
				continue;
			if (victim == SYM_MAX_MODULES || m->last_use < sym->mods[victim]->last_use)
				victim = i;
		}
		if (victim == SYM_MAX_MODULES)
			break;
		module_drop(sym, victim);
	}
	if (bytes <= SYM_MAX_READ_BYTES && sym->read_bytes + bytes <= SYM_MAX_READ_BYTES)
		return 0;
	sym->refused++;
	return bytes > SYM_MAX_READ_BYTES ? -EFBIG : -ENOSPC;
}

/*
 * Report the file open at fd (its owner may change it) to m->dwfl, read, never mapped: an
 * Elf opened with ELF_C_READ, which sym_find_elf hands to libdwfl.  Takes fd.  0 or -errno.
 */
static int module_report_read(struct symbolizer *sym, struct sym_module *m, const char *name,
			      int fd, const struct stat *st)
{
	GElf_Addr low, high;
	uint64_t bytes;
	int err;

	m->read_fd = fd;
	m->read_elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!m->read_elf || elf_kind(m->read_elf) != ELF_K_ELF ||
	    load_range(m->read_elf, &low, &high))
		return -ENOEXEC;
	bytes = read_estimate(m->read_elf, fd, (uint64_t)st->st_size);
	err = read_room(sym, bytes);
	if (err)
		return err;
	m->mod = dwfl_report_module(m->dwfl, name ? name : "", low, high);
	if (!m->mod)
		return -ENOEXEC;
	m->read_bytes = bytes ? bytes : 1;
	return 0;
}

/*
 * Loads the module for mapping `map` of `pid` (`exe`: see module_open_file): mapped when
 * only root can change the file, else read (module_report_read).  0 or -errno.
 */
static int module_new(struct symbolizer *sym, int pid, const struct proc_map *map, bool exe,
		      struct sym_module **out)
{
	struct sym_module *m;
	size_t i, nphdr;
	void **userdata = NULL;
	struct stat st;
	Elf *elf;
	int fd, err;

	*out = NULL;
	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	m->dev = map->dev;
	m->ino = map->ino;
	m->alt_fd = m->read_fd = -1;
	m->path = map->path ? strdup(map->path) : NULL;
	if (map->path && !m->path) {
		err = -ENOMEM;
		goto out;
	}

	fd = module_open_file(pid, map, exe);
	if (fd < 0) {
		err = fd;
		goto out;
	}
	m->dwfl = dwfl_begin(&sym_dwfl_callbacks);
	if (!m->dwfl) {
		close(fd);
		err = -ENOMEM;
		goto out;
	}
	dwfl_report_begin(m->dwfl);
	/*
	 * Base 0: module addresses are the ELF's own virtual addresses (up to the bias
	 * read back below, non-zero only for an ET_DYN whose first PT_LOAD is not at 0).
	 * The path is the file name the process saw; it only serves sym_find_debuginfo (as
	 * a directory under the debug directory), the file itself is read through fd, which
	 * the Dwfl now owns.
	 */
	if (file_root_only(fd, &st)) {
		m->mod = dwfl_report_elf(m->dwfl, map->path, map->path, fd, 0, false);
		if (!m->mod) {
			close(fd);
			err = -ENOEXEC;
			goto out;
		}
	} else {
		err = module_report_read(sym, m, map->path, fd, &st);
		if (err)
			goto out;
	}
	if (dwfl_report_end(m->dwfl, NULL, NULL)) {
		err = -ENOEXEC;
		goto out;
	}
	/*
	 * sym_find_debuginfo() notes in the module that it found a debug file; sym_find_elf()
	 * hands over the Elf of a file read, at dwfl_module_getelf() below.
	 */
	dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (userdata)
		*userdata = m;
	elf = dwfl_module_getelf(m->mod, &m->bias);
	if (!elf || elf_getphdrnum(elf, &nphdr)) {
		err = -ENOEXEC;
		goto out;
	}
	module_note_sections(m, elf);
	m->segs = calloc(nphdr ?: 1, sizeof(*m->segs));
	if (!m->segs) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nphdr; i++) {
		GElf_Phdr mem, *ph = gelf_getphdr(elf, (int)i, &mem);

		if (!ph || ph->p_type != PT_LOAD)
			continue;
		m->segs[m->nsegs].offset = ph->p_offset;
		m->segs[m->nsegs].filesz = ph->p_filesz;
		m->segs[m->nsegs].vaddr = ph->p_vaddr;
		m->segs[m->nsegs].exec = ph->p_flags & PF_X;
		m->nsegs++;
	}
	module_note_build_id(m);
	err = m->nsegs ? 0 : -ENOEXEC;
out:
	if (err)
		module_free(m);
	else
		*out = m;
	return err;
}

/* ELF virtual address of file offset `off`, through the PT_LOAD that maps it.  0 or -ENOENT. */
static int module_off_to_vaddr(const struct sym_module *m, uint64_t page_size, uint64_t off,
			       uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < m->nsegs; i++) {
		const struct sym_segment *s = &m->segs[i];

		if (off >= s->offset && off - s->offset < s->filesz) {
			*vaddr = off - s->offset + s->vaddr;
			return 0;
		}
	}
	/* The kernel maps whole pages: accept the page slack around a segment too. */
	for (i = 0; i < m->nsegs; i++) {
		const struct sym_segment *s = &m->segs[i];
		uint64_t lo = s->offset & ~(page_size - 1);
		uint64_t hi = (s->offset + s->filesz + page_size - 1) & ~(page_size - 1);

		if (off >= lo && off < hi) {
			*vaddr = off - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

/* Takes a reference on the module of `map`, loading it if needed.  0 or -errno. */
static int module_get(struct symbolizer *sym, int pid, const struct proc_map *map, bool exe,
		      struct sym_module **out)
{
	struct sym_module *m = NULL;
	size_t i, victim = SYM_MAX_MODULES;
	int err;

	*out = NULL;
	for (i = 0; i < sym->nmods; i++) {
		if (sym->mods[i]->dev == map->dev && sym->mods[i]->ino == map->ino) {
			m = sym->mods[i];
			err = 0;
			goto out;
		}
	}
	if (sym->nmods == SYM_MAX_MODULES) {
		/* Evict the least recently used module no image references. */
		for (i = 0; i < sym->nmods; i++) {
			if (sym->mods[i]->refs)
				continue;
			if (victim == SYM_MAX_MODULES ||
			    sym->mods[i]->last_use < sym->mods[victim]->last_use)
				victim = i;
		}
		if (victim == SYM_MAX_MODULES) {
			err = -ENOSPC;
			goto out;
		}
		module_drop(sym, victim);
	}
	err = module_new(sym, pid, map, exe, &m);
	if (err)
		goto out;
	sym->read_bytes += m->read_bytes;
	m->serial = ++sym->next_serial;
	sym->mods[sym->nmods++] = m;
out:
	if (m) {
		m->refs++;
		m->last_use = ++sym->tick;
		*out = m;
	}
	return err;
}

static void image_release(struct sym_image *img)
{
	size_t i;

	for (i = 0; i < img->nmods; i++)
		img->mods[i]->refs--;
	free(img->mods);
	free(img->map_mod);
	procmaps__free(&img->maps);
	img->mods = NULL;
	img->map_mod = NULL;
	img->nmods = 0;
}

static size_t image_bucket(uint64_t id)
{
	return (size_t)((id * 0x9e3779b97f4a7c15ULL) >> 32) & (SYM_IMAGE_BUCKETS - 1);
}

static struct sym_image **image_slot(struct symbolizer *sym, uint64_t id)
{
	struct sym_image **pp = &sym->buckets[image_bucket(id)];

	while (*pp && (*pp)->id != id)
		pp = &(*pp)->next;
	return pp;
}

static void image_remove(struct symbolizer *sym, struct sym_image **pp)
{
	struct sym_image *img = *pp;

	*pp = img->next;
	image_release(img);
	free(img);
	sym->nimages--;
}

static void image_evict_oldest(struct symbolizer *sym)
{
	struct sym_image **victim = NULL, **pp;
	size_t b;

	for (b = 0; b < SYM_IMAGE_BUCKETS; b++) {
		for (pp = &sym->buckets[b]; *pp; pp = &(*pp)->next) {
			if (!victim || (*pp)->last_use < (*victim)->last_use)
				victim = pp;
		}
	}
	if (victim)
		image_remove(sym, victim);
}

struct symbolizer *symbolizer__new(void)
{
	struct symbolizer *sym = calloc(1, sizeof(*sym));
	long ps = sysconf(_SC_PAGESIZE);

	if (!sym)
		return NULL;
	sym->cache = calloc(SYM_CACHE_SLOTS, sizeof(*sym->cache));
	if (!sym->cache) {
		free(sym);
		return NULL;
	}
	sym->page_size = ps > 0 ? (uint64_t)ps : 4096;
	sym->dwarf_max_bytes = SYM_MAX_DWARF_BYTES;
	return sym;
}

static void cached_clear(struct sym_cached *c)
{
	free(c->symbol);
	free(c->file);
	memset(c, 0, sizeof(*c));
}

void symbolizer__free(struct symbolizer *sym)
{
	size_t b, i;

	if (!sym)
		return;
	for (b = 0; b < SYM_IMAGE_BUCKETS; b++) {
		while (sym->buckets[b])
			image_remove(sym, &sym->buckets[b]);
	}
	for (i = 0; i < sym->nmods; i++)
		module_free(sym->mods[i]);
	for (i = 0; i < SYM_CACHE_SLOTS; i++)
		cached_clear(&sym->cache[i]);
	free(sym->cache);
	sym_missing_module__free(sym->missing, sym->n_missing);
	free(sym);
}

void symbolizer__stats(const struct symbolizer *sym, struct sym_stats *out)
{
	out->images = sym->nimages;
	out->modules = sym->nmods;
	out->cache_entries = sym->cache_used;
	out->read_modules = 0;
	for (size_t i = 0; i < sym->nmods; i++)
		out->read_modules += sym->mods[i]->read_bytes > 0;
	out->read_bytes = sym->read_bytes;
	out->refused = sym->refused;
	out->dwarf_bytes = sym->dwarf_bytes;
	out->dwarf_closed = sym->dwarf_closed;
}

void symbolizer__set_dwarf_max(struct symbolizer *sym, uint64_t bytes)
{
	sym->dwarf_max_bytes = bytes;
}

static bool pid_alive(int pid)
{
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) == 0;
}

int symbolizer__add_image(struct symbolizer *sym, uint64_t image_id, int pid)
{
	struct sym_image new = { .id = image_id }, **pp, *img;
	struct proc_maps all = {};
	bool open_failed = false;
	size_t i, j, nexec = 0;
	int err;

	err = procmaps__read(pid, &all);
	if (err)
		goto out;
	/* Exiting (its memory is gone, a zombie reads empty maps) or a kernel thread. */
	if (!all.n) {
		err = -ESRCH;
		goto out;
	}

	/* Keep the executable mappings only: every frame of a stack is in one. */
	for (i = 0; i < all.n; i++)
		nexec += all.v[i].executable;
	new.maps.v = calloc(nexec ?: 1, sizeof(*new.maps.v));
	new.map_mod = calloc(nexec ?: 1, sizeof(*new.map_mod));
	new.mods = calloc(nexec ?: 1, sizeof(*new.mods));
	if (!new.maps.v || !new.map_mod || !new.mods) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < all.n; i++) {
		if (!all.v[i].executable)
			continue;
		new.maps.v[new.maps.n++] = all.v[i];
		all.v[i].path = NULL;		/* moved */
	}

	pp = image_slot(sym, image_id);
	if (!*pp && sym->nimages >= SYM_MAX_IMAGES) {
		image_evict_oldest(sym);
		pp = image_slot(sym, image_id);
	}

	for (i = 0; i < new.maps.n; i++) {
		const struct proc_map *map = &new.maps.v[i];
		struct sym_module *m = NULL;

		if (!map->path || map->path[0] != '/')
			continue;
		for (j = 0; j < new.nmods; j++) {
			if (new.mods[j]->dev == map->dev && new.mods[j]->ino == map->ino) {
				m = new.mods[j];
				break;
			}
		}
		if (!m) {
			if (module_get(sym, pid, map, false, &m)) {
				open_failed = true;	/* unsymbolized, not fatal */
				continue;
			}
			new.mods[new.nmods++] = m;
		}
		new.map_mod[i] = m;
	}
	/* A file that could not be opened because the process is gone: report that. */
	if (open_failed && !pid_alive(pid)) {
		err = -ESRCH;
		goto out;
	}

	img = *pp;
	if (img) {
		image_release(img);		/* after taking the new references */
	} else {
		img = calloc(1, sizeof(*img));
		if (!img) {
			err = -ENOMEM;
			goto out;
		}
		*pp = img;
		sym->nimages++;
	}
	new.next = img->next;
	new.last_use = ++sym->tick;
	*img = new;
	memset(&new, 0, sizeof(new));
out:
	image_release(&new);
	procmaps__free(&all);
	return err;
}

/* Insert a fully built image under its id (replacing any).  0 or -ENOMEM. */
static int image_insert(struct symbolizer *sym, struct sym_image *new)
{
	struct sym_image **pp = image_slot(sym, new->id), *img;

	if (!*pp && sym->nimages >= SYM_MAX_IMAGES) {
		image_evict_oldest(sym);
		pp = image_slot(sym, new->id);
	}
	img = *pp;
	if (img) {
		image_release(img);
	} else {
		img = calloc(1, sizeof(*img));
		if (!img)
			return -ENOMEM;
		*pp = img;
		sym->nimages++;
	}
	new->next = img->next;
	new->last_use = ++sym->tick;
	*img = *new;
	memset(new, 0, sizeof(*new));
	return 0;
}

int symbolizer__clone_image(struct symbolizer *sym, uint64_t image_id, uint64_t from_id)
{
	struct sym_image *src = *image_slot(sym, from_id), new = { .id = image_id };
	size_t i, n;
	int err = 0;

	if (!src)
		return -ENOENT;
	n = src->maps.n;
	new.maps.v = calloc(n ?: 1, sizeof(*new.maps.v));
	new.map_mod = calloc(n ?: 1, sizeof(*new.map_mod));
	new.mods = calloc(src->nmods ?: 1, sizeof(*new.mods));
	if (!new.maps.v || !new.map_mod || !new.mods) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < n; i++) {
		new.maps.v[i] = src->maps.v[i];
		new.maps.v[i].path = src->maps.v[i].path ? strdup(src->maps.v[i].path) : NULL;
		new.maps.n++;
		new.map_mod[i] = src->map_mod[i];
	}
	for (i = 0; i < src->nmods; i++) {
		new.mods[new.nmods++] = src->mods[i];
		src->mods[i]->refs++;
	}
	err = image_insert(sym, &new);
out:
	image_release(&new);
	return err;
}

int symbolizer__add_exe_image(struct symbolizer *sym, uint64_t image_id, int pid,
			      const char *path, const struct file_id *id, uint64_t start_code,
			      uint64_t end_code)
{
	struct sym_image new = { .id = image_id };
	struct proc_map map = { .start = start_code, .end = end_code, .executable = true,
				.readable = true };
	struct sym_module *m = NULL;
	int err = 0;
	size_t i;

	if (!path || !id || !id->ino || start_code >= end_code)
		return -ENOENT;
	map.dev = id->dev;
	map.ino = id->ino;
	map.path = strdup(path);
	if (!map.path)
		return -ENOMEM;
	err = module_get(sym, pid, &map, true, &m);
	if (err)
		goto out;
	/*
	 * The kernel's start_code is the executable PT_LOAD's address plus the load bias:
	 * find that segment (the lowest one whose file range the code can come from) and
	 * make the mapping start there.
	 */
	map.file_offset = UINT64_MAX;
	for (i = 0; i < m->nsegs; i++)
		if (m->segs[i].exec)
			map.file_offset = m->segs[i].offset;
	if (map.file_offset == UINT64_MAX) {
		err = -ENOEXEC;
		goto out;
	}
	new.maps.v = calloc(1, sizeof(*new.maps.v));
	new.map_mod = calloc(1, sizeof(*new.map_mod));
	new.mods = calloc(1, sizeof(*new.mods));
	if (!new.maps.v || !new.map_mod || !new.mods) {
		err = -ENOMEM;
		goto out;
	}
	new.maps.v[0] = map;
	map.path = NULL;
	new.maps.n = 1;
	new.map_mod[0] = m;
	new.mods[new.nmods++] = m;
	m = NULL;
	err = image_insert(sym, &new);
out:
	if (m)
		m->refs--;
	free(map.path);
	image_release(&new);
	return err;
}

bool symbolizer__has_image(struct symbolizer *sym, uint64_t image_id)
{
	return *image_slot(sym, image_id) != NULL;
}

void symbolizer__drop_image(struct symbolizer *sym, uint64_t image_id)
{
	struct sym_image **pp = image_slot(sym, image_id);

	if (*pp)
		image_remove(sym, pp);
}

/* Function name for display: version suffix ("@GLIBC_2.2.5") dropped, C++ demangled. */
static char *symbol_name(const char *name)
{
	size_t len = strcspn(name, "@");
	char *plain, *demangled;
	int status = -1;

	plain = strndup(name, len ?: strlen(name));
	if (!plain || strncmp(plain, "_Z", 2))
		return plain;
	demangled = __cxa_demangle(plain, NULL, NULL, &status);
	if (!demangled || status) {
		free(demangled);
		return plain;
	}
	free(plain);
	return demangled;
}

static struct sym_cached *cache_slot(struct symbolizer *sym, uint64_t serial, GElf_Addr dwaddr)
{
	uint64_t h = (serial * 0x9e3779b97f4a7c15ULL) ^ (dwaddr * 0xc2b2ae3d27d4eb4fULL);

	return &sym->cache[(h >> 29) & (SYM_CACHE_SLOTS - 1)];
}

/*
 * The module's dwz file (.gnu_debugaltlink), from the debug directory only: by the build id
 * it names, or by its name when that is a clean path in the debug directory.
 */
static void module_find_alt(struct sym_module *m, const char *name, const unsigned char *id,
			    int id_len)
{
	char path[PATH_MAX];
	int fd = -1;

	if (!build_id_path(id, id_len, path, sizeof(path)))
		fd = open_debug_file(path, id, id_len, 0);
	if (fd < 0 && clean_path(name) && !strncmp(name, SYM_DEBUG_DIR "/",
						   sizeof(SYM_DEBUG_DIR)))
		fd = open_debug_file(name, id, id_len, 0);
	if (fd < 0)
		return;
	m->alt = dwarf_begin(fd, DWARF_C_READ);
	if (m->alt)
		m->alt_fd = fd;
	else
		close(fd);
}

/*
 * May the module's DWARF be used?  libdw opens the dwz file itself when an attribute refers
 * to it, with a blocking open() of the name the DWARF gives (absolute, or relative to the
 * file).  So the dwz file is given to it from the debug directory beforehand, and DWARF
 * whose dwz file is not found there is not used (the symbol table still names the
 * functions).  (Split units' .dwo files, which libdw opens the same way, are not reached:
 * their skeletons keep the line tables.)
 */
static bool module_dwarf_usable(struct sym_module *m)
{
	const char *alt_name;
	const void *alt_id;
	Dwarf_Addr bias;
	ssize_t len;
	Dwarf *dw;

	dw = dwfl_module_getdwarf(m->mod, &bias);
	if (!dw)
		return false;
	len = dwelf_dwarf_gnu_debugaltlink(dw, &alt_name, &alt_id);
	if (len < 0 || len > SYM_MAX_BUILD_ID)
		return false;
	if (len > 0) {
		module_find_alt(m, alt_name, alt_id, (int)len);
		if (!m->alt)
			return false;
		dwarf_setalt(dw, m->alt);
	}
	return true;
}

/*
 * What the DWARF sections of elf may come to in memory: their sizes, compressed ones at the
 * size they inflate to (libdw inflates them into memory; the units and line tables it parses
 * from them grow with them).
 */
static uint64_t dwarf_sections_bytes(Elf *elf)
{
	Elf_Scn *scn = NULL;
	uint64_t total = 0;
	size_t shstrndx;

	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return 0;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr mem, *sh = gelf_getshdr(scn, &mem);
		const char *name = sh ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
		GElf_Chdr ch;

		if (!name || (strncmp(name, ".debug_", 7) && strncmp(name, ".zdebug_", 8)))
			continue;
		if ((sh->sh_flags & SHF_COMPRESSED) && gelf_getchdr(scn, &ch))
			total += ch.ch_size;
		else
			total += sh->sh_size;
	}
	return total;
}

/* What the module's DWARF (and its dwz file's) may hold in memory once used. */
static uint64_t dwarf_estimate(struct sym_module *m)
{
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(m->mod, &bias);
	uint64_t n = dw ? dwarf_sections_bytes(dwarf_getelf(dw)) : 0;

	if (m->alt)
		n += dwarf_sections_bytes(dwarf_getelf(m->alt));
	return n ? n : 1;
}

/*
 * Keep the DWARF of modules within sym->dwarf_max_bytes: close the least recently used
 * modules with DWARF in use that no image references, never `keep` (being looked up in).
 */
static void dwarf_room(struct symbolizer *sym, const struct sym_module *keep)
{
	while (sym->dwarf_bytes > sym->dwarf_max_bytes) {
		size_t victim = SYM_MAX_MODULES;

		for (size_t i = 0; i < sym->nmods; i++) {
			const struct sym_module *m = sym->mods[i];

			if (m == keep || m->refs || !m->dwarf_counted)
				continue;
			if (victim == SYM_MAX_MODULES || m->last_use < sym->mods[victim]->last_use)
				victim = i;
		}
		if (victim == SYM_MAX_MODULES)
			return;
		module_drop(sym, victim);
		sym->dwarf_closed++;
	}
}

/* Look `dwaddr` up in the module's files into a cache entry.  0 or -ENOMEM. */
static int module_lookup(struct sym_module *m, GElf_Addr dwaddr, struct sym_cached *c)
{
	GElf_Addr bias;
	GElf_Off off = 0;
	GElf_Sym gsym;
	GElf_Word shndx;
	Dwfl_Line *line;
	const char *name;
	Elf *elf;

	/* The index answers as dwfl_module_addrinfo(), without reading every symbol again. */
	if (!m->index_tried) {
		m->index_tried = true;
		sym_index__build(m->mod, &m->index);
	}
	if (m->index)
		name = sym_index__lookup(m->index, m->mod, dwaddr, &off);
	else
		name = dwfl_module_addrinfo(m->mod, dwaddr, &off, &gsym, &shndx, &elf, &bias);
	if (name && *name) {
		c->symbol = symbol_name(name);
		if (!c->symbol)
			return -ENOMEM;
		c->offset = off;
	}
	if (!m->dwarf_checked) {
		m->dwarf_usable = module_dwarf_usable(m);
		m->dwarf_checked = true;
		if (m->dwarf_usable)
			m->dwarf_bytes = dwarf_estimate(m);
	}
	line = m->dwarf_usable ? dwfl_module_getsrc(m->mod, dwaddr) : NULL;
	if (line) {
		Dwarf_Addr line_addr;
		int lineno = 0;
		const char *file = dwfl_lineinfo(line, &line_addr, &lineno, NULL, NULL, NULL);

		if (file && *file) {
			c->file = strdup(file);
			if (!c->file)
				return -ENOMEM;
			c->line = lineno > 0 ? lineno : 0;
		}
	}
	return 0;
}

/* Copy a cache entry into a frame (strings duplicated).  0 or -ENOMEM. */
static int cached_copy(const struct sym_cached *c, uint64_t delta, struct sym_frame *out)
{
	if (c->symbol) {
		out->symbol = strdup(c->symbol);
		if (!out->symbol)
			return -ENOMEM;
		out->offset = c->offset + delta;
	}
	if (c->file) {
		out->file = strdup(c->file);
		if (!out->file)
			return -ENOMEM;
		out->line = c->line;
	}
	return 0;
}

/* Note a module without symbols for symbolizer__take_missing() (once; bounded, else dropped). */
static void queue_missing(struct symbolizer *sym, struct sym_module *m)
{
	struct sym_missing_module *v, *e;

	m->missing_queued = true;
	if (!m->path || sym->n_missing >= SYM_MAX_MODULES)
		return;
	v = realloc(sym->missing, (sym->n_missing + 1) * sizeof(*v));
	if (!v)
		return;
	sym->missing = v;
	e = &v[sym->n_missing];
	*e = (struct sym_missing_module){ .dev = m->dev, .ino = m->ino };
	e->path = strdup(m->path);
	e->build_id = m->build_id ? strdup(m->build_id) : NULL;
	if (!e->path || (m->build_id && !e->build_id)) {
		free(e->path);
		free(e->build_id);
		m->missing_queued = false;	/* try again at its next lookup */
		return;
	}
	sym->n_missing++;
}

void symbolizer__take_missing(struct symbolizer *sym, struct sym_missing_module **out,
			      size_t *n)
{
	*out = sym->missing;
	*n = sym->n_missing;
	sym->missing = NULL;
	sym->n_missing = 0;
}

void sym_missing_module__free(struct sym_missing_module *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i].path);
		free(v[i].build_id);
	}
	free(v);
}

/*
 * The function, file and line at file offset `off` of module m into out (module and addr
 * filled in already); delta: addr minus the address looked up.  As symbolizer__resolve_within.
 */
static int resolve_in_module(struct symbolizer *sym, struct sym_module *m, uint64_t off,
			     uint64_t delta, struct sym_budget *budget, struct sym_frame *out)
{
	struct sym_cached *slot, fresh = {};
	GElf_Addr dwaddr;
	uint64_t vaddr;
	int err = 0;

	m->last_use = sym->tick;
	if (module_off_to_vaddr(m, sym->page_size, off, &vaddr))
		goto out;
	dwaddr = vaddr + m->bias;

	slot = cache_slot(sym, m->serial, dwaddr);
	if (slot->serial == m->serial && slot->dwaddr == dwaddr) {
		if (budget)
			budget->cached++;
		err = cached_copy(slot, delta, out);
		goto out;
	}
	if (budget && budget->deadline_ns && monotonic_ns() >= budget->deadline_ns) {
		budget->deferred++;
		out->deferred = true;
		err = -EAGAIN;
		goto out;
	}
	err = module_lookup(m, dwaddr, &fresh);
	if (m->dwarf_bytes && !m->dwarf_counted) {
		m->dwarf_counted = true;
		sym->dwarf_bytes += m->dwarf_bytes;
		dwarf_room(sym, m);
	}
	if (err) {
		cached_clear(&fresh);
		goto out;
	}
	if (budget)
		budget->looked_up++;
	/* The lookup made libdwfl look for every symbol table it may use: decide now. */
	if (!m->symbols_checked) {
		m->symbols_checked = true;
		m->missing = !m->has_symtab && !m->has_debugdata && !m->debug_found;
	}
	if (m->missing && !m->missing_queued)
		queue_missing(sym, m);
	fresh.serial = m->serial;
	fresh.dwaddr = dwaddr;
	if (!slot->serial)
		sym->cache_used++;
	cached_clear(slot);
	*slot = fresh;
	err = cached_copy(slot, delta, out);
out:
	return err;
}

int symbolizer__resolve_within(struct symbolizer *sym, uint64_t image_id, uint64_t addr,
			       bool is_return_addr, struct sym_budget *budget,
			       struct sym_frame *out)
{
	struct sym_image *img;
	const struct proc_map *map;
	struct sym_module *m;
	uint64_t lookup;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	img = *image_slot(sym, image_id);
	if (!img) {
		err = -ENOENT;
		goto out;
	}
	img->last_use = ++sym->tick;
	/* A return address follows the call; addr - 1 is inside the call instruction. */
	lookup = is_return_addr && addr ? addr - 1 : addr;
	map = procmaps__find(&img->maps, lookup);
	if (!map) {
		err = -ENOENT;
		goto out;
	}
	if (map->path) {
		out->module = strdup(map->path);
		if (!out->module) {
			err = -ENOMEM;
			goto out;
		}
	}
	m = img->map_mod[map - img->maps.v];
	if (m)
		err = resolve_in_module(sym, m, lookup - map->start + map->file_offset,
					addr - lookup, budget, out);
out:
	return err;
}

/* Was the file (dev, ino) refused or not found lately (its name led elsewhere, say)? */
static bool file_failed(const struct symbolizer *sym, uint64_t dev, uint64_t ino)
{
	for (size_t i = 0; i < SYM_FAILED_FILES; i++)
		if (sym->failed[i].ino == ino && sym->failed[i].dev == dev)
			return true;
	return false;
}

int symbolizer__resolve_file(struct symbolizer *sym, uint64_t addr, const struct file_id *id,
			     const char *path, uint64_t off, bool is_return_addr,
			     struct sym_budget *budget, struct sym_frame *out)
{
	struct proc_map map = { .dev = id->dev, .ino = id->ino, .executable = true,
				.readable = true, .path = (char *)path };
	struct sym_module *m = NULL;
	uint64_t lookup = is_return_addr && off ? off - 1 : off;
	int err = 0;

	memset(out, 0, sizeof(*out));
	out->addr = addr;
	if (!id->ino)
		return -ENOENT;
	++sym->tick;
	for (size_t i = 0; i < sym->nmods && !m; i++)
		if (sym->mods[i]->dev == id->dev && sym->mods[i]->ino == id->ino)
			m = sym->mods[i];
	if (!m) {
		/* Not loaded: only by the name noted for it, if that still leads to it. */
		if (!path || file_failed(sym, id->dev, id->ino))
			return -ENOENT;
		err = module_get(sym, 0, &map, false, &m);
		if (err) {
			sym->failed[sym->next_failed++ % SYM_FAILED_FILES] =
				(struct file_id){ .dev = id->dev, .ino = id->ino };
			return -ENOENT;
		}
		m->refs--;		/* no image holds it: evictable */
	}
	if (m->path || path) {
		out->module = strdup(m->path ? m->path : path);
		if (!out->module)
			return -ENOMEM;
	}
	return resolve_in_module(sym, m, lookup, addr - (is_return_addr && addr ? addr - 1 : addr),
				 budget, out);
}

int symbolizer__resolve(struct symbolizer *sym, uint64_t image_id, uint64_t addr,
			bool is_return_addr, struct sym_frame *out)
{
	return symbolizer__resolve_within(sym, image_id, addr, is_return_addr, NULL, out);
}


char *symbolizer__build_id(void *symbolizer, const char *module)
{
	struct symbolizer *sym = symbolizer;
	const char *found = NULL;
	size_t i;

	for (i = 0; module && i < sym->nmods; i++) {
		const struct sym_module *m = sym->mods[i];

		if (!m->path || strcmp(m->path, module))
			continue;
		/* One name, several files (mount namespaces): none of them is the answer. */
		if (!m->build_id || (found && strcmp(found, m->build_id)))
			return NULL;
		found = m->build_id;
	}
	return found ? strdup(found) : NULL;
}
