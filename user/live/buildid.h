/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * buildid.h - the GNU build id of a module file on this machine, for exports that name the
 * binaries (pprof mappings).  Reading files is the live side's job; views get this as a
 * function in their options.
 */
#ifndef LEAKTOP_BUILDID_H
#define LEAKTOP_BUILDID_H

/*
 * The build id of the file at path as lower-case hex (malloc'd), or NULL: not an absolute
 * path, unreadable, not a regular file, no build id, or (files_not_after_s > 0) modified
 * after that time (Unix seconds), so not the binary that ran.
 */
char *buildid__of_file(const char *path, double files_not_after_s);

#endif
