// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * lastref_out.c - the JSON document of `leaktop lastref` (lastref_out.h): its verdicts as the
 * snapshot writes them (snapshot__lastref).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "view/lastref_out.h"
#include "view/snapshot.h"

int lastref_out__write(const char *path, int pid, const char *site, int watchpoints,
		       const struct lastref_result *v, size_t n)
{
	json_t *arr = json_array(), *doc;

	for (size_t i = 0; i < n; i++)
		json_array_append_new(arr, snapshot__lastref(&v[i]));
	doc = json_pack("{s:s, s:s, s:i, s:o, s:o}", "schema", "leaktop.lastref/1",
			"leaktop_version", LEAKTOP_VERSION, "pid", pid, "site", snapshot__string(site),
			"lastref", arr);
	if (!doc)
		return -ENOMEM;
	json_object_set_new(doc, "watchpoints", watchpoints < 0 ? json_null() :
			    json_boolean(watchpoints));
	return snapshot__write_doc(path, doc);
}
