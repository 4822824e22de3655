// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * pyproc.c - a CPython interpreter in a process's maps, and the layout of its structures
 * (see pyproc.h).  Only files whose name says python3 are opened (a process maps its
 * interpreter from `python3.X` or `libpython3.X.so`), each through its mapping, checked by
 * device and inode, and read with libelf (ELF_C_READ: a file truncated under us is an error).
 */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <string.h>
#include <unistd.h>

#include "live/procmaps.h"
#include "live/pyproc.h"
#include "live/safe_open.h"

/*
 * CPython 3.11's layout on x86-64 (Include/cpython/pystate.h, Include/internal/
 * pycore_frame.h, pycore_runtime.h, Include/cpython/code.h, unicodeobject.h), as gdb prints
 * the offsets from python3.11-dbg's debug information for Debian 12's python3.11 3.11.2.
 */
static const struct lt_py_proc layout_311 = {
	.ts_cframe = 56,
	.ts_native_tid = 160,
	.cframe_frame = 8,
	.frame_code = 32,
	.frame_previous = 48,
	.frame_prev_instr = 56,
	.frame_is_entry = 68,
	.code_firstlineno = 72,
	.code_filename = 112,
	.code_qualname = 128,
	.code_linetable = 136,
	.code_adaptive = 184,
	.str_length = 16,
	.str_state = 32,
	.str_ascii_data = 48,
	.str_compact_data = 72,
	.bytes_size = 16,
	.bytes_data = 32,
};
#define PY311_TSTATE_CURRENT	576	/* _PyRuntime.gilstate.tstate_current */

int pyproc__layout(uint64_t version_hex, struct lt_py_proc *out)
{
	if ((version_hex >> 16) != 0x030b)
		return -ENOTSUP;
	*out = layout_311;
	out->tstate_addr = PY311_TSTATE_CURRENT;
	return 0;
}

/* Could this file be a CPython interpreter: python3.X, libpython3.X.so...? */
static bool python_name(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && (!strncmp(base, "python3", 7) || !strncmp(base, "libpython3", 10));
}

/* The values of _PyRuntime and Py_Version in the .dynsym of elf; false if not both. */
static bool find_symbols(Elf *elf, GElf_Addr *runtime, GElf_Addr *version)
{
	Elf_Scn *scn = NULL;

	*runtime = *version = 0;
	while ((scn = elf_nextscn(elf, scn))) {
		Elf_Data *data;
		GElf_Shdr sh;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; data && i < n; i++) {
			const char *name;
			GElf_Sym s;

			if (!gelf_getsym(data, i, &s) || s.st_shndx == SHN_UNDEF || !s.st_value)
				continue;
			name = elf_strptr(elf, sh.sh_link, s.st_name);
			if (!name)
				continue;
			if (!strcmp(name, "_PyRuntime"))
				*runtime = s.st_value;
			else if (!strcmp(name, "Py_Version") && s.st_size == 8)
				*version = s.st_value;
		}
	}
	return *runtime && *version;
}

/* The file offset of virtual address v (a PT_LOAD's file bytes); false if none. */
static bool file_offset(Elf *elf, GElf_Addr v, uint64_t *off)
{
	size_t n_phdr;

	if (elf_getphdrnum(elf, &n_phdr))
		return false;
	for (size_t i = 0; i < n_phdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (v >= ph.p_vaddr && v < ph.p_vaddr + ph.p_filesz) {
			*off = v - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

/* The runtime address of file offset off of the file m maps (its mappings in maps). */
static uint64_t runtime_addr(const struct proc_maps *maps, const struct proc_map *m, uint64_t off)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct proc_map *x = &maps->v[i];

		if (x->dev != m->dev || x->ino != m->ino)
			continue;
		if (off >= x->file_offset && off < x->file_offset + (x->end - x->start))
			return x->start + (off - x->file_offset);
	}
	return 0;
}

/* The interpreter in the file open at fd (mapped as m): 0, -ENOENT if it is none. */
static int from_file(int fd, const struct proc_maps *maps, const struct proc_map *m,
		     struct lt_py_proc *out)
{
	GElf_Addr runtime, version;
	uint64_t off_rt, off_ver, version_hex = 0, at;
	int ret = -ENOENT;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -ENOENT;
	if (elf_kind(elf) != ELF_K_ELF || !find_symbols(elf, &runtime, &version) ||
	    !file_offset(elf, runtime, &off_rt) || !file_offset(elf, version, &off_ver) ||
	    pread(fd, &version_hex, sizeof(version_hex), (off_t)off_ver) != sizeof(version_hex))
		goto out;
	if (pyproc__layout(version_hex, out))
		goto out;
	at = runtime_addr(maps, m, off_rt);
	if (!at)
		goto out;
	out->tstate_addr += at;
	ret = 0;
out:
	elf_end(elf);
	return ret;
}

int pyproc__find(int pid, struct lt_py_proc *out)
{
	struct proc_maps maps = {};
	int ret = procmaps__read(pid, &maps);

	if (ret)
		return ret;
	ret = -ENOENT;
	for (size_t i = 0; i < maps.n && ret; i++) {
		const struct proc_map *m = &maps.v[i];
		struct file_id want = { .dev = m->dev, .ino = m->ino };
		int fd;

		if (!m->executable || !m->ino || m->shared || !python_name(m->path))
			continue;
		if (safe_open__mapped(pid, m->start, m->end, m->deleted ? NULL : m->path, &want,
				      &fd))
			continue;
		ret = from_file(fd, &maps, m, out);
		close(fd);
	}
	procmaps__free(&maps);
	return ret;
}
