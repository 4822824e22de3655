// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * fnrange.c - the file ranges of a named function (see fnrange.h), read with libelf from
 * files opened the safe way (user/live/safe_open.h): a traced process's files through its
 * map_files, checked by device and inode; a command's through leaktop's own namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "live/fnrange.h"
#include "live/ldlist.h"
#include "live/procmaps.h"
#include "live/safe_open.h"

/* From libstdc++ (the C++ ABI's abi::__cxa_demangle, extern "C"). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

static uint32_t kernel_dev(uint64_t dev)
{
	return (uint32_t)(major(dev) << 20 | minor(dev));
}

bool fnrange__name_matches(const char *sym, const char *want)
{
	size_t n = strcspn(sym, "@"), want_len = strlen(want);
	char plain[1024], *demangled;
	int status = -1;
	bool match;

	if (n == want_len && !strncmp(sym, want, n))
		return true;
	if (strncmp(sym, "_Z", 2) || n >= sizeof(plain))
		return false;
	memcpy(plain, sym, n);
	plain[n] = '\0';
	demangled = __cxa_demangle(plain, NULL, NULL, &status);
	if (!demangled || status)
		return false;
	/* Whole, or without its parameter list (and what follows it: " const"). */
	match = !strcmp(demangled, want) ||
		(!strncmp(demangled, want, want_len) && demangled[want_len] == '(');
	free(demangled);
	return match;
}

/* The file offset of virtual address v in an executable PT_LOAD segment; false if none. */
static bool offset_of(Elf *elf, size_t n_phdr, uint64_t v, uint64_t *off)
{
	for (size_t i = 0; i < n_phdr; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (v >= ph.p_vaddr && v < ph.p_vaddr + ph.p_filesz) {
			*off = v - ph.p_vaddr + ph.p_offset;
			return true;
		}
	}
	return false;
}

static int add_range(struct lt_stop_cfg *cfg, uint32_t kdev, uint64_t ino, uint64_t start,
		     uint64_t end)
{
	for (uint32_t i = 0; i < cfg->nranges; i++) {
		const struct lt_stop_range *r = &cfg->ranges[i];

		if (r->dev == kdev && r->ino == ino && r->start == start)
			return 0;
	}
	if (cfg->nranges >= LT_STOP_RANGES)
		return -ENOSPC;
	cfg->ranges[cfg->nranges++] = (struct lt_stop_range){ .dev = kdev, .ino = ino,
							      .start = start, .end = end };
	return 1;
}

/* The functions named `name` in one symbol table section. */
static int scan_table(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, size_t n_phdr,
		      uint32_t kdev, uint64_t ino, const char *name, struct lt_stop_cfg *cfg)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t n = sh->sh_entsize ? sh->sh_size / sh->sh_entsize : 0;
	int added = 0, ret;

	for (size_t i = 0; data && i < n; i++) {
		uint64_t start, end;
		const char *sym;
		GElf_Sym s;
		int type;

		if (!gelf_getsym(data, i, &s))
			break;
		type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    !s.st_value)
			continue;
		sym = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!sym || !fnrange__name_matches(sym, name))
			continue;
		if (!offset_of(elf, n_phdr, s.st_value, &start))
			continue;
		end = start + (s.st_size ? s.st_size : 1);
		ret = add_range(cfg, kdev, ino, start, end);
		if (ret < 0)
			return ret;
		added += ret;
	}
	return added;
}

int fnrange__of_fd(int fd, uint32_t kdev, uint64_t ino, const char *name,
		   struct lt_stop_cfg *cfg)
{
	int added = 0, ret = 0, want = SHT_SYMTAB;
	size_t n_phdr;
	Elf *elf;

	elf_version(EV_CURRENT);
	/* Read, not mapped: a file truncated under us is an error, not a SIGBUS. */
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf)
		return -EINVAL;
	if (elf_kind(elf) != ELF_K_ELF || elf_getphdrnum(elf, &n_phdr)) {
		ret = -EINVAL;
		goto out;
	}
	/* .symtab has every function .dynsym has; .dynsym alone when stripped. */
	for (int pass = 0; pass < 2 && !added; pass++, want = SHT_DYNSYM) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (unsigned int)want)
				continue;
			ret = scan_table(elf, scn, &sh, n_phdr, kdev, ino, name, cfg);
			if (ret < 0)
				goto out;
			added += ret;
		}
	}
	ret = added;
out:
	elf_end(elf);
	return ret;
}

int fnrange__of_pid(int pid, const char *name, struct lt_stop_cfg *cfg)
{
	struct proc_maps maps = {};
	int added = 0, ret, err = procmaps__read(pid, &maps);

	if (err)
		return err;
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];
		struct file_id want = { .dev = m->dev, .ino = m->ino };
		bool seen = false;
		int fd;

		if (!m->executable || !m->ino || m->shared)
			continue;
		for (size_t j = 0; j < i && !seen; j++)
			seen = maps.v[j].executable && maps.v[j].ino == m->ino &&
			       maps.v[j].dev == m->dev;
		if (seen || safe_open__mapped(pid, m->start, m->end, m->deleted ? NULL : m->path,
					      &want, &fd))
			continue;
		ret = fnrange__of_fd(fd, kernel_dev(m->dev), m->ino, name, cfg);
		close(fd);
		if (ret == -ENOSPC) {
			added = ret;
			break;
		}
		if (ret > 0)
			added += ret;
	}
	procmaps__free(&maps);
	return added;
}

/* One file of this namespace (symbolic links followed). */
static int of_path(const char *path, const char *name, struct lt_stop_cfg *cfg)
{
	struct stat st;
	int fd, ret;

	ret = safe_open(AT_FDCWD, path, SAFE_FOLLOW, NULL, &fd);
	if (ret)
		return ret;
	if (fstat(fd, &st))
		ret = -errno;
	else
		ret = fnrange__of_fd(fd, kernel_dev(st.st_dev), st.st_ino, name, cfg);
	close(fd);
	return ret;
}

int fnrange__of_command(const char *path, const char *name, struct lt_stop_cfg *cfg)
{
	struct ld_list list;
	int added, ret;

	added = of_path(path, name, cfg);
	if (added < 0)
		return added;
	if (ldlist__read(path, &list))
		return added;
	for (size_t i = 0; i < list.n; i++) {
		ret = of_path(list.paths[i], name, cfg);
		if (ret == -ENOSPC) {
			added = ret;
			break;
		}
		if (ret > 0)
			added += ret;
	}
	ldlist__free(&list);
	return added;
}
