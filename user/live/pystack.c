// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * pystack.c - the Python frames of a stored stack (bpf/python.bpf.c: words after its native
 * frames) resolved from what BPF copied of their code objects (py_codes, through the
 * collector) and put in place among the native frames (core/pyframe.c).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "core/pyframe.h"
#include "live/pystack.h"

uint32_t pystack__n_native(const uint64_t *ips, uint32_t n)
{
	uint32_t i = 0;

	while (i < n && !(ips[i] & LT_PY_FRAME_TAG))
		i++;
	return i;
}

/*
 * Python frame f of process tgid's stack from its word ip (bpf/leaktop.h): the code object's
 * name, file and the line of its instruction, as BPF copied them (unknown when it did not).
 */
static void resolve_python(struct collector *c, uint32_t tgid, uint64_t ip,
			   struct sym_frame *f)
{
	static struct lt_py_code code;
	uint64_t addr = ip & LT_PY_ADDR_MASK;
	uint32_t lasti = (ip >> LT_PY_LASTI_SHIFT) & LT_PY_LASTI_MAX;
	char buf[4 * LT_PY_STR_LEN + 1];

	*f = (struct sym_frame){ .addr = addr, .python = true };
	if (collector__py_code(c, tgid, addr, &code))
		return;
	if (code.qualname_len && code.qualname_len <= LT_PY_STR_LEN &&
	    pyframe__str(code.qualname_kind, code.qualname, code.qualname_len, buf, sizeof(buf)))
		f->symbol = strdup(buf);
	if (code.filename_len && code.filename_len <= LT_PY_STR_LEN &&
	    pyframe__str(code.filename_kind, code.filename, code.filename_len, buf, sizeof(buf)))
		f->file = strdup(buf);
	if (code.linetable_len <= LT_PY_LINETABLE_LEN)
		f->line = pyframe__line(code.linetable, code.linetable_len, code.firstlineno, lasti);
}

int pystack__merge(struct collector *c, uint32_t tgid, const uint64_t *ips, uint32_t n_native,
		   uint32_t n, struct sym_frame **f)
{
	uint32_t n_py = n - n_native;
	struct sym_frame *py = calloc(n_py, sizeof(*py)), *out = calloc(n, sizeof(*out));
	bool *entry = calloc(n_py, sizeof(*entry));

	if (!py || !out || !entry) {
		free(py);
		free(out);
		free(entry);
		return -ENOMEM;
	}
	for (uint32_t k = 0; k < n_py; k++) {
		resolve_python(c, tgid, ips[n_native + k], &py[k]);
		entry[k] = ips[n_native + k] & LT_PY_FRAME_ENTRY;
	}
	pyframe__merge(*f, n_native, py, entry, n_py, out);
	free(*f);
	free(py);
	free(entry);
	*f = out;
	return 0;
}
